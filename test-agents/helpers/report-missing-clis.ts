// Global setup of the real-CLI suite: says once, plainly, which pinned CLIs are missing (their tests are
// skipped) and how to install them.

import { CLAUDE_BIN, CODEX_BIN, missingCli } from './agent-clis.js';

/** Prints a line per missing CLI before the suite runs. */
export default function reportMissingClis(): void {
  for (const [name, bin] of [
    ['Claude Code', CLAUDE_BIN],
    ['Codex', CODEX_BIN],
  ] as const) {
    const missing = missingCli(bin);
    if (missing !== null) process.stderr.write(`goald test:agents: ${name} tests ${missing}\n`);
  }
}
