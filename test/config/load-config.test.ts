import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findJsonError } from '../../src/config/json-error-position.js';
import { findRepoRoot } from '../../src/config/json-schema.js';
import { loadConfigFile, parseConfigText } from '../../src/config/load-config.js';
import { resolveGoalSettings } from '../../src/config/resolve-settings.js';
import { GoaldError } from '../../src/errors.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'goald-config-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The GoaldError `run` throws (sync or async). */
async function errorOf(run: () => unknown): Promise<GoaldError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof GoaldError) return error;
    throw error;
  }
  throw new Error('expected a GoaldError');
}

describe('loadConfigFile', () => {
  it('returns null config for a missing file', async () => {
    const path = join(dir, 'goal.config.json');
    expect(await loadConfigFile(path)).toEqual({ config: null, path });
  });

  it('loads a valid file (with a byte-order mark)', async () => {
    const path = join(dir, 'goal.config.json');
    await writeFile(path, '\uFEFF{ "goal": "tests pass", "limits": { "maxTurns": 5, "turnTimeout": "10m" } }');
    expect(await loadConfigFile(path)).toEqual({
      config: { goal: 'tests pass', limits: { maxTurns: 5, turnTimeout: '10m' } },
      path,
    });
  });

  it('reports an unreadable file as a config error', async () => {
    if (process.getuid?.() === 0) return; // root reads anything
    const path = join(dir, 'goal.config.json');
    await writeFile(path, '{}');
    await chmod(path, 0o000);
    const error = await errorOf(() => loadConfigFile(path));
    expect(error.code).toBe('config');
    expect(error.message).toBe(`${path}: cannot be read (EACCES)`);
  });
});

describe('invalid JSON', () => {
  it.each([
    ['{\n  "goal": "x",\n}\n', 3, 1, 'unexpected "}" after ",": JSON allows no trailing comma'],
    ['{\n  "goal": }', 2, 11, 'unexpected "}", expected a value'],
    ['{ goal: "x" }', 1, 3, 'unexpected "g", expected a "quoted" property name'],
    ['{ "goal": "x" ', 1, 15, 'unexpected end of file, expected "," or "}"'],
    ['', 1, 1, 'unexpected end of file, expected a value'],
    ['{ "a": tru }', 1, 11, 'unexpected " ", expected true'],
    ['{ "a": "line\nbreak" }', 1, 13, 'unexpected control character "\\n" inside a string (escape it)'],
    ['{ "a": 1 } x', 1, 12, 'unexpected "x" after the end of the JSON value'],
    ["{ 'a': 1 }", 1, 3, 'unexpected "\'", expected a "quoted" property name'],
    ['[1, 2,]', 1, 7, 'unexpected "]" after ",": JSON allows no trailing comma'],
    ['{ "a": 01 }', 1, 9, 'unexpected "1", expected "," or "}"'],
    ['{ "a": "\\x" }', 1, 10, 'bad escape \\"x" inside a string'],
  ])('%j → line %d column %d', async (text, line, column, message) => {
    const path = '/w/goal.config.json';
    const error = await parseConfigText(text, path).then(
      () => undefined,
      (caught: unknown) => caught as GoaldError,
    );
    expect(error?.code).toBe('config');
    expect(error?.message).toBe(`${path}: invalid JSON at line ${line} column ${column}: ${message}`);
    expect(error?.message).not.toContain('\n');
    expect(error?.hint).toBe('fix the file or remove it');
  });

  it('the scanner accepts everything JSON.parse accepts', () => {
    for (const text of ['{}', '[]', '0', '-0.5e+10', '"\\u00e9\\n"', ' { "a" : [ true , false , null , {} ] } ', '1E3']) {
      expect(findJsonError(text)).toBeNull();
      expect(() => JSON.parse(text) as unknown).not.toThrow();
    }
  });
});

