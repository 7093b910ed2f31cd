import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../../src/agents/types.js';
import { DRIFT_PAUSE_CHECKS } from '../../src/prompt/drift.js';
import { DriftTracker } from '../../src/prompt/drift-tracker.js';

const loopingCalls: ToolCall[] = [1, 2, 3, 4].map(() => ({ name: 'Write', filePath: 'zzz/unrelated.log' }));

describe('DriftTracker', () => {
  it('measures nothing for a turn without tool calls', () => {
    const tracker = new DriftTracker('all tests pass');
    expect(tracker.assess([], false)).toBeNull();
    expect(tracker.warning).toBeNull();
  });

  it('warns on a looping turn and asks for a pause after persistent high drift', () => {
    const tracker = new DriftTracker('all tests pass');
    const assessments = Array.from({ length: DRIFT_PAUSE_CHECKS }, () => tracker.assess(loopingCalls, false));
    expect(assessments.map((assessment) => assessment?.consecutiveHigh)).toEqual([1, 2, 3]);
    expect(assessments.map((assessment) => assessment?.pause)).toEqual([false, false, true]);
    expect(tracker.warning).toMatch(/zzz\/unrelated\.log/);
  });

  it('pauses when the in-turn hook asked for it, even without parsed tool calls', () => {
    expect(new DriftTracker('all tests pass').assess([], true)).toMatchObject({ pause: true, consecutiveHigh: 0 });
  });
});
