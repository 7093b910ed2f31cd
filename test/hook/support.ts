// Helpers for the hook tests: temp state directories and Claude Code PostToolUse payloads.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { isErrnoCode } from '../../src/errno.js';

/** Where the fake Claude Code session works; file paths under it are recorded relative to it. */
const WORKSPACE = '/home/dev/project';

/** A fresh temp directory, removed when the test finishes. */
export async function makeTempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'goald-hook-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A PostToolUse payload as Claude Code sends it on the hook's stdin. */
export function postToolUsePayload(toolName: string, toolInput: Record<string, unknown>): string {
  return JSON.stringify({
    session_id: '9f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b',
    transcript_path: '/home/dev/.claude/projects/-home-dev-project/9f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b.jsonl',
    cwd: WORKSPACE,
    permission_mode: 'acceptEdits',
    hook_event_name: 'PostToolUse',
    tool_name: toolName,
    tool_input: toolInput,
    tool_response: toolName === 'Bash' ? { stdout: 'ok\n', stderr: '', interrupted: false } : { type: 'update', filePath: toolInput.file_path },
    tool_use_id: `toolu_01${Math.random().toString(36).slice(2, 12)}`,
  });
}

export const writeFilePayload = (path: string): string =>
  postToolUsePayload('Write', { file_path: `${WORKSPACE}/${path}`, content: 'export {};\n' });
export const bashPayload = (command: string): string => postToolUsePayload('Bash', { command, description: 'run it' });
export const readFilePayload = (path: string): string => postToolUsePayload('Read', { file_path: `${WORKSPACE}/${path}` });

/** The JSON lines of a file, parsed; [] when it does not exist. */
export async function readJsonLines(path: string): Promise<unknown[]> {
  try {
    return (await readFile(path, 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as unknown);
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return [];
    throw error;
  }
}

/** The additionalContext of a hook's stdout, or null when it printed nothing. */
export function additionalContextOf(stdout: string): string | null {
  if (stdout === '') return null;
  const parsed = JSON.parse(stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
  return parsed.hookSpecificOutput.additionalContext;
}
