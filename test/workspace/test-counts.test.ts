// The test-count reader on the recorded output of each runner (test/fixtures/test-output, every file as the
// runner printed it: node:test, vitest, pytest and cargo; jest 30.5.2 and mocha 12.0.3 on Node 20.20.2, plain
// and with FORCE_COLOR=1; rspec 3.12 on Ruby 3.1.2, a run and a spec file that fails to load; go 1.19.8 test
// over two packages, with and without -v), and on output that only looks like a summary.

import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createTestCounter, readTestCounts } from '../../src/workspace/test-counts.js';

const fixture = (name: string): Promise<string> => readFile(new URL(`../fixtures/test-output/${name}`, import.meta.url), 'utf8');

describe('readTestCounts on recorded runner output', () => {
  it.each([
    ['vitest.txt', { runner: 'vitest', passed: 3, failed: 1, skipped: 2 }],
    ['vitest-color.txt', { runner: 'vitest', passed: 3, failed: 1, skipped: 2 }],
    ['jest.txt', { runner: 'jest', passed: 4, failed: 1, skipped: 2 }],
    ['jest-color.txt', { runner: 'jest', passed: 4, failed: 1, skipped: 2 }],
    ['node-test-tap.txt', { runner: 'node:test', passed: 3, failed: 1, skipped: 2 }],
    ['node-test-spec.txt', { runner: 'node:test', passed: 3, failed: 1, skipped: 2 }],
    ['tap.txt', { runner: 'tap', passed: 2, failed: 1, skipped: 1 }],
    ['pytest.txt', { runner: 'pytest', passed: 3, failed: 1, skipped: 1 }],
    ['pytest-q.txt', { runner: 'pytest', passed: 3, failed: 1, skipped: 1 }],
    ['go-verbose.txt', { runner: 'go', passed: 6, failed: 1, skipped: 1 }],
    ['cargo-failing.txt', { runner: 'cargo', passed: 2, failed: 1, skipped: 1 }],
    ['cargo-workspace.txt', { runner: 'cargo', passed: 6, failed: 0, skipped: 1 }],
    ['mocha.txt', { runner: 'mocha', passed: 3, failed: 1, skipped: 1 }],
    ['mocha-color.txt', { runner: 'mocha', passed: 3, failed: 1, skipped: 1 }],
    ['rspec.txt', { runner: 'rspec', passed: 3, failed: 1, skipped: 1 }],
    ['rspec-load-error.txt', { runner: 'rspec', passed: 0, failed: 1, skipped: 0 }],
  ])('%s', async (name, expected) => {
    expect(readTestCounts(await fixture(name))).toEqual(expected);
  });

  it('recognises no runner in go test output without -v (passing tests are not listed), nor in plain output', async () => {
    expect(readTestCounts(await fixture('go-quiet.txt'))).toBeNull();
    expect(readTestCounts('tsc: 0 errors\nall good\n')).toBeNull();
    expect(readTestCounts('')).toBeNull();
  });

  it("takes a summary runner's last summary: a look-alike printed before the real one changes nothing", async () => {
    // jest.txt holds a test's console.log of "Tests: 999 passed, 999 total" above the real summary.
    expect(readTestCounts(await fixture('jest.txt'))).toMatchObject({ passed: 4, failed: 1 });
    const faked = ['      Tests  50 passed (50)', 'real run follows', '      Tests  2 failed | 1 passed (3)'].join('\n');
    expect(readTestCounts(faked)).toEqual({ runner: 'vitest', passed: 1, failed: 2, skipped: 0 });
  });

  it('sums two runners in one check', async () => {
    const both = `${await fixture('pytest-q.txt')}\n${await fixture('vitest.txt')}`;
    expect(readTestCounts(both)).toEqual({ runner: 'vitest+pytest', passed: 6, failed: 2, skipped: 3 });
  });

  it('reads a summary split across chunks and streams, with CRLF line ends', () => {
    const counter = createTestCounter();
    counter.push('stderr', 'Tests:       2 fa');
    counter.push('stdout', Buffer.from('noise on stdout\r\n'));
    counter.push('stderr', Buffer.from('iled, 5 passed, 7 total\r\nTime: 1 s\n'));
    expect(counter.result()).toEqual({ runner: 'jest', passed: 5, failed: 2, skipped: 0 });
  });

  it('finds the summary after megabytes of output (not only in the kept tail)', () => {
    const counter = createTestCounter();
    for (let i = 0; i < 40_000; i++) counter.push('stdout', `test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n${'x'.repeat(40)}\n`);
    expect(counter.result()).toEqual({ runner: 'cargo', passed: 40_000, failed: 0, skipped: 0 });
  });
});
