// What a notification can be about: its own module, so the notifier that only needs the list (every
// goal's run) does not build the `notify` config schema with it.

/** What a notification can be about. */
export const NOTIFY_KINDS = ['achieved', 'failed', 'paused', 'held'] as const;
