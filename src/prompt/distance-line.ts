// The recitation's distance line: how many items the evaluator says remain and how many tests fail, against
// the turn the no-progress breaker's window began ("3 items remain, 2 fewer than turn 4").

import type { DistanceAt, ProgressTrack } from '../breakers/no-progress.js';
import { pluralize } from '../breakers/format-quantity.js';

/**
 * "Distance: 3 items remain, 2 fewer than turn 4; 5 tests fail, as many as turn 4", from the last measured
 * turn against the oldest turn of the window of `window` turns before it that measured the same thing;
 * null when nothing was measured yet.
 */
export function renderDistanceLine(track: ProgressTrack | undefined, window: number): string | null {
  const latest = track?.recent.at(-1);
  if (track === undefined || latest === undefined) return null;
  const since = latest.turn - Math.max(1, window);
  const earlier = track.recent.filter((entry) => entry.turn >= since && entry.turn < latest.turn);
  const parts: string[] = [];
  const describe = (key: 'remaining' | 'failingTests', noun: string, verb: [string, string]): void => {
    const now = latest[key];
    if (now === null) return;
    const base = `${pluralize(now, noun)} ${now === 1 ? verb[0] : verb[1]}`;
    const then = earlier.find((entry: DistanceAt) => entry[key] !== null);
    const was = then?.[key] ?? null;
    if (then === undefined || was === null) parts.push(base);
    else parts.push(`${base}, ${comparison(now, was)} turn ${then.turn}`);
  };
  describe('remaining', 'item', ['remains', 'remain']);
  describe('failingTests', 'test', ['fails', 'fail']);
  return parts.length === 0 ? null : `Distance: ${parts.join('; ')}`;
}

function comparison(now: number, was: number): string {
  if (now === was) return 'as many as';
  return now < was ? `${was - now} fewer than` : `${now - was} more than`;
}
