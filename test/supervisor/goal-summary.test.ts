import { describe, expect, it } from 'vitest';
import { createEmptySummary } from '../../state/state-schema.js';
import { summarizeTurn, type SummaryUpdate } from '../../src/supervisor/goal-summary.js';

const files = (count: number) => Array.from({ length: count }, (_, n) => ({ path: `src/f${String(n).padStart(5, '0')}.ts`, added: 1, deleted: 0 }));
const update = (over: Partial<SummaryUpdate> = {}): SummaryUpdate => ({ turn: 1, tokens: 10, costUsd: 0, checks: [], lastVerdict: null, activeMs: 5, ...over });

describe('summarizeTurn', () => {
  it('lists at most 200 changed files and counts the rest, so state.json stays small', () => {
    const summary = summarizeTurn(createEmptySummary(), update({ files: files(50_000) }));
    expect(summary.files).toHaveLength(200);
    expect(summary.files[0]?.path).toBe('src/f00000.ts');
    expect(summary.filesOmitted).toBe(49_800);
    expect(JSON.stringify(summary).length).toBeLessThan(20_000);
  });

  it('keeps the count on a turn that did not recompute the files, and drops it when fewer changed', () => {
    const capped = summarizeTurn(createEmptySummary(), update({ files: files(250) }));
    const kept = summarizeTurn(capped, update({ turn: 2 }));
    expect(kept.files).toHaveLength(200);
    expect(kept.filesOmitted).toBe(50);
    const fewer = summarizeTurn(kept, update({ turn: 3, files: files(3) }));
    expect(fewer.files).toHaveLength(3);
    expect('filesOmitted' in fewer).toBe(false);
  });
});
