// Tells the user when a goal ends or needs them: each progress event that calls for it becomes one
// notification (notification.ts), claimed once per goal (sent-log.ts) and sent to every configured
// channel at once (channels.ts). Failures are logged, never fatal, never retried.

import { SerialQueue } from '../daemon/serial-queue.js';
import { redactJson } from '../secrets/redact.js';
import type { ProgressEvent } from '../supervisor/types.js';
import type { Store } from '../../state/types.js';
import { payloadOf, postWebhook, runNotifyCommand, showDesktop, type ChannelResult } from './channels.js';
import { notificationFor, type GoalFacts, type Notification } from './notification.js';
import { loadNotifySettings, type NotifySettings } from './notify-settings.js';
import { claimNotification, recordResults } from './sent-log.js';

/** How long a webhook, a command or the desktop tool may take before it is cut off. */
export const NOTIFY_TIMEOUT_MS = 10_000;

// Events that may notify; every other event costs nothing (not even a read of the config).
const NOTIFYING_EVENTS = new Set<ProgressEvent['type']>(['goal.finished', 'goal.paused', 'config.held']);

export interface NotifierOptions {
  store: Store;
  /** The environment the command and the desktop tool get, and whose secrets are redacted. */
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** The settings in force (default: the user's config.json, read at each notification). */
  settings?: () => Promise<NotifySettings | null>;
  timeoutMs?: number;
}

export interface Notifier {
  /** Handles one goal event; never throws, and the goal never waits for it. */
  notify(goalId: string, event: ProgressEvent): void;
  /** Settles once every notification started so far is sent or has failed. */
  idle(): Promise<void>;
}

/** Sends one notification (secrets redacted) to every channel of `settings` at once; never throws. */
export function sendNotification(notification: Notification, settings: NotifySettings, env: NodeJS.ProcessEnv, timeoutMs = NOTIFY_TIMEOUT_MS): Promise<ChannelResult[]> {
  const redacted = redactJson(notification, env);
  const body = payloadOf(redacted);
  const sends: Promise<ChannelResult>[] = [];
  if (settings.webhook !== null) sends.push(postWebhook(settings.webhook, body, timeoutMs));
  if (settings.command !== null) sends.push(runNotifyCommand(settings.command, body, env, timeoutMs));
  if (settings.desktop) sends.push(showDesktop(redacted, env, timeoutMs));
  return Promise.all(sends);
}

/** A notifier for the goals of one process (the daemon, or a `--foreground` run). */
export function createNotifier(options: NotifierOptions): Notifier {
  const queue = new SerialQueue();
  const settingsOf = options.settings ?? (() => loadNotifySettings(options.env));
  const timeoutMs = options.timeoutMs ?? NOTIFY_TIMEOUT_MS;

  async function handle(goalId: string, event: ProgressEvent): Promise<void> {
    const settings = await settingsOf();
    if (settings === null) return;
    const goal = (await options.store.read()).goals.find((candidate) => candidate.id === goalId);
    if (goal === undefined) return;
    const facts: GoalFacts = {
      id: goal.id,
      condition: goal.condition,
      workspace: goal.workspace,
      turns: goal.summary.turns,
      tokens: goal.summary.tokens,
      costUsd: goal.summary.costUsd,
      reasonMessage: goal.reasonMessage,
      lastVerdictReason: goal.summary.lastVerdictReason,
    };
    const found = notificationFor(event, facts);
    if (found === null || !settings.events.has(found.kind)) return;
    const dir = options.store.goalDir(goalId);
    if (!claimNotification(dir, found.key, found.kind)) return;
    const results = await sendNotification(found, settings, options.env, timeoutMs);
    for (const result of results) {
      if (!result.ok) options.log(`goal ${goalId}: notify.${result.channel} failed: ${result.detail}`);
    }
    recordResults(dir, found.key, results);
  }

  return {
    notify(goalId, event) {
      if (!NOTIFYING_EVENTS.has(event.type)) return;
      void queue
        .run(() => handle(goalId, event))
        .catch((error: unknown) => options.log(`goal ${goalId}: notification not sent: ${error instanceof Error ? error.message : String(error)}`));
    },
    idle: () => queue.idle(),
  };
}
