// How the adapters write the numbers and texts inside a turn's result: durations as people type them,
// texts cut to a bound. Shared by cli-turn and the command adapter; imports nothing.

/** A duration as people write it: 500ms, 30s, 1.5s, 2m, 1h. */
export function formatDuration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1_000) return `${Number((ms / 1_000).toFixed(1))}s`;
  return `${ms}ms`;
}

/** Cuts `text` to at most `maxChars` characters, the last one `…` when it was longer. */
export function cutText(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}
