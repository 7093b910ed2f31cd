// Human formatting of numbers, durations and progress; pure string functions (the CLI prints them).

/** 1234567 → "1 234 567" (narrow, unambiguous across locales). */
export function formatCount(value: number): string {
  return Math.round(value)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

/** Cuts to one line of at most `max` chars. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
