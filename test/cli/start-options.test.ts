// Argument parsing of `goald start` through the built binary: every option of the start options' table
// reaches the setting it names (in this process and over the socket), bad values and unknown flags are one
// line and exit 2, and a typo never starts a daemon.

import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTING_OPTIONS } from '../../src/config/start-options.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, type GoaldRun, type GoaldSandbox } from '../helpers/run-goald.js';
import { allSampleArgs, sampleOf, settingAt } from './start-option-samples.js';

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

async function repo(): Promise<string> {
  return (await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true })).dir;
}

/** The stored settings of the goal a `--json` run reported, as `goald show --json` prints them. */
async function settingsOf(sandbox: GoaldSandbox, run: GoaldRun): Promise<unknown> {
  const id = parseJsonLines(run.stdout).at(-1)?.id;
  expect(typeof id).toBe('string');
  const shown = await sandbox.run(['show', String(id), '--json']);
  expect(shown.code).toBe(0);
  const parsed: unknown = JSON.parse(shown.stdout);
  return settingAt(parsed, 'goal.settings');
}

describe('every start option reaches the setting it names', () => {
  it.each([
    ['in this process', '--foreground'],
    ['through the daemon (the socket request)', '--wait'],
  ])('%s', async (_how, mode) => {
    llm.reset();
    llm.openai.setDefault({ achieved: true, blocked: false, reason: 'done', remaining: [] });
    const sandbox = await goaldSandbox();
    const env = { OPENAI_API_KEY: 'sk-test-not-a-secret', OPENAI_BASE_URL: llm.openaiBaseURL };
    const run = await sandbox.run(['start', 'every option arrives', mode, '-C', await repo(), '--json', ...allSampleArgs()], { env });
    expect(run.stderr).toBe('');
    expect(parseJsonLines(run.stdout).at(-1)?.type).toBe('goal.finished');
    const settings = await settingsOf(sandbox, run);
    for (const option of SETTING_OPTIONS) {
      expect({ flag: option.flag, value: settingAt(settings, option.setting) }).toEqual({
        flag: option.flag,
        value: sampleOf(option).expected,
      });
    }
  });

  it('without the options, no setting has its sample value (so the test above can fail)', async () => {
    const sandbox = await goaldSandbox();
    // The test helper turns the sandbox off for every goal (GOALD_SANDBOX=off); here the default must show.
    const run = await sandbox.run(['start', 'defaults', '--foreground', '-C', await repo(), '--json', '--agent', 'true', '--check', 'true'], { env: { GOALD_SANDBOX: '' } });
    expect(run.code).toBe(0);
    const settings = await settingsOf(sandbox, run);
    for (const option of SETTING_OPTIONS) {
      expect({ flag: option.flag, value: settingAt(settings, option.setting) }).not.toEqual({
        flag: option.flag,
        value: sampleOf(option).expected,
      });
    }
  });
});

/** Runs `goald start` (daemon mode) with one bad argument; asserts exit 2, one stderr line, and no daemon. */
async function expectRefused(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const sandbox = await goaldSandbox();
  const run = await sandbox.run(['start', 'x', '-C', await repo(), '--agent', 'true', '--check', 'true', ...args], { env });
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^goald: /);
  // Validation happens before the daemon is asked: nothing was started or written.
  expect(existsSync(sandbox.home)).toBe(false);
  return lines[0] ?? '';
}

// A bad value per value option, and what the one-line error says to do about it.
const BAD_VALUES: Record<string, [string, RegExp]> = {
  '--agent': ['  ', /--agent: the command is empty — pass a shell command/],
  '--adapter': ['cursor', /'--adapter <name>' argument 'cursor' is invalid\. Allowed choices are command, claude-code/],
  '--model': ['  ', /--model: the model is empty — pass a model, e\.g\. --model openai:qwen2\.5-coder/],
  '--check': [' ', /--check: the command is empty — pass a shell command/],
  '--evaluator': ['gpt-4', /--evaluator: "gpt-4" is not an evaluator — use openai:<model>, anthropic:<model> or none/],
  '--max-turns': ['0', /--max-turns: "0" is not a positive whole number — use a whole number greater than 0/],
  '--token-budget': ['12abc', /--token-budget: "12abc" is not a positive whole number — use a whole number/],
  '--turn-token-limit': ['-1', /--turn-token-limit: "-1" is not a positive whole number — use a whole number/],
  '--turn-timeout': ['0', /--turn-timeout: must be longer than 0 — use a duration such as 90s/],
  '--cost-budget': ['$5', /--cost-budget: "\$5" is not a number of 0 or more — use a number such as 5/],
  '--wall-clock': ['forever', /--wall-clock: "forever" is not a duration — use a number with ms, s, m, h or d/],
  '--cooldown': ['5 minutes', /--cooldown: "5 minutes" is not a duration — use a number with ms, s, m, h or d/],
  '--no-progress': ['0', /--no-progress: "0" is not a positive whole number — use a whole number greater than 0/],
};

describe('bad values: exit 2 and one line naming the flag and the fix', () => {
  const valued = SETTING_OPTIONS.filter((option) => option.kind !== 'switch');

  it('every option that takes a value has a bad-value case', () => {
    expect(Object.keys(BAD_VALUES).sort()).toEqual(valued.map((option) => option.flag).sort());
  });

  it.each(valued.map((option) => option.flag))('%s', async (flag) => {
    const [value, says] = BAD_VALUES[flag] ?? ['', /no case/];
    expect(await expectRefused([flag, value])).toMatch(says);
  });

  it.each(valued.map((option) => option.flag))('%s without its value', async (flag) => {
    expect(await expectRefused([flag])).toMatch(new RegExp(`option '${flag} <\\w+>' argument missing \\(see goald --help\\)`));
  });

  it('a bad GOALD_* variable names the variable', async () => {
    expect(await expectRefused([], { GOALD_TURN_TIMEOUT: '30' })).toMatch(/GOALD_TURN_TIMEOUT: "30" is not a duration — use a number/);
  });
});

describe('unknown flags and arguments: exit 2, one line', () => {
  it('an unknown flag', async () => {
    expect(await expectRefused(['--frobnicate'])).toBe("goald: unknown option '--frobnicate' (see goald --help)");
  });

  it('a near miss suggests the flag on the same line', async () => {
    expect(await expectRefused(['--max-turn', '5'])).toBe(
      "goald: unknown option '--max-turn' (Did you mean --max-turns?) (see goald --help)",
    );
  });

  it('a second condition', async () => {
    expect(await expectRefused(['extra'])).toMatch(/too many arguments for 'start'/);
  });

  it('an unknown command', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['frobnicate']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("goald: unknown command 'frobnicate' (see goald --help)\n");
  });
});
