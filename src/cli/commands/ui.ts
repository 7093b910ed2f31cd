// `goald ui`: asks the daemon (auto-started) for its web dashboard and prints the address with a one-time
// token on the first line, then opens a browser when one is available (`--no-open` never does). The
// dashboard lives in the daemon; this command exits 0 at once.

import { ensureDaemon } from '../../daemon/auto-start.js';
import { EXIT, GoaldError } from '../../errors.js';
import { openBrowser } from '../../ui/open-browser.js';
import type { CliIO } from '../io.js';

export interface UiOptions {
  port?: string;
  /** commander's `--no-open`: false when given. */
  open?: boolean;
  json?: boolean;
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return 0;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65_535) {
    throw new GoaldError('usage', `--port ${text} is not a port`, 'give a number from 1 to 65535, or leave --port out for a free one');
  }
  return port;
}

/** Runs `goald ui`; resolves with the exit code. */
export async function runUi(options: UiOptions, io: CliIO): Promise<number> {
  const port = parsePort(options.port);
  const client = await ensureDaemon(io.env);
  const { url } = await client.openDashboard(port);
  const opened = options.open === false ? false : null;
  if (options.json) {
    const tried = opened ?? (await openBrowser(url, io.env));
    io.out(JSON.stringify({ type: 'ui.opened', url, browser: tried }));
    return EXIT.ok;
  }
  // The address first, before anything that could wait: scripts read the first line.
  io.out(url);
  const tried = opened ?? (await openBrowser(url, io.env));
  io.out(tried ? 'opened in your browser; the link works once' : 'open it in a browser on this machine; the link works once (run `goald ui` again for another)');
  return EXIT.ok;
}
