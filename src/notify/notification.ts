// What a notification says: a pure function from one progress event (and the goal's stored facts) to the
// notification, or null when the event needs nobody. One key per event, so a notification is sent once
// even when a restarted daemon tells the same ending again.

import type { NOTIFY_KINDS } from './notify-kinds.js';
import type { ProgressEvent } from '../supervisor/types.js';

export type NotifyKind = (typeof NOTIFY_KINDS)[number];

/** What the notification tells about its goal, read from the goal's record. */
export interface GoalFacts {
  id: string;
  condition: string;
  workspace: string;
  turns: number;
  tokens: number;
  costUsd: number;
  /** Why it failed or stopped, as stored (a breaker's numbers, the stop message). */
  reasonMessage: string | null;
  /** The evaluator's last reason (a blocked verdict says what blocks it). */
  lastVerdictReason: string | null;
}

/** One notification, as the webhook and the command receive it (JSON) and the desktop shows it. */
export interface Notification {
  /** Unique per goal and event: the deduplication key. */
  key: string;
  kind: NotifyKind;
  title: string;
  /** One line for chat and the desktop: what happened and what to do. */
  text: string;
  /** A finished goal's failure reason, or a pause's reason; null when achieved. */
  reason: string | null;
  /** The details behind the reason, when there are any. */
  detail: string | null;
  /** The command that acts on it (`goald resume <id>`, `goald show <id>`, ...). */
  next: string;
  goal: GoalFacts;
  /** The progress event it is about, as `--json` prints it. */
  event: ProgressEvent;
}

// A pause the user asked for needs nobody; these do.
const PAUSES_THAT_NEED_THE_USER = new Set(['usage-limited', 'drift', 'blocked']);

/** The notification for `event`, or null when it is not one that ends a goal or needs the user. */
export function notificationFor(event: ProgressEvent, goal: GoalFacts): Notification | null {
  const about = `"${goal.condition}"`;
  const spent = `${goal.turns} turn${goal.turns === 1 ? '' : 's'}, ${goal.tokens} tokens${goal.costUsd > 0 ? `, $${goal.costUsd.toFixed(2)}` : ''}`;
  switch (event.type) {
    case 'goal.finished': {
      if (event.status === 'achieved') {
        const next = `goald show ${goal.id}`;
        return { key: 'finished', kind: 'achieved', title: 'goald: goal achieved', text: `✓ achieved ${about} (${spent}) in ${goal.workspace}`, reason: null, detail: null, next, goal, event };
      }
      const reason = event.breaker ?? event.reason ?? 'failed';
      const detail = goal.reasonMessage;
      const next = `goald show ${goal.id}`;
      const text = `✗ failed (${reason}) ${about} after ${spent}${detail === null ? '' : `: ${detail}`} · ${next}`;
      return { key: 'finished', kind: 'failed', title: `goald: goal failed (${reason})`, text, reason, detail, next, goal, event };
    }
    case 'goal.paused': {
      if (!PAUSES_THAT_NEED_THE_USER.has(event.reason)) return null;
      const detail = event.reason === 'blocked' ? goal.lastVerdictReason : event.reason === 'usage-limited' ? goal.reasonMessage : null;
      const next = event.reason === 'usage-limited' ? `resumes by itself; goald resume ${goal.id} to try now` : `goald resume ${goal.id}, or goald say / goald stop ${goal.id}`;
      const text = `⏸ paused (${event.reason}) ${about} after ${spent}${detail === null ? '' : `: ${detail}`} · ${next}`;
      return { key: `paused:${event.reason}:${goal.turns}`, kind: 'paused', title: `goald: goal paused (${event.reason})`, text, reason: event.reason, detail, next, goal, event };
    }
    case 'config.held': {
      const next = `goald edit ${goal.id} --apply-config, or revert goal.config.json`;
      const settings = event.settings.join(', ');
      const text = `⚠ goal.config.json edit held for ${about}: ${settings} · ${next}`;
      const key = `held:${event.turn ?? '-'}:${settings}`;
      return { key, kind: 'held', title: 'goald: config edit waits for you', text, reason: 'config-held', detail: settings, next, goal, event };
    }
    default:
      return null;
  }
}
