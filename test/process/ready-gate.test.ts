// The gate a ready leader's shell waits at (process/ready-leader.ts), run as it is, without a sandbox: a
// short script is read line by line, a long one for a command with no stdin in one go by `head -c`, by
// the lines again where there is no `head`, and a script cut short runs nothing.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { READ_IN_ONE_GO_MIN_BYTES, READY_GATE, execScript } from '../../src/process/ready-leader.js';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'goald-gate-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the gate in `dir` with `env`, writes `input` to it and ends its stdin; resolves with its exit code. */
async function runGate(input: string, env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' }): Promise<number | null> {
  const shell = spawn('/bin/sh', ['-c', READY_GATE], { cwd: dir, env, stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  shell.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  shell.stdin.end(input);
  const code = await new Promise<number | null>((resolve) => shell.on('close', resolve));
  if (code !== 0 && code !== 125) throw new Error(`the gate exited ${code}: ${stderr}`);
  return code;
}

// The command the scripts exec: writes its argument and the exported value, so a test sees both arrived whole.
const REPORT = ['-c', 'printf "%s" "$1" > arg.txt; printf "%s" "$LONG" > env.txt', 'sh'];
const longValue = (bytes: number): string => Array.from({ length: Math.ceil(bytes / 40) }, (_, i) => `line ${i}: it's "quoted" $HOME \`x\` \\`).join('\n');

describe('the ready gate', () => {
  it('runs a long script for a command with no stdin read in one go, argument and environment intact', async () => {
    const value = longValue(READ_IN_ONE_GO_MIN_BYTES * 4);
    const script = execScript('/bin/sh', [...REPORT, value], { LONG: value, PATH: process.env.PATH }, 'ignore');
    const [lines = '', bytes = ''] = script.slice(0, script.indexOf('\n')).split(' ');
    expect(Number(bytes)).toBeGreaterThan(0);
    // A line count of 0: only `head -c` can have read it (the line loop would read nothing and run nothing).
    expect(await runGate(`0 ${bytes}${script.slice(script.indexOf('\n'))}`)).toBe(0);
    expect(await readFile(path.join(dir, 'arg.txt'), 'utf8')).toBe(value);
    expect(await readFile(path.join(dir, 'env.txt'), 'utf8')).toBe(value);
    expect(Number(lines)).toBe(script.split('\n').length - 2);
  });

  it('reads the same script by its lines where the sandbox has no head', async () => {
    const value = longValue(READ_IN_ONE_GO_MIN_BYTES * 2);
    // No `head` on this PATH: the command is named by its full path, as goald names every agent's.
    const script = execScript('/bin/sh', [...REPORT, value], { LONG: value, PATH: dir }, 'ignore');
    expect(script.slice(0, script.indexOf('\n'))).toMatch(/^\d+ [1-9]\d*$/); // long: `head -c` were there one
    expect(await runGate(script, { PATH: dir })).toBe(0);
    expect(await readFile(path.join(dir, 'arg.txt'), 'utf8')).toBe(value);
    expect(await readFile(path.join(dir, 'env.txt'), 'utf8')).toBe(value);
  });

  it('leaves what follows a script for a command with stdin to that command, however long the script', async () => {
    const value = longValue(READ_IN_ONE_GO_MIN_BYTES * 2);
    const script = execScript('/bin/sh', ['-c', 'cat > stdin.txt; printf "%s" "$LONG" > env.txt'], { LONG: value, PATH: process.env.PATH }, 'pipe');
    expect(script.slice(0, script.indexOf('\n'))).toMatch(/^\d+ 0$/); // by the lines: a `head` may read past its count
    expect(await runGate(`${script}the prompt\non stdin\n`)).toBe(0);
    expect(await readFile(path.join(dir, 'stdin.txt'), 'utf8')).toBe('the prompt\non stdin\n');
    expect(await readFile(path.join(dir, 'env.txt'), 'utf8')).toBe(value);
  });

  it('runs nothing of a long script cut short, nor of one without its end mark', async () => {
    const value = longValue(READ_IN_ONE_GO_MIN_BYTES * 2);
    const script = execScript('/bin/sh', [...REPORT, value], { LONG: value, PATH: process.env.PATH }, 'ignore');
    expect(await runGate(script.slice(0, script.length - 200))).toBe(125);
    const header = script.slice(0, script.indexOf('\n'));
    const unmarked = script.slice(script.indexOf('\n') + 1).replace('#goald:end', '#goald:eNd');
    expect(await runGate(`${header}\n${unmarked}`)).toBe(125);
    expect(existsSync(path.join(dir, 'arg.txt'))).toBe(false);
  });
});
