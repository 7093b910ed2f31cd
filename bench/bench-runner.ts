// What the standalone benchmarks share: the goald executable, their statistics (median, rounding), their
// `--flag N` arguments, and the "run alone" entry that prints a bench's figures when its file is run directly with node.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** goald's bundle in dist/bundle/, beside dist/bench/: what `node <GOALD_BIN>` runs (the daemon, the tests). */
export const GOALD_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'bundle', 'bin.js');

/** The `goald` command users run (package.json's bin): bin/goald, which runs the bundle with `node`. */
export const GOALD_COMMAND = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'goald');

/**
 * The environment for goald runs under `dir`: a home and config of their own (`dir/h`, `dir/config`), no
 * GOALD_* or GIT_* variable nor API key of the caller's, and none of the node start-up options
 * (NODE_EXTRA_CA_CERTS parses a CA bundle, NODE_OPTIONS may preload) that weigh on every node process
 * alike, goald's and the baseline's. `extra` is added last.
 */
export function goaldBenchEnv(dir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GOALD_HOME: path.join(dir, 'h'), XDG_CONFIG_HOME: path.join(dir, 'config') };
  for (const name of Object.keys(env)) if ((name.startsWith('GOALD_') && name !== 'GOALD_HOME') || name.startsWith('GIT_') || name.endsWith('_API_KEY')) delete env[name];
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.NODE_OPTIONS;
  return { ...env, ...extra };
}

/** Runs `node <args>` with `env` to its exit; rejects, naming `what`, unless it exits 0. */
export async function runNodeToExit(args: readonly string[], env: NodeJS.ProcessEnv, what = `node ${args.join(' ')}`): Promise<void> {
  await runToExit(process.execPath, args, env, what);
}

/** Runs `goald <args>` (the command users run, GOALD_COMMAND) with `env` to its exit; rejects unless it exits 0. */
export async function runGoaldToExit(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  await runToExit(GOALD_COMMAND, args, env, `goald ${args.join(' ')}`);
}

async function runToExit(command: string, args: readonly string[], env: NodeJS.ProcessEnv, what: string): Promise<void> {
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (exitCode) => resolve(exitCode));
  });
  if (code !== 0) throw new Error(`${what} exited ${code}`);
}

/** The median of the samples (0 when there are none). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Rounds a figure to hundredths for printing. */
export function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Reads the positive number after `flag` in argv; undefined when absent or not a positive number. */
export function numberFlag(argv: string[], flag: string): number | undefined {
  const at = argv.indexOf(flag);
  const value = at === -1 ? undefined : Number(argv[at + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * Runs `main` with the command-line arguments when the module at `moduleUrl` is the one node was started
 * with (not when bench/run.ts imports it); an error is printed and the exit code is 70 (EX_SOFTWARE).
 */
export function runWhenMain(moduleUrl: string, main: (argv: string[]) => Promise<void>): void {
  const entry = process.argv[1];
  if (entry === undefined || moduleUrl !== pathToFileURL(entry).href) return;
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 70;
  });
}
