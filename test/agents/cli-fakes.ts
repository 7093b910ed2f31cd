// The fake `gemini` and `aider` executables (test/fixtures/agents/bin) and recorded outputs
// (test/fixtures/streams), for the adapter tests: real processes found on PATH, replaying real output.

import { readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import type { AgentAdapter, TurnInput, TurnResult } from '../../src/agents/types.js';
import { killQuietly, makeTempDir } from './support.js';

const fakeBinDir = fileURLToPath(new URL('../fixtures/agents/bin', import.meta.url));

/** Absolute path of a recorded output in test/fixtures/streams. */
export function streamPath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/streams/${name}`, import.meta.url));
}

/** An environment with the fake CLIs first on PATH, plus the FAKE_CLI_* knobs. */
export function fakeCliEnv(knobs: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${fakeBinDir}${delimiter}${process.env.PATH ?? ''}`, CLAUDECODE: '1', ...knobs };
}

/** A turn's input in a fresh temp workspace. */
export async function makeTurnInput(overrides: Partial<TurnInput> = {}): Promise<TurnInput> {
  const dir = await makeTempDir();
  return {
    goalId: 'g-7',
    turn: 2,
    condition: 'goald status --json prints JSON',
    prompt: 'Add a --json flag to goald status.',
    workspace: dir,
    promptPath: join(dir, 'goal', 'turn-2.prompt.txt'),
    transcriptPath: join(dir, 'goal', 'turn-2.log'),
    timeoutMs: 0,
    turnTokenLimit: 0,
    ...overrides,
  };
}

/** Runs one turn; any group it leaves behind is killed when the test finishes. */
export async function runAdapterTurn(agent: AgentAdapter, input: TurnInput, signal = new AbortController().signal): Promise<TurnResult> {
  return agent.runTurn(
    {
      ...input,
      onSpawn: (pid) => {
        onTestFinished(() => killQuietly(-pid));
      },
    },
    signal,
  );
}

/** What the fake CLI recorded about how it was run. */
export async function readRecord(path: string): Promise<{ cli: string; argv: string[]; stdin: string; cwd: string; env: Record<string, string> }> {
  return JSON.parse(await readFile(path, 'utf8')) as { cli: string; argv: string[]; stdin: string; cwd: string; env: Record<string, string> };
}
