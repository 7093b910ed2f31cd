#!/usr/bin/env node
// The `goald` executable. `goald --version` answers before anything loads. `goald hook ...` runs on every
// tool call of a hooked agent, so it takes a minimal path that loads none of the CLI (commander, zod, the
// SDKs); `goald status` takes the fast path (fast-command.ts) and a plain `goald start` its own
// (start-args.ts), both without commander; everything else goes through the full CLI. No top-level
// await: the bundle users run (scripts/bundle.mjs) is CommonJS.

import { GOALD_VERSION } from '../version.js';

async function run(argv: readonly string[]): Promise<number> {
  if (argv[2] === 'hook') {
    const { main } = await import('../hook/hook-main.js');
    return main(argv.slice(3));
  }
  // The builtin agent's own process (adapter `builtin`), started by goald for each turn; not for users.
  if (argv[2] === 'agent') {
    const { main } = await import('../agents/builtin/agent-main.js');
    return main(argv.slice(3));
  }
  // Not for the two above: they run inside the agent's sandbox, which hides GOALD_HOME.
  const { enableCompileCache } = await import('./compile-cache.js');
  enableCompileCache(import.meta.dirname);
  // The start-up snapshot of a foreground start, built in the background (bin/goald; not for users).
  if (argv[2] === 'startup-snapshot') {
    const { buildStartupSnapshot } = await import('./startup-snapshot/build-snapshot.js');
    return buildStartupSnapshot(import.meta.dirname);
  }
  // A plain `goald start` line skips commander too; the process ends when the goal's work is done.
  if (argv[2] === 'start') {
    // bin/goald found no current snapshot to start this one from: one is built once this process ends.
    // (snapshot-files.ts's SNAPSHOT_WANTED_*, spelled out here so that a start without it loads nothing.)
    if (process.env.GOALD_STARTUP_SNAPSHOT === 'missing') {
      const { requestSnapshotIfWanted } = await import('./startup-snapshot/request-build.js');
      requestSnapshotIfWanted(import.meta.dirname);
    }
    const { runPlainStart } = await import('./start-args.js');
    const code = await runPlainStart(argv.slice(3));
    if (code !== null) return code;
  }
  const { runFastCommand } = await import('./fast-command.js');
  const code = await runFastCommand(argv.slice(2));
  if (code !== null) {
    // A fast command leaves nothing running once it has answered: exit now rather than wait for Node to
    // tear the environment down (~1.5 ms of `goald status`), unless output is still queued (a
    // non-blocking stdout whose reader is slow: cli/io.ts), which process.exit() would drop.
    const { outputQueued } = await import('./io.js');
    if (!outputQueued()) process.exit(code);
    return code;
  }
  const { main } = await import('./main.js');
  return main([...argv]);
}

// What commander prints for `--version`, without loading it. A plain write to fd 1: process.stdout would
// build a stream first; a reader that already went away (EPIPE) is no failure of ours.
function printVersion(): void {
  try {
    process.getBuiltinModule('node:fs').writeSync(1, `${GOALD_VERSION}\n`);
  } catch {
    // EPIPE or a closed stdout: nothing to tell anyone
  }
}

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) printVersion();
else {
  void run(process.argv).then((code) => {
    process.exitCode = code;
  });
}
