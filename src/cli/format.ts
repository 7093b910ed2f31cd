// Human formatting of counts for the CLI; pure string functions (the CLI prints them).

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/** 1536 → "1.5 KiB", 512 → "512 B" (binary units, as `du -h` counts). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value >= 10 ? Math.round(value) : value.toFixed(1)} ${BYTE_UNITS[unit]}`;
}

/** 1234567 → "1 234 567" (narrow, unambiguous across locales). */
export function formatCount(value: number): string {
  return Math.round(value)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

