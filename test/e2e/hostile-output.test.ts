// End to end: a hostile agent names a file with an OSC sequence and prints CSI sequences, and the
// evaluator's reason carries one too; nothing goald prints about it (progress lines, the final box,
// status, show, history, logs) holds a raw ESC or BEL byte, and --json stays JSON.

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines } from '../helpers/run-goald.js';

// Any byte a terminal acts on: C0 controls but \t and \n, DEL, and C1 controls.
// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

// Names a file so that `ls` would retitle the terminal, clears the screen in its output, and exits.
const HOSTILE_AGENT = `
import { writeFileSync } from 'node:fs';
writeFileSync('\\u001b]0;pwned\\u0007evil.txt', 'x\\n');
process.stdout.write('\\u001b[2J\\u001b[H\\u001b[31mall tests pass\\u001b[0m\\r\\n');
`;

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

describe('terminal output from a hostile agent', () => {
  it('prints file names, verdict reasons and agent text as escaped text everywhere', async () => {
    llm.reset();
    llm.openai.setDefault({ achieved: true, blocked: false, reason: 'met \u001b]0;owned\u0007 \u001b[1Adone', remaining: [] });
    const repo = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const sandbox = await goaldSandbox();
    const agent = path.join(sandbox.root, 'hostile.mjs');
    await writeFile(agent, HOSTILE_AGENT);
    const env = { OPENAI_API_KEY: 'sk-test-not-a-secret', OPENAI_BASE_URL: llm.openaiBaseURL };
    const args = ['start', 'make evil.txt', '--foreground', '--cooldown', '0', '-C', repo.dir, '--check', 'ls | grep -q evil', '--agent', `node ${agent}`, '--evaluator', 'openai:judge-model'];

    const run = await sandbox.run(args, { env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(RAW_CONTROL.test(run.stdout)).toBe(false);
    expect(run.stdout).toContain('\\u001b]0;pwned\\u0007evil.txt'); // the final box's files, as text
    expect(run.stdout).toContain('met \\u001b]0;owned\\u0007 \\u001b[1Adone'); // the progress line's verdict

    const history = parseJsonLines((await sandbox.run(['history', '--json'])).stdout)[0] as { goals: Array<{ id: string }> };
    const id = history.goals[0]?.id ?? '';
    for (const argv of [['status', id], ['show', id], ['history'], ['logs', id]]) {
      const shown = await sandbox.run(argv);
      expect(shown.code, `${argv.join(' ')}: ${shown.stderr}`).toBe(0);
      expect(RAW_CONTROL.test(shown.stdout + shown.stderr), argv.join(' ')).toBe(false);
      if (argv[0] === 'show' || argv[0] === 'status') expect(shown.stdout).toContain('\\u001b]0;pwned\\u0007evil.txt');
      if (argv[0] === 'logs') expect(shown.stdout).toContain('met \\u001b]0;owned');
    }

    // --json stays JSON, with the same values.
    const fresh = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const json = await sandbox.run([...args.map((arg) => (arg === repo.dir ? fresh.dir : arg)), '--json'], { env });
    expect(RAW_CONTROL.test(json.stdout)).toBe(false);
    const turn = parseJsonLines(json.stdout).find((event) => event.type === 'turn.finished');
    expect((turn?.verdict as { reason?: string } | undefined)?.reason).toBe('met \u001b]0;owned\u0007 \u001b[1Adone');
  });
});
