// The CLI's view of the terminal: the only place goald writes to stdout/stderr. Whatever reaches it passes
// through toTerminalText last, so no text from the world (file names, agent output) can drive the terminal.

import { toTerminalText } from './terminal-text.js';

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export const processIO: CliIO = {
  out: (text) => {
    const safe = toTerminalText(text);
    process.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
  },
  err: (text) => {
    const safe = toTerminalText(text);
    process.stderr.write(safe.endsWith('\n') ? safe : `${safe}\n`);
  },
  env: process.env,
  cwd: process.cwd(),
};