describe('schema errors', () => {
  const cases: [string, unknown, string][] = [
    ['unknown top-level key', { goals: 'x' }, 'goals: unknown key (did you mean goal?)'],
    ['unknown nested key, with suggestion', { limits: { maxTurn: 3 } }, 'limits.maxTurn: unknown key (did you mean maxTurns?)'],
    ['unknown key in a check', { checks: [{ run: 'x', cmd: 'y' }] }, 'checks.0.cmd: unknown key'],
    ['unknown key in a loop limit', { loops: [{ every: '1h', limits: { turnTimout: '1m' } }] }, 'loops.0.limits.turnTimout: unknown key (did you mean turnTimeout?)'],
    ['two unknown keys', { a: 1, b: 2 }, 'a: unknown key (and 1 more unknown keys)'],
    ['bad duration', { limits: { turnTimeout: '30 minutes' } }, 'limits.turnTimeout: expected a duration such as "90s" or "30m" (ms, s, m, h or d), or whole milliseconds'],
    ['negative duration', { limits: { cooldown: -1 } }, 'limits.cooldown: expected a duration such as "90s" or "30m" (ms, s, m, h or d), or whole milliseconds'],
    ['zero turns', { limits: { maxTurns: 0 } }, 'limits.maxTurns: expected a whole number of 1 or more'],
    ['missing check command', { checks: [{ name: 'tests' }] }, 'checks.0.run: is required'],
    ['bad adapter', { agent: { adapter: 'cursor' } }, 'agent.adapter: Invalid option: expected one of "command"|"claude-code"|"codex"|"gemini"|"aider"|"builtin"'],
    ['bad URL', { evaluator: { baseURL: 'localhost' } }, 'evaluator.baseURL: expected a URL such as http://127.0.0.1:8080/v1'],
    ['not an object', ['x'], '(root): expected a JSON object ({ ... })'],
    ['several problems', { goal: 1, mission: 2 }, 'goal: expected a string (and 1 more)'],
  ];

  it.each(cases)('%s', async (_name, value, expected) => {
    const path = '/w/goal.config.json';
    const error = await parseConfigText(JSON.stringify(value), path).then(
      () => undefined,
      (caught: unknown) => caught as GoaldError,
    );
    expect(error?.code).toBe('config');
    expect(error?.message).toBe(`${path}: ${expected}`);
    expect(error?.hint).toBe('see schema/goal.config.schema.json');
  });

  it('accepts loops and recitation (read by later features)', async () => {
    expect(
      (await parseConfigText(
        JSON.stringify({
          recitation: { everyToolCalls: 5 },
          loops: [{ every: '0 9 * * 1-5', goal: 'lint is clean', catchUp: 'skip', checks: [{ run: 'npm run lint' }] }],
        }),
        'x',
      )).loops?.[0]?.every,
    ).toBe('0 9 * * 1-5');
  });
});

describe("the repository's own goal.config.json", () => {
  const root = findRepoRoot(import.meta.url);

  it('passes its own schema', async () => {
    const { config } = await loadConfigFile(join(root, 'goal.config.json'));
    expect(config?.$schema).toBe('./schema/goal.config.schema.json');
    expect(config?.checks?.map((check) => check.name)).toEqual(['typecheck', 'tests']);
  });

  it('resolves to working settings that spell out the defaults', async () => {
    const { settings, warnings } = await resolveGoalSettings({
      workspace: root,
      flags: {},
      env: {},
      userConfigPath: join(dir, 'none.json'),
    });
    expect(warnings).toEqual([]);
    expect(settings.condition).toBe('npm test passes and the TypeScript build is clean');
    expect(settings.checks).toEqual([
      { name: 'typecheck', run: 'npm run typecheck', timeoutMs: 300_000 },
      { name: 'tests', run: 'npm test', timeoutMs: 900_000 },
    ]);
    expect(settings.agent.adapter).toBe('command');
    expect(settings.evaluator).toMatchObject({ provider: 'openai', model: 'gpt-4.1-mini' });
    const defaults = await resolveGoalSettings({
      condition: 'x',
      workspace: dir,
      flags: { agent: 'x', check: ['true'] },
      env: {},
      userConfigPath: join(dir, 'none.json'),
    });
    expect(settings.limits).toEqual(defaults.settings.limits);
  });

  it('names every key of the schema it documents', async () => {
    const text = await readFile(join(root, 'goal.config.json'), 'utf8');
    for (const key of ['maxTurns', 'tokenBudget', 'turnTokenLimit', 'turnTimeout', 'costBudget', 'wallClock', 'cooldown', 'repeatedDiff', 'oscillation', 'stagnation', 'evaluatorFailures', 'agentFailures', 'blockedVerdicts']) {
      expect(text).toContain(`"${key}"`);
    }
  });
});
