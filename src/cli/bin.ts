#!/usr/bin/env node
// The `goald` executable. `goald hook ...` runs on every tool call of a hooked agent, so it takes a
// minimal path that loads none of the CLI (commander, zod, the SDKs); `goald status` takes the fast path
// (fast-command.ts) that skips commander; everything else goes through the full CLI.
if (process.argv[2] === 'hook') {
  const { main } = await import('../hook/hook-main.js');
  process.exitCode = await main(process.argv.slice(3));
} else {
  const { runFastCommand } = await import('./fast-command.js');
  const code = await runFastCommand(process.argv.slice(2));
  if (code !== null) process.exitCode = code;
  else {
    const { main } = await import('./main.js');
    process.exitCode = await main(process.argv);
  }
}
