// Following a goal's event stream from the daemon: progress lines (or JSON lines), then the final box.

import type { DaemonClient } from '../../daemon/client.js';
import type { ProgressEvent } from '../../supervisor/types.js';
import type { CliIO } from '../io.js';
import { renderFinalBox } from '../render-final-box.js';
import { renderProgressLine } from '../render-progress.js';

type Finished = Extract<ProgressEvent, { type: 'goal.finished' }>;

/** Streams events until the goal finishes; resolves with the goal.finished event, or null if cut off. */
export async function followGoalEvents(
  client: DaemonClient,
  goalId: string,
  options: { json: boolean; io: CliIO; follow?: boolean; signal?: AbortSignal },
): Promise<Finished | null> {
  const seen: { finished: Finished | null } = { finished: null };
  await client.streamEvents(goalId, {
    follow: options.follow ?? true,
    ...(options.signal ? { signal: options.signal } : {}),
    onEvent: (event) => {
      if (event.type === 'goal.finished') seen.finished = event;
      if (options.json) {
        options.io.out(JSON.stringify(event));
        return;
      }
      const line = renderProgressLine(event);
      if (line !== null) options.io.out(line);
    },
  });
  const end = seen.finished;
  if (end !== null && !options.json) {
    const goal = await client.getGoal(goalId);
    options.io.out(
      renderFinalBox({
        status: end.status,
        condition: goal.condition,
        turns: end.turns,
        tokens: end.tokens,
        tokensEstimated: false,
        elapsedMs: goal.summary.activeMs,
        checks: [],
        reason: end.reason,
        reasonMessage: goal.reasonMessage,
        breaker: end.breaker,
        files: goal.summary.files,
        filesOmitted: goal.summary.filesOmitted ?? 0,
        tamper: goal.summary.tamper,
      }),
    );
  }
  return end;
}
