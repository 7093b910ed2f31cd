// `goald notify test`: sends a sample notification through every channel of the user's `notify` settings
// and says how each did, so a webhook or command can be tried before a goal needs it.

import { resolveUserConfigPath } from '../../config/resolve-settings.js';
import { EXIT, GoaldError } from '../../errors.js';
import { notificationFor } from '../../notify/notification.js';
import { sendNotification } from '../../notify/notifier.js';
import { loadNotifySettings } from '../../notify/notify-settings.js';
import type { CliIO } from '../io.js';

/** `goald notify test [--json]`: exit 0 when every channel took it, 1 when one failed, 2 when none is set. */
export async function runNotifyTest(options: { json?: boolean }, io: CliIO): Promise<number> {
  const settings = await loadNotifySettings(io.env);
  if (settings === null) {
    throw new GoaldError(
      'config',
      `no notify channel is set in ${resolveUserConfigPath(io.env)}`,
      'add "notify": { "webhook": "https://…" } (or "command", or "desktop": true) to that file',
    );
  }
  const goal = { id: 'test', condition: 'goald notify test', workspace: io.cwd, turns: 1, tokens: 0, costUsd: 0, reasonMessage: null, lastVerdictReason: null };
  const sample = notificationFor({ type: 'goal.finished', id: 'test', status: 'achieved', reason: null, breaker: null, turns: 1, tokens: 0 }, goal);
  if (sample === null) throw new GoaldError('internal', 'the sample notification could not be made');
  const results = await sendNotification({ ...sample, title: 'goald: test notification', text: 'goald: test notification — notifications reach you here' }, settings, io.env);
  if (options.json === true) io.out(JSON.stringify({ results }));
  else for (const result of results) io.out(`${result.channel}: ${result.ok ? 'ok' : 'failed'} (${result.detail})`);
  return results.every((result) => result.ok) ? EXIT.ok : EXIT.goalFailed;
}
