// The task layer: the turn prompt whole when it fits; over budget, the middle sections are cut with a
// visible marker while the condition (first) and the recitation (last) arrive whole.

import { describe, expect, it } from 'vitest';
import { buildTaskLayer } from '../../../src/agents/builtin/task-layer.js';

describe('buildTaskLayer', () => {
  it('keeps a prompt within the budget as it is', () => {
    const prompt = '# Goal\nfix it\n\n# Recitation\nfix it\n';
    expect(buildTaskLayer(prompt, 1_000)).toBe(prompt);
  });

  it('cuts the middle sections with a marker, never the first and the last', () => {
    const goal = '# Goal\nthe parser accepts trailing commas\n\n';
    const checks = `# Failing checks\n${'npm test output line\n'.repeat(400)}\n`;
    const evaluator = `# Evaluator's last assessment\n${'not yet: more to do\n'.repeat(200)}\n`;
    const recitation = '# Recitation\nObjective: the parser accepts trailing commas\nRemaining: arrays\n';
    const layer = buildTaskLayer(goal + checks + evaluator + recitation, 3_000);
    expect(layer.length).toBeLessThan(3_500);
    expect(layer.startsWith(goal)).toBe(true);
    expect(layer.endsWith(recitation)).toBe(true);
    expect(layer).toContain('# Failing checks\nnpm test output line');
    expect(layer).toContain("# Evaluator's last assessment\nnot yet");
    expect(layer.match(/\[\.\.\. \d+ chars cut \.\.\.\]/g)).toHaveLength(2);
  });
});
