// The numbers inside breaker messages, formatted the same way everywhere.

/** A whole count with thousands separators: 512345 -> "512,345". */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** US dollars with cents: 5.1234 -> "$5.12". */
export function formatUsd(value: number): string {
  return `$${value.toFixed(2)}`;
}

/** "1 turn", "3 turns". */
export function pluralize(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;
}
