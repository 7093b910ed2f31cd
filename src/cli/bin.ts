#!/usr/bin/env node
// The `goald` executable. `goald hook ...` runs on every tool call of a hooked agent, so it takes a
// minimal path that loads none of the CLI (commander, zod, the SDKs).
if (process.argv[2] === 'hook') {
  const { main } = await import('../hook/hook-main.js');
  process.exitCode = await main(process.argv.slice(3));
} else {
  const { main } = await import('./main.js');
  process.exitCode = await main(process.argv);
}
