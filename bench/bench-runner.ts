// What the standalone benchmarks share: the goald executable, their statistics (median, rounding), their
// `--flag N` arguments, and the "run alone" entry that prints a bench's figures when its file is run directly with node.

import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The goald executable users get (package.json's bin): the bundle in dist/bundle/, beside dist/bench/. */
export const GOALD_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'bundle', 'bin.js');

/** The median of the samples (0 when there are none). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** Rounds a figure to hundredths for printing. */
export function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Reads the positive number after `flag` in argv; undefined when absent or not a positive number. */
export function numberFlag(argv: string[], flag: string): number | undefined {
  const at = argv.indexOf(flag);
  const value = at === -1 ? undefined : Number(argv[at + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * Runs `main` with the command-line arguments when the module at `moduleUrl` is the one node was started
 * with (not when bench/run.ts imports it); an error is printed and the exit code is 70 (EX_SOFTWARE).
 */
export function runWhenMain(moduleUrl: string, main: (argv: string[]) => Promise<void>): void {
  const entry = process.argv[1];
  if (entry === undefined || moduleUrl !== pathToFileURL(entry).href) return;
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 70;
  });
}
