// The numbers inside breaker messages, formatted the same way everywhere.

/**
 * A whole count with thousands separators: 512345 -> "512,345". Grouped by hand, not `toLocaleString`:
 * ICU builds a number formatter on every such call (its first one loads ICU's data), which cost a
 * turn's prompt about 0.7 ms and the first prompt of a run far more.
 */
export function formatCount(value: number): string {
  const rounded = Math.round(value);
  if (Number.isNaN(rounded)) return 'NaN';
  if (!Number.isFinite(rounded)) return rounded > 0 ? '∞' : '-∞';
  const magnitude = Math.abs(rounded);
  // Beyond 1e21 String() switches to exponent notation; BigInt spells every digit.
  const digits = magnitude >= 1e21 ? BigInt(magnitude).toString() : String(magnitude);
  return `${rounded < 0 ? '-' : ''}${digits.replace(/\B(?=(\d{3})+$)/g, ',')}`;
}

/** US dollars with cents: 5.1234 -> "$5.12". */
export function formatUsd(value: number): string {
  return `$${value.toFixed(2)}`;
}

/** "1 turn", "3 turns". */
export function pluralize(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;
}
