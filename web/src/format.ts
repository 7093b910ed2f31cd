// Numbers and times as the page prints them.

/** 12345 → "12.3k". */
export function compact(value: number): string {
  if (value >= 1_000_000) return `${(value / 1_000_000).toFixed(1)}M`;
  if (value >= 10_000) return `${Math.round(value / 1000)}k`;
  if (value >= 1_000) return `${(value / 1000).toFixed(1)}k`;
  return String(value);
}

/** A dollar amount. */
export function usd(value: number): string {
  return `$${value.toFixed(value < 1 ? 3 : 2)}`;
}

/** 3725000 → "1h 2m". */
export function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

/** "used / budget" or just "used". */
export function against(used: string, budget: string | null): string {
  return budget === null ? used : `${used} / ${budget}`;
}
