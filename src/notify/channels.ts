// The three ways a notification leaves goald: a webhook POST, the user's command, a desktop notification.
// Each is tried once and cut after a time limit; a failure is reported back, never thrown.

import { homedir } from 'node:os';
import { findTool } from '../process/goald-tools.js';
import { spawnGroupLeader } from '../process/spawn.js';
import { terminateGroup } from '../process/terminate-group.js';
import type { Notification } from './notification.js';

export type ChannelName = 'webhook' | 'command' | 'desktop';

/** How one channel did: `ok`, or what went wrong (never the webhook's URL or headers: they hold secrets). */
export interface ChannelResult {
  channel: ChannelName;
  ok: boolean;
  detail: string;
}

export interface Webhook {
  url: string;
  headers: Record<string, string>;
}

// Slack reads <...> as links and mentions (<!channel>) and & as an entity: its own escaping keeps the
// agent's or the evaluator's words plain text there. The structured fields stay as they are.
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The JSON every receiver gets: the notification, with `text` escaped the way Slack-compatible hooks need. */
export function payloadOf(notification: Notification): string {
  return JSON.stringify({ ...notification, text: slackEscape(notification.text), at: new Date().toISOString() });
}

/** POSTs the notification; anything but a 2xx answer within `timeoutMs` is a failure. */
export async function postWebhook(webhook: Webhook, body: string, timeoutMs: number): Promise<ChannelResult> {
  try {
    const response = await fetch(webhook.url, {
      method: 'POST',
      headers: { ...webhook.headers, 'content-type': 'application/json', 'user-agent': 'goald' },
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // Drain the body so the connection is released; its content is not ours to log.
    await response.arrayBuffer().catch(() => undefined);
    return response.ok
      ? { channel: 'webhook', ok: true, detail: `HTTP ${response.status}` }
      : { channel: 'webhook', ok: false, detail: `answered HTTP ${response.status}` };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    return { channel: 'webhook', ok: false, detail: timedOut ? `no answer within ${timeoutMs / 1000} s` : `could not be reached (${causeOf(error)})` };
  }
}

// fetch's "fetch failed" hides the reason in `cause` (ECONNREFUSED, ENOTFOUND, ...).
function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  if (cause instanceof Error) return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message;
  return error.message;
}

/** Runs `sh -c command` with `body` on stdin, in its own process group, ended after `timeoutMs`. */
export function runNotifyCommand(command: string, body: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ChannelResult> {
  // /bin/sh, never a `sh` looked up on PATH (process/goald-tools.ts).
  return runBounded('command', '/bin/sh', ['-c', command], { env, stdin: body, timeoutMs });
}

/** notify-send (Linux) or osascript (macOS), whichever is on PATH; a failure when neither is. */
export async function showDesktop(notification: Notification, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ChannelResult> {
  const notifySend = findTool('notify-send', { env });
  if (notifySend !== null) {
    // The body may be read as markup by the notification server: escape it like any agent text.
    const body = notification.text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    return runBounded('desktop', notifySend, ['--app-name=goald', notification.title, body], { env, stdin: null, timeoutMs });
  }
  const osascript = findTool('osascript', { env });
  if (osascript !== null) {
    // The words travel as arguments, never inside the script's source.
    const script = ['-e', 'on run argv', '-e', 'display notification (item 2 of argv) with title (item 1 of argv)', '-e', 'end run'];
    return runBounded('desktop', osascript, [...script, notification.title, notification.text], { env, stdin: null, timeoutMs });
  }
  return { channel: 'desktop', ok: false, detail: 'neither notify-send nor osascript is on PATH' };
}

function runBounded(
  channel: ChannelName,
  file: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; stdin: string | null; timeoutMs: number },
): Promise<ChannelResult> {
  return new Promise((resolve) => {
    let timedOut = false;
    let stderr = '';
    let child;
    try {
      child = spawnGroupLeader(file, args, { cwd: homedir(), env: options.env, stdin: options.stdin === null ? 'ignore' : 'pipe' });
    } catch (error) {
      resolve({ channel, ok: false, detail: `could not start (${error instanceof Error ? error.message : String(error)})` });
      return;
    }
    const pid = child.pid;
    const timer = setTimeout(() => {
      timedOut = true;
      if (pid !== undefined) void terminateGroup(pid, { graceMs: 1_000 });
    }, options.timeoutMs);
    child.stdout.resume();
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 400) stderr += chunk.toString('utf8');
    });
    if (child.stdin !== null) {
      child.stdin.on('error', () => {}); // a command that does not read its stdin
      child.stdin.end(options.stdin ?? '');
    }
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ channel, ok: false, detail: `could not start (${error.message})` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) resolve({ channel, ok: false, detail: `ended after ${options.timeoutMs / 1000} s without finishing` });
      else if (code === 0) resolve({ channel, ok: true, detail: 'exit 0' });
      else {
        const said = stderr.trim().split('\n')[0] ?? '';
        resolve({ channel, ok: false, detail: `exited ${code ?? signal ?? '?'}${said === '' ? '' : `: ${said.slice(0, 200)}`}` });
      }
    });
  });
}
