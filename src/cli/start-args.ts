// `goald start` without commander: bin.ts routes a start line here, so a start does not load commander
// and build the CLI's thirty commands (~5 ms of a foreground start's time to its first agent, against
// ~1.5 ms for this). Node's own util.parseArgs reads the line from the start options' table into the raw
// options commander gives the start action (main.ts), defaults included. Only the plain forms are taken;
// anything commander could read otherwise returns null, and the full CLI parses it (or reports what is
// wrong): --help, an unknown flag, a missing value, a value that starts with "-", a short option with its
// value attached, `--`, a second positional argument, a value not among an option's choices.
// test/cli/start-args.test.ts holds both readings to the same answer, on listed and on generated lines.

import { parseArgs, type ParseArgsConfig } from 'node:util';

import { START_COMMAND_SWITCHES, START_OPTIONS } from '../config/start-options.js';
import { processIO, type CliIO } from './io.js';
import { reportGoaldError } from './report-error.js';

/** The condition and commander's raw options of a `goald start` line. */
export interface StartArgs {
  condition: string | undefined;
  options: Record<string, unknown>;
}

/** How one flag lands in the raw options, the way commander reads it. */
interface FlagReading {
  key: string;
  takesValue: boolean;
  /** Repeatable: the values in order, [] when not given. */
  list: boolean;
  /** A `--no-x` flag: `x` is true unless given (false when given, or the value when it takes one). */
  negated: boolean;
  choices?: readonly string[];
}

// By parseArgs's name of each flag (its long form without the dashes).
const READINGS = new Map<string, FlagReading>();
const PARSE_OPTIONS: NonNullable<ParseArgsConfig['options']> = {};
for (const option of [...START_OPTIONS, ...START_COMMAND_SWITCHES]) {
  const name = option.flag.slice(2);
  const takesValue = 'placeholder' in option;
  const list = 'kind' in option && option.kind === 'list';
  READINGS.set(name, {
    key: option.key,
    takesValue,
    list,
    negated: option.flag.startsWith('--no-'),
    ...('choices' in option ? { choices: option.choices } : {}),
  });
  PARSE_OPTIONS[name] = {
    type: takesValue ? 'string' : 'boolean',
    ...(list ? { multiple: true } : {}),
    ...('short' in option && option.short !== undefined ? { short: option.short.slice(1) } : {}),
  };
}

/** Reads `args` (after `start`) as commander would, or returns null when only commander should read them. */
export function parseStartArgs(args: readonly string[]): StartArgs | null {
  let tokens: NonNullable<ReturnType<typeof parseArgs>['tokens']>;
  try {
    ({ tokens } = parseArgs({ args: [...args], options: PARSE_OPTIONS, strict: true, allowPositionals: true, tokens: true }));
  } catch {
    return null; // an unknown flag, a missing value, a value that looks like a flag, --help
  }
  const options: Record<string, unknown> = {};
  const lists = new Map<string, string[]>();
  for (const reading of READINGS.values()) {
    if (reading.list) lists.set(reading.key, []);
    else if (reading.negated) options[reading.key] = true;
  }
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'option-terminator') return null;
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    const reading = READINGS.get(token.name);
    // `-Cdir` and `-C=dir`: commander's reading of an attached short value differs; it decides.
    if (reading === undefined || (token.inlineValue === true && !token.rawName.startsWith('--'))) return null;
    if (!reading.takesValue) {
      options[reading.key] = !reading.negated;
      continue;
    }
    const value = token.value;
    if (value === undefined || (reading.choices !== undefined && !reading.choices.includes(value))) return null;
    if (reading.list) lists.get(reading.key)?.push(value);
    else options[reading.key] = value;
  }
  if (positionals.length > 1) return null;
  return { condition: positionals[0], options: { ...options, ...Object.fromEntries(lists) } };
}

/** Runs `goald start <args>` when its line is a plain one; resolves with the exit code, or null (the full CLI's). */
export async function runPlainStart(args: readonly string[], io: CliIO = processIO): Promise<number | null> {
  const start = parseStartArgs(args);
  if (start === null) return null;
  try {
    const { runStartCommand } = await import('./commands/start.js');
    return await runStartCommand(start.condition, start.options, io);
  } catch (error) {
    return reportGoaldError(error, io);
  }
}
