// The numbers inside breaker messages, formatted the same way everywhere.

/** A whole count with thousands separators: 512345 -> "512,345". */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** US dollars with cents: 5.1234 -> "$5.12". */
export function formatUsd(value: number): string {
  return `$${value.toFixed(2)}`;
}

/** A duration in its two largest units: 7_260_000 -> "2h 1m", 90_000 -> "1m 30s", 500 -> "0s". */
export function formatDuration(ms: number): string {
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ];
  let rest = Math.max(0, Math.floor(ms));
  const parts: string[] = [];
  for (const [suffix, size] of units) {
    const amount = Math.floor(rest / size);
    rest -= amount * size;
    if (amount > 0 || parts.length > 0) parts.push(`${amount}${suffix}`);
  }
  const shown = parts.slice(0, 2).filter((part, index) => index === 0 || !part.startsWith('0'));
  return shown.length > 0 ? shown.join(' ') : '0s';
}

/** "1 turn", "3 turns". */
export function pluralize(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;
}
