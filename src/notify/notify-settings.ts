// The notify settings in force: the `notify` section of the user's own config.json, read when a
// notification is due, so an edit applies to the next one without restarting the daemon.

import type { ConfigNotify } from '../config/notify-schema.js';
import { NOTIFY_KINDS } from './notify-kinds.js';
import { loadConfigFile } from '../config/load-config.js';
import { resolveUserConfigPath } from '../config/resolve-settings.js';
import type { Webhook } from './channels.js';
import type { NotifyKind } from './notification.js';

export interface NotifySettings {
  desktop: boolean;
  webhook: Webhook | null;
  command: string | null;
  events: ReadonlySet<NotifyKind>;
}

/** The settings of a `notify` section; null when it names no channel (nothing to send). */
export function toNotifySettings(notify: ConfigNotify | undefined): NotifySettings | null {
  if (notify === undefined) return null;
  const webhook = notify.webhook === undefined ? null : typeof notify.webhook === 'string' ? { url: notify.webhook, headers: {} } : { url: notify.webhook.url, headers: notify.webhook.headers ?? {} };
  const settings: NotifySettings = {
    desktop: notify.desktop ?? false,
    webhook,
    command: notify.command ?? null,
    events: new Set(notify.events ?? NOTIFY_KINDS),
  };
  return settings.desktop || settings.webhook !== null || settings.command !== null ? settings : null;
}

/** Reads the user's config file (`$XDG_CONFIG_HOME/goald/config.json`); throws its `config` error when invalid. */
export async function loadNotifySettings(env: NodeJS.ProcessEnv): Promise<NotifySettings | null> {
  const { config } = await loadConfigFile(resolveUserConfigPath(env));
  return toNotifySettings(config?.notify);
}
