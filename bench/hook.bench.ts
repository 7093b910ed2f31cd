// The PostToolUse hook's round trip against a bare `node -e 0` (issue 5: target ≤ 1.5×): Claude Code runs
// the hook after every tool call and waits for it, so its cost is node's start-up plus as little as
// possible. Run alone with `node dist/bench/hook.bench.js [--runs N]` after `npm run build`.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { median, numberFlag, round, runWhenMain } from './bench-runner.js';

export interface HookBenchResult {
  runs: number;
  /** Median wall time of one `goald hook post-tool-use` (see `via`), payload on stdin. */
  hookMs: number;
  /** Median wall time of `node -e 0`. */
  nodeMs: number;
  /** hookMs / nodeMs; the target is ≤ 1.5. */
  ratio: number;
  /** What hookMs measured: bin.js's `hook` route, or the hook entry alone while bin.js does not route it. */
  via: 'bin' | 'entry';
  /** Median wall time of `node dist/src/hook/hook-main.js post-tool-use`: the hook's own code path. */
  entryMs: number;
  /** entryMs / nodeMs. */
  entryRatio: number;
}

export const HOOK_RATIO_TARGET = 1.5;
// The built tree this file was compiled into: dist/bench/hook.bench.js → dist/.
const DEFAULT_DIST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// A typical payload: an Edit with its old and new strings and the tool's response.
const SAMPLE_PAYLOAD = JSON.stringify({
  session_id: '9f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b',
  transcript_path: '/home/dev/.claude/projects/-home-dev-project/9f1c2a4e.jsonl',
  cwd: '/home/dev/project',
  permission_mode: 'acceptEdits',
  hook_event_name: 'PostToolUse',
  tool_name: 'Edit',
  tool_input: {
    file_path: '/home/dev/project/src/cli/render-status.ts',
    old_string: 'return lines.join("\\n");',
    new_string: 'return options.json ? JSON.stringify(status) : lines.join("\\n");',
  },
  tool_response: { filePath: '/home/dev/project/src/cli/render-status.ts', structuredPatch: [], userModified: false },
  tool_use_id: 'toolu_01ABCDEFGHIJKLMNOPQRSTUV',
});

/** Measures the median hook round trip (bin.js route when wired, and the entry alone) against `node -e 0`. */
export async function benchHook(opts: { runs?: number; distDir?: string } = {}): Promise<HookBenchResult> {
  const runs = opts.runs ?? 21;
  const distDir = opts.distDir ?? DEFAULT_DIST_DIR;
  const bin = path.join(distDir, 'bundle', 'bin.js');
  const entry = path.join(distDir, 'src', 'hook', 'hook-main.js');
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);

  const root = await mkdtemp(path.join(tmpdir(), 'goald-hook-bench-'));
  try {
    // The default cadence (every 10th call reflects), as in a real turn.
    const env = {
      PATH: process.env.PATH,
      GOALD_HOOK_STATE_DIR: path.join(root, 'state'),
      GOALD_CONDITION: 'Add a --json flag to goald status',
    };
    const node = (): Promise<number> => timeSpawn(['-e', '0'], '', env);
    const viaEntry = (): Promise<number> => timeSpawn([entry, 'post-tool-use'], SAMPLE_PAYLOAD, env);
    const viaBin = (): Promise<number> => timeSpawn([bin, 'hook', 'post-tool-use'], SAMPLE_PAYLOAD, env);
    const via = existsSync(bin) && (await binRoutesHook(bin, root)) ? 'bin' : 'entry';

    // Warm up the page cache for node and every module on the path.
    for (let i = 0; i < 2; i++) {
      await node();
      await viaEntry();
      if (via === 'bin') await viaBin();
    }
    const nodeTimes: number[] = [];
    const entryTimes: number[] = [];
    const binTimes: number[] = [];
    // Interleaved so drift (other load, CPU frequency) weighs on every side alike.
    for (let i = 0; i < runs; i++) {
      nodeTimes.push(await node());
      entryTimes.push(await viaEntry());
      if (via === 'bin') binTimes.push(await viaBin());
    }
    const nodeMs = median(nodeTimes);
    const entryMs = median(entryTimes);
    const hookMs = via === 'bin' ? median(binTimes) : entryMs;
    return {
      runs,
      hookMs: round(hookMs),
      nodeMs: round(nodeMs),
      ratio: round(hookMs / nodeMs),
      via,
      entryMs: round(entryMs),
      entryRatio: round(entryMs / nodeMs),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

// Whether `bin.js hook post-tool-use` answers as the hook: with a cadence of 1 it must print the reflection.
async function binRoutesHook(bin: string, root: string): Promise<boolean> {
  const env = { PATH: process.env.PATH, GOALD_HOOK_STATE_DIR: path.join(root, 'probe'), GOALD_RECITE_EVERY: '1' };
  const { code, stdout } = await runNode([bin, 'hook', 'post-tool-use'], SAMPLE_PAYLOAD, env);
  return code === 0 && stdout.includes('"hookSpecificOutput"');
}

async function timeSpawn(args: string[], stdin: string, env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const { code } = await runNode(args, stdin, env);
  const elapsed = performance.now() - started;
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited with ${String(code)}`);
  return elapsed;
}

function runNode(
  args: string[],
  stdin: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
    child.stdin.on('error', () => {}); // `node -e 0` may exit before reading stdin
    child.stdin.end(stdin);
  });
}

async function main(argv: string[]): Promise<void> {
  const result = await benchHook({ runs: numberFlag(argv, '--runs') });
  const verdict = (ratio: number): string =>
    `ratio ${ratio} (${ratio <= HOOK_RATIO_TARGET ? 'within' : 'ABOVE'} the ${HOOK_RATIO_TARGET} target)`;
  const hookLabel = result.via === 'bin' ? 'bin.js hook' : 'hook (entry; bin.js does not route `hook` yet)';
  process.stdout.write(
    [
      `hook bench (node ${process.version})`,
      `  runs             ${result.runs}`,
      `  node -e 0        ${result.nodeMs} ms (median)`,
      `  ${hookLabel.padEnd(16)} ${result.hookMs} ms (median), ${verdict(result.ratio)}`,
      `  hook-main.js     ${result.entryMs} ms (median), ${verdict(result.entryRatio)}`,
      '',
    ].join('\n'),
  );
}

runWhenMain(import.meta.url, main);
