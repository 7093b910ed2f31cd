// Opens the dashboard in the user's browser when there is one: `open` on macOS, `xdg-open` on Linux with
// a display. Never fails: no opener, no display or an opener that errors all mean "not opened", and the
// link printed on the first line is how the user gets there.

import { homedir } from 'node:os';

import { findTool } from '../process/goald-tools.js';
import { spawnGroupLeader } from '../process/spawn.js';

// xdg-open returns once it has handed the address over; one that runs the browser itself is left running.
const OPENER_WAIT_MS = 3_000;

/** The opener for this platform and environment, or null when a browser cannot be shown here. */
function browserOpener(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string | null {
  if (platform === 'darwin') return 'open';
  if (platform === 'win32') return null;
  // Without a display, xdg-open would start a text browser in this terminal.
  if ((env.DISPLAY ?? '') === '' && (env.WAYLAND_DISPLAY ?? '') === '') return null;
  return 'xdg-open';
}

/** Asks the system to open `url`; resolves true when an opener ran and exited 0 (or is still running). */
export async function openBrowser(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  const opener = browserOpener(platform, env);
  if (opener === null) return false;
  const found = findTool(opener, { env });
  if (found === null) return false;
  return new Promise((resolve) => {
    let child;
    try {
      child = spawnGroupLeader(found, [url], { cwd: homedir(), env, stdin: 'ignore' });
    } catch {
      resolve(false);
      return;
    }
    child.stdout.resume();
    child.stderr.resume();
    const timer = setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
      child.unref();
      resolve(true);
    }, OPENER_WAIT_MS);
    child.on('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}
