// The hook as Claude Code runs it: a real `sh -c <command>` from the --settings JSON, the payload on stdin,
// the environment the adapter sets. Runs the built code (`npm run build` first; `npm test` does).

import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { buildClaudeHookSettings } from '../../src/hook/claude-hook-settings.js';
import { HOOK_FILES } from '../../src/hook/post-tool-use.js';
import { runProcess, type ProcessRun } from '../helpers/processes.js';
import { additionalContextOf, bashPayload, makeTempDir, readJsonLines, writeFilePayload } from './support.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const builtHookMain = join(repoRoot, 'dist', 'src', 'hook', 'hook-main.js');
const shim = fileURLToPath(new URL('../fixtures/hook/goald-shim.mjs', import.meta.url));

function run(command: string, args: string[], stdin: string, env: NodeJS.ProcessEnv): Promise<ProcessRun> {
  return runProcess(command, args, { env, input: stdin });
}

beforeAll(() => {
  if (!existsSync(builtHookMain)) throw new Error(`${builtHookMain} is missing: run \`npm run build\` first (npm test does)`);
});

describe('as Claude Code runs it', () => {
  test('sh -c runs the --settings command; every 3rd call answers, the rest print nothing', async () => {
    // goald installed under a path with a space and a quote: the settings must quote it for the shell.
    const root = await makeTempDir();
    const installDir = join(root, "Jo's tools", 'goald');
    await mkdir(installDir, { recursive: true });
    const goaldEntry = join(installDir, 'bin.mjs');
    await copyFile(shim, goaldEntry);
    const settings = JSON.parse(buildClaudeHookSettings({ goaldCommand: [process.execPath, goaldEntry] })) as {
      hooks: { PostToolUse: Array<{ matcher: string; hooks: Array<{ command: string }> }> };
    };
    const command = settings.hooks.PostToolUse[0]?.hooks[0]?.command ?? '';

    const stateDir = join(root, 'state', 'turn-1.hook');
    const env = {
      PATH: process.env.PATH,
      GOALD_TEST_HOOK_MAIN: builtHookMain,
      GOALD_HOOK_STATE_DIR: stateDir,
      GOALD_CONDITION: 'Make the parser handle empty input',
      GOALD_RECITE_EVERY: '3',
    };
    const runs: ProcessRun[] = [];
    const write = writeFilePayload('src/parser.ts');
    for (const payload of [write, write, write, bashPayload('npm test')]) {
      runs.push(await run('/bin/sh', ['-c', command], payload, env));
    }

    expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    expect(runs.map((r) => r.stderr)).toEqual(['', '', '', '']);
    expect(runs.map((r) => r.stdout === '')).toEqual([true, true, false, true]);
    const context = additionalContextOf(runs[2]?.stdout ?? '') ?? '';
    const lines = context.split('\n');
    expect(lines[0]).toBe('[System meta · not a user message]');
    expect(lines[1]).toMatch(/^ATTENTION — drift 0\.\d\d: you wrote src\/parser\.ts 3 times in the last 10 tool calls/);
    expect(context).toContain('=== ORIGINAL TASK ===\nMake the parser handle empty input\n');
    expect(await readJsonLines(join(stateDir, HOOK_FILES.toolCalls))).toHaveLength(4);
  });

  test('hooks running at the same time each count once: one answer per 3 calls, none lost or doubled', async () => {
    // Claude Code may run tools, and so their hooks, in parallel.
    const stateDir = join(await makeTempDir(), 'turn-1.hook');
    const env = { PATH: process.env.PATH, GOALD_HOOK_STATE_DIR: stateDir, GOALD_RECITE_EVERY: '3' };
    const runs = await Promise.all(
      Array.from({ length: 9 }, (_, index) => run(process.execPath, [builtHookMain, 'post-tool-use'], bashPayload(`echo ${index}`), env)),
    );
    expect(runs.every((r) => r.code === 0 && r.stderr === '')).toBe(true);
    expect(runs.filter((r) => r.stdout !== '')).toHaveLength(3);
    expect(await readJsonLines(join(stateDir, HOOK_FILES.toolCalls))).toHaveLength(9);
    expect(await readJsonLines(join(stateDir, HOOK_FILES.drift))).toHaveLength(3);
  });

  test('garbage on stdin: exit 0, nothing on stdout or stderr', async () => {
    const stateDir = join(await makeTempDir(), 'turn-1.hook');
    const result = await run(process.execPath, [builtHookMain, 'post-tool-use'], '\u0000garbage{{', {
      PATH: process.env.PATH,
      GOALD_HOOK_STATE_DIR: stateDir,
      GOALD_RECITE_EVERY: '1',
    });
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(existsSync(join(stateDir, HOOK_FILES.errors))).toBe(true);
  });

  test('no GOALD_HOOK_STATE_DIR: exit 0, nothing printed', async () => {
    const result = await run(process.execPath, [builtHookMain, 'post-tool-use'], bashPayload('ls'), {
      PATH: process.env.PATH,
      GOALD_RECITE_EVERY: '1',
    });
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  test('an unknown hook name is a usage error (exit 2) that names the hooks', async () => {
    const result = await run(process.execPath, [builtHookMain, 'pre-tool-use'], '', { PATH: process.env.PATH });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('goald hook: unknown hook "pre-tool-use"; expected one of: post-tool-use\n');
  });
});
