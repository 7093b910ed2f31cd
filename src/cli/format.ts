// Human formatting of counts for the CLI; pure string functions (the CLI prints them).

/** 1234567 → "1 234 567" (narrow, unambiguous across locales). */
export function formatCount(value: number): string {
  return Math.round(value)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

