import { describe, expect, it } from 'vitest';
import { renderFinalBox } from '../../src/cli/render-final-box.js';
import { renderProgressLine } from '../../src/cli/render-progress.js';
import { toTerminalText } from '../../src/cli/terminal-text.js';
import type { ProgressEvent } from '../../src/supervisor/types.js';

// Any byte a terminal acts on: C0 controls but \t and \n, DEL, C1 controls (in their UTF-16 form).
// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const OSC_TITLE = '\u001b]0;pwned\u0007evil.txt';

describe('toTerminalText', () => {
  it('writes OSC, CSI, BEL, CR, DEL and C1 CSI out as \\u escapes', () => {
    expect(toTerminalText(OSC_TITLE)).toBe('\\u001b]0;pwned\\u0007evil.txt');
    expect(toTerminalText('\u001b[2J\u001b[31mred')).toBe('\\u001b[2J\\u001b[31mred');
    expect(toTerminalText('ok\rfake')).toBe('ok\\u000dfake');
    expect(toTerminalText('a\u007fb\u009b31m')).toBe('a\\u007fb\\u009b31m');
    expect(toTerminalText('admin\u202eexe.txt')).toBe('admin\\u202eexe.txt');
  });

  it('keeps newlines, tabs, CRLF as LF, and ordinary Unicode', () => {
    expect(toTerminalText('a\tb\nc\r\nd ✓ é')).toBe('a\tb\nc\nd ✓ é');
  });

  it('leaves a --json line the same JSON value', () => {
    const event = { type: 'turn.finished', reason: `x${OSC_TITLE}\u009b\u007f` };
    const line = toTerminalText(JSON.stringify(event));
    expect(RAW_CONTROL.test(line)).toBe(false);
    expect(JSON.parse(line)).toEqual(event);
  });
});

describe('the render boundary', () => {
  it('escapes a verdict reason and an agent error in a progress line', () => {
    const event: ProgressEvent = {
      type: 'turn.finished', id: 'g1', turn: 1, maxTurns: 5, outcome: 'failed', durationMs: 10, tokens: 3, tokensEstimated: false,
      filesChanged: 1, checks: [], agentError: '\u001b[2Kcrashed', verdict: { achieved: false, reason: `\u001b]52;c;Y3VybA==\u0007 nope` },
      evaluatorError: null, tamper: [{ path: `test/${OSC_TITLE}.test.js`, kind: 'deleted-test', detail: 'test file deleted' }],
    };
    const line = renderProgressLine(event);
    expect(line).not.toBeNull();
    expect(RAW_CONTROL.test(line ?? '')).toBe(false);
    expect(line).toContain('\\u001b[2Kcrashed');
    expect(line).toContain('TAMPER: deleted-test test/\\u001b]0;pwned\\u0007evil.txt.test.js');
  });

  it('escapes file names, the condition and the reason in the final box, and keeps it aligned', () => {
    const box = renderFinalBox({
      status: 'failed', condition: 'tests\u001b[8m pass', turns: 1, tokens: 10, tokensEstimated: false, elapsedMs: 5, checks: [{ name: 'x\u0007', passed: false }],
      reason: 'max-turns', reasonMessage: 'gave up\u001b[1A', breaker: 'max-turns', files: [{ path: OSC_TITLE, added: 1, deleted: 0 }],
      tamper: { turns: 1, last: [{ path: OSC_TITLE, kind: 'protected-path' }] },
    });
    expect(RAW_CONTROL.test(box)).toBe(false);
    expect(box).toContain('\\u001b]0;pwned\\u0007evil.txt (+1 -0)');
    const widths = new Set(box.split('\n').map((line) => [...line].length));
    expect(widths.size).toBe(1);
  });
});
