// `goald loop <every> [condition]`, `loop list`, `loop stop <loop>`, `loop run <loop>`, `loop sync`.

import path from 'node:path';
import type { LoopRecord } from '../../../state/types.js';
import { CONFIG_FILE_NAME } from '../../config/load-config.js';
import { connectIfRunning, ensureDaemon } from '../../daemon/auto-start.js';
import { resolveLoopRef } from '../../daemon/resolve-goal.js';
import { parseSchedule } from '../../daemon/schedule.js';
import { EXIT, GoaldError } from '../../errors.js';
import { resolveWorkspace } from '../../workspace/find-workspace.js';
import type { CliIO } from '../io.js';
import { clip } from '../../cut-text.js';
import { renderLoopRun } from '../render-loop-run.js';
import { forwardedEnv } from './start-daemon.js';
import { parseStartOptions, toStartFlags } from './start-request.js';

function describeNext(loop: LoopRecord): string {
  return loop.nextRunAt ? new Date(loop.nextRunAt).toISOString().replace('.000Z', 'Z') : '-';
}

/** `goald loop <every> [condition] [start options]`. */
export async function runLoopCreate(
  every: string,
  condition: string | undefined,
  rawOptions: Record<string, unknown>,
  io: CliIO,
): Promise<number> {
  const options = parseStartOptions(rawOptions);
  parseSchedule(every); // a bad schedule is reported before any daemon starts
  const dir = path.resolve(io.cwd, options.dir ?? '.');
  await resolveWorkspace(dir);
  const catchUp = options.catchUp ?? 'once';
  const client = await ensureDaemon(io.env);
  const loop = await client.createLoop({
    ...(condition === undefined ? {} : { condition }),
    dir,
    flags: toStartFlags(options),
    env: forwardedEnv(io.env),
    queue: false,
    every,
    catchUp,
  });
  if (options.json) io.out(JSON.stringify({ type: 'loop.created', loop }));
  else io.out(`loop ${loop.id} every ${loop.every} in ${loop.workspace}; next run ${describeNext(loop)}`);
  return EXIT.ok;
}

/** `goald loop list [--json]`. */
export async function runLoopList(options: { json?: boolean; all?: boolean }, io: CliIO): Promise<number> {
  const client = await connectIfRunning(io.env);
  let loops: LoopRecord[];
  if (client) loops = await client.listLoops();
  else {
    const { openStore, resolveGoaldHome } = await import('../../../state/index.js');
    loops = (await (await openStore(resolveGoaldHome(io.env))).read()).loops;
  }
  if (!options.all) loops = loops.filter((loop) => !loop.stopped);
  if (options.json) {
    io.out(JSON.stringify({ daemon: client !== null, loops }));
    return EXIT.ok;
  }
  if (loops.length === 0) {
    io.out('no loops (create one with: goald loop 30m "the tests pass")');
    return EXIT.ok;
  }
  for (const source of ['cli', 'config'] as const) {
    const group = loops.filter((loop) => loop.source === source);
    if (group.length === 0) continue;
    io.out(source === 'cli' ? 'created with goald loop:' : 'declared in goal.config.json:');
    for (const loop of group) {
      const last = loop.lastGoalId ? `last ${loop.lastGoalId} ${loop.lastOutcome ?? ''}`.trim() : 'never run';
      const waiting = loop.waiting ? ' · waiting' : '';
      const problem = loop.configError ? ` · config error: ${clip(loop.configError, 60)}` : '';
      io.out(
        `  ${loop.id}  every ${loop.every.padEnd(12)}  ${clip(loop.condition ?? '(goal from goal.config.json)', 40).padEnd(40)}  ${loop.workspace}  runs ${loop.runs} · skipped ${loop.skipped} · ${last} · next ${describeNext(loop)}${waiting}${loop.stopped ? ' · stopped' : ''}${problem}`,
      );
    }
  }
  if (!client) io.err('goald: the daemon is not running; loops fire only while it runs (goald daemon)');
  return EXIT.ok;
}

/** `goald loop stop <loop>`. */
export async function runLoopStop(ref: string, io: CliIO): Promise<number> {
  const client = await connectIfRunning(io.env);
  if (!client) {
    // Starting a daemon only to stop a loop would first fire its missed runs; an unknown id is still a usage error.
    const { openStore, resolveGoaldHome } = await import('../../../state/index.js');
    const { loops } = await (await openStore(resolveGoaldHome(io.env))).read();
    resolveLoopRef(loops, ref);
    throw new GoaldError('daemon-unreachable', 'the goald daemon is not running', 'start it with `goald daemon`, then stop the loop');
  }
  const loop = await client.deleteLoop(ref);
  io.out(`loop ${loop.id} stopped (its history stays: goald history --loop ${loop.id})`);
  return EXIT.ok;
}

/** `goald loop sync [-C dir] [--json]`: the daemon reads the workspace's declared loops now. */
export async function runLoopSync(options: { dir?: string; json?: boolean }, io: CliIO): Promise<number> {
  const dir = path.resolve(io.cwd, options.dir ?? '.');
  const workspace = await resolveWorkspace(dir); // a bad directory is reported before any daemon starts
  const client = await ensureDaemon(io.env);
  const loops = await client.syncLoops(dir);
  if (options.json) {
    io.out(JSON.stringify({ workspace: workspace.root, loops }));
    return EXIT.ok;
  }
  if (loops.length === 0) io.out(`no loops declared in ${path.join(workspace.root, CONFIG_FILE_NAME)}`);
  for (const loop of loops) io.out(`loop ${loop.id} every ${loop.every} in ${loop.workspace}; next run ${describeNext(loop)}`);
  return EXIT.ok;
}

/** `goald loop run <loop>`: fire now. */
export async function runLoopRun(ref: string, io: CliIO): Promise<number> {
  const client = await ensureDaemon(io.env);
  const { loop, outcome } = await client.runLoop(ref);
  io.out(renderLoopRun(loop, outcome));
  return outcome === 'skipped' ? EXIT.usage : EXIT.ok;
}
