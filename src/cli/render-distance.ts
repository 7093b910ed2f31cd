// `goald show`'s distance cell: what the evaluator said remains and how many tests the checks failed.

import type { TurnRecord } from '../supervisor/types.js';

/** "distance 3 remaining · 5 tests failing"; '' when neither was measured. */
export function renderDistanceCell(distance: NonNullable<TurnRecord['distance']>): string {
  const parts: string[] = [];
  if (distance.remaining !== null) parts.push(`${distance.remaining} remaining`);
  if (distance.failingTests !== null) parts.push(`${distance.failingTests} test${distance.failingTests === 1 ? '' : 's'} failing`);
  return parts.length === 0 ? '' : `distance ${parts.join(' · ')}`;
}
