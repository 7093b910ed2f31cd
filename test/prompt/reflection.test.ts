import { describe, expect, test } from 'vitest';
import type { DriftResult } from '../../src/prompt/drift.js';
import { REFLECTION_MARKER, renderReflection } from '../../src/prompt/reflection.js';

const TASK = 'Add a --json flag to `goald status`; keep the text output unchanged.';

describe('renderReflection', () => {
  test('the block: marker, count, the task verbatim, three questions', () => {
    expect(renderReflection({ task: TASK, toolCallsSinceLastCheck: 10 })).toBe(
      [
        '[System meta · not a user message]',
        '10 tool calls since the last check. Take stock before the next one.',
        '=== ORIGINAL TASK ===',
        TASK,
        '=== END OF TASK ===',
        '1. Does your current plan still match the task above? If not, correct course now.',
        '2. What did those 10 steps prove or rule out?',
        '3. What is the next concrete output, and how close is it?',
      ].join('\n'),
    );
  });

  test('the task keeps its lines and is cut at 300 chars with "..."', () => {
    const long = `line one\nline two ${'x'.repeat(400)}`;
    const text = renderReflection({ task: long, toolCallsSinceLastCheck: 3 });
    const quoted = text.split('=== ORIGINAL TASK ===\n')[1]?.split('\n=== END OF TASK ===')[0];
    expect(quoted).toBe(`${long.slice(0, 297)}...`);
    expect(quoted).toHaveLength(300);
  });

  test('a task of exactly 300 chars is not cut', () => {
    const exact = 'y'.repeat(300);
    expect(renderReflection({ task: exact, toolCallsSinceLastCheck: 3 })).toContain(`\n${exact}\n`);
  });

  test.each([null, '', '   \n'])('without task text (%j) it asks to restate the goal', (task) => {
    const text = renderReflection({ task, toolCallsSinceLastCheck: 5 });
    expect(text.startsWith(`${REFLECTION_MARKER}\n`)).toBe(true);
    expect(text).not.toContain('=== ORIGINAL TASK ===');
    expect(text).toContain('restate, in one sentence, the goal you are working toward');
    expect(text).toContain('1. Does your current plan still match that goal? If not, correct course now.');
    expect(text).toContain('2. What did those 5 steps prove or rule out?');
  });

  test('one step reads in the singular', () => {
    const text = renderReflection({ task: TASK, toolCallsSinceLastCheck: 1 });
    expect(text).toContain('1 tool call since the last check.');
    expect(text).toContain('2. What did that 1 step prove or rule out?');
  });

  const drift = (score: number): DriftResult => ({
    score,
    circular: 1,
    objective: 0.3,
    repeated: { kind: 'file', value: 'src/status.ts', count: 4 },
  });

  test('above 0.5 drift it leads with the attention warning, right after the marker', () => {
    const lines = renderReflection({ task: TASK, toolCallsSinceLastCheck: 10, drift: drift(0.72) }).split('\n');
    expect(lines[0]).toBe(REFLECTION_MARKER);
    expect(lines[1]).toMatch(/^ATTENTION — drift 0\.72: you wrote src\/status\.ts 4 times in the last 10 tool calls/);
    expect(lines[2]).toBe('10 tool calls since the last check. Take stock before the next one.');
  });

  test('at or below 0.5 drift there is no warning', () => {
    const text = renderReflection({ task: TASK, toolCallsSinceLastCheck: 10, drift: drift(0.5) });
    expect(text).not.toContain('ATTENTION');
    expect(text).toBe(renderReflection({ task: TASK, toolCallsSinceLastCheck: 10 }));
  });
});
