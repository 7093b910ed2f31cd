// Reading passing and failing test counts from a check's output, when goald recognises the test runner
// (vitest, jest, node:test and TAP, pytest, go test -v, cargo test, mocha, rspec); any other output gives
// no counts and the check is only pass or fail. The output is read line by line as it streams, so a
// runner's summary is found however long the output before it; nothing but the counts is kept.
//
// Summary runners (vitest, jest, node:test, pytest, mocha, rspec) print one summary at the end: the last
// one seen wins, so a test that prints a look-alike summary before the real one changes nothing. Runners
// that report per binary or per test (cargo's `test result:` lines, go's `--- PASS:` lines, TAP's
// `ok`/`not ok`) are summed. Counts come only from the check's own output, never from the agent's.

import { createLineSplitter, type LineSplitter } from '../process/line-splitter.js';

/** What one check's output said about its tests. */
export interface TestCounts {
  /** The runner(s) recognised, e.g. `vitest`, or `vitest+pytest` when one check ran both. */
  runner: string;
  passed: number;
  /** Failed tests, errors and cancelled ones. */
  failed: number;
  /** Skipped, ignored, pending and todo tests. */
  skipped: number;
}

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

/** One runner's reading of the output: told each line, asked for its counts at the end. */
interface RunnerReader {
  readonly name: string;
  line(text: string): void;
  counts(): Counts | null;
}

// CSI and OSC escape sequences (colours, hyperlinks): runners colour their summaries when FORCE_COLOR is set.
// eslint-disable-next-line no-control-regex -- matching terminal escapes is the point
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

/** A streaming reader of one check's output: push its chunks (stdout and stderr apart), then read the counts. */
export interface TestCounter {
  /** Feeds a chunk of the check's stdout or stderr (each stream is split into lines on its own). */
  push(stream: 'stdout' | 'stderr', chunk: Buffer | string): void;
  /** The counts, or null when no runner was recognised; ends the unterminated last lines first. */
  result(): TestCounts | null;
}

/** Creates the counter for one run of one check. */
export function createTestCounter(): TestCounter {
  const readers = createReaders();
  const onLine = (raw: string): void => {
    const text = raw.includes('\u001b') ? raw.replace(ANSI, '') : raw;
    for (const reader of readers) reader.line(text);
  };
  const splitters: Record<'stdout' | 'stderr', LineSplitter> = { stdout: createLineSplitter(onLine), stderr: createLineSplitter(onLine) };
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  return {
    push(stream, chunk) {
      splitters[stream].push(typeof chunk === 'string' ? chunk : decoders[stream].decode(chunk, { stream: true }));
    },
    result() {
      for (const stream of ['stdout', 'stderr'] as const) {
        splitters[stream].push(decoders[stream].decode());
        splitters[stream].flush();
      }
      return combine(readers);
    },
  };
}

/** The counts in a whole output (one stream), or null when no runner was recognised. */
export function readTestCounts(output: string): TestCounts | null {
  const counter = createTestCounter();
  counter.push('stdout', output);
  return counter.result();
}

function combine(readers: readonly RunnerReader[]): TestCounts | null {
  const found = readers.flatMap((reader) => {
    const counts = reader.counts();
    return counts === null ? [] : [{ name: reader.name, counts }];
  });
  if (found.length === 0) return null;
  return {
    runner: found.map((entry) => entry.name).join('+'),
    passed: found.reduce((sum, entry) => sum + entry.counts.passed, 0),
    failed: found.reduce((sum, entry) => sum + entry.counts.failed, 0),
    skipped: found.reduce((sum, entry) => sum + entry.counts.skipped, 0),
  };
}

function createReaders(): RunnerReader[] {
  return [vitestReader(), jestReader(), nodeTestReader(), tapReader(), pytestReader(), goReader(), cargoReader(), mochaReader(), rspecReader()];
}

/** `<n> <word>` pairs of a summary, by word: "1 failed | 3 passed" → {failed: 1, passed: 3}. */
function countsByWord(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const match of text.matchAll(/(\d+) ([a-z]+)/g)) {
    const [, count, word] = match;
    if (count !== undefined && word !== undefined) found.set(word, (found.get(word) ?? 0) + Number(count));
  }
  return found;
}

function sum(found: Map<string, number>, words: readonly string[]): number {
  return words.reduce((total, word) => total + (found.get(word) ?? 0), 0);
}

// A reader that keeps the counts of the last line `summary` understood.
function lastSummary(name: string, summary: (text: string) => Counts | null): RunnerReader {
  let last: Counts | null = null;
  return {
    name,
    line(text) {
      last = summary(text) ?? last;
    },
    counts: () => last,
  };
}

// vitest: "      Tests  1 failed | 3 passed | 1 skipped | 1 todo (6)".
function vitestReader(): RunnerReader {
  return lastSummary('vitest', (text) => {
    const match = /^\s*Tests\s{2,}(\d+ [a-z]+(?: \| \d+ [a-z]+)*) \(\d+\)\s*$/.exec(text);
    if (!match?.[1]) return null;
    const found = countsByWord(match[1]);
    return { passed: sum(found, ['passed']), failed: sum(found, ['failed']), skipped: sum(found, ['skipped', 'todo']) };
  });
}

// jest: "Tests:       1 failed, 1 skipped, 1 todo, 4 passed, 7 total".
function jestReader(): RunnerReader {
  return lastSummary('jest', (text) => {
    const match = /^Tests:\s+((?:\d+ [a-z]+, )*\d+ total)\s*$/.exec(text);
    if (!match?.[1]) return null;
    const found = countsByWord(match[1]);
    return { passed: sum(found, ['passed']), failed: sum(found, ['failed']), skipped: sum(found, ['skipped', 'todo']) };
  });
}

// node --test: the TAP footer ("# pass 3") or the spec reporter's ("ℹ pass 3"); each line sets one field.
function nodeTestReader(): RunnerReader {
  let fields: Map<string, number> | null = null;
  return {
    name: 'node:test',
    line(text) {
      const match = /^(?:#|ℹ) (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$/.exec(text);
      if (!match?.[1] || match[2] === undefined) return;
      // "tests" opens a new footer: a later run in the same check replaces an earlier one.
      if (match[1] === 'tests' || fields === null) fields = new Map();
      fields.set(match[1], Number(match[2]));
    },
    counts() {
      if (fields === null || !fields.has('pass') || !fields.has('fail')) return null;
      return { passed: sum(fields, ['pass']), failed: sum(fields, ['fail', 'cancelled']), skipped: sum(fields, ['skipped', 'todo']) };
    },
  };
}

// Other TAP producers (tape, prove): top-level "ok 1 - ..." / "not ok 2 - ..." lines, with # SKIP / # TODO.
// Output that carries node:test's footer is read by that reader instead.
function tapReader(): RunnerReader {
  const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
  let plan = false;
  let results = 0;
  let footer = false;
  return {
    name: 'tap',
    line(text) {
      if (/^(?:#|ℹ) (?:pass|fail) \d+\s*$/.test(text)) footer = true;
      if (/^1\.\.\d+/.test(text) || /^TAP version \d+/.test(text)) plan = true;
      const match = /^(not )?ok\b(?: \d+)?(.*)$/.exec(text);
      if (!match) return;
      results += 1;
      if (/#\s*(?:skip|todo)\b/i.test(match[2] ?? '')) counts.skipped += 1;
      else if (match[1] === undefined) counts.passed += 1;
      else counts.failed += 1;
    },
    counts: () => (plan && results > 0 && !footer ? { ...counts } : null),
  };
}

// pytest: "==== 1 failed, 3 passed, 1 skipped in 0.12s ====", or the same without the rule under -q.
function pytestReader(): RunnerReader {
  return lastSummary('pytest', (text) => {
    const match = /^=*\s*((?:\d+ [a-z]+(?:, )?)+|no tests ran) in [\d.]+s(?: \([^)]*\))?\s*=*\s*$/.exec(text);
    if (!match?.[1]) return null;
    const found = countsByWord(match[1]);
    return {
      passed: sum(found, ['passed', 'xpassed']),
      failed: sum(found, ['failed', 'error', 'errors']),
      skipped: sum(found, ['skipped', 'xfailed', 'deselected']),
    };
  });
}

// go test -v: one "--- PASS: TestX (0.00s)" line per test and subtest. Without -v go prints passing tests
// nowhere, so its output is not recognised (pass/fail only).
function goReader(): RunnerReader {
  const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
  let verbose = false;
  return {
    name: 'go',
    line(text) {
      if (text.startsWith('=== RUN ')) verbose = true;
      const match = /^\s*--- (PASS|FAIL|SKIP): \S+ \([\d.]+s\)\s*$/.exec(text);
      if (!match) return;
      if (match[1] === 'PASS') counts.passed += 1;
      else if (match[1] === 'FAIL') counts.failed += 1;
      else counts.skipped += 1;
    },
    counts: () => (verbose ? { ...counts } : null),
  };
}

// cargo test: one "test result: ok. 3 passed; 0 failed; 1 ignored; ..." line per test binary, summed.
function cargoReader(): RunnerReader {
  const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
  let seen = false;
  return {
    name: 'cargo',
    line(text) {
      const match = /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;/.exec(text);
      if (!match) return;
      seen = true;
      counts.passed += Number(match[1]);
      counts.failed += Number(match[2]);
      counts.skipped += Number(match[3]);
    },
    counts: () => (seen ? { ...counts } : null),
  };
}

// mocha: "  2 passing (6ms)", "  1 pending", "  1 failing" at the end; "passing" opens a new summary.
function mochaReader(): RunnerReader {
  let current: Counts | null = null;
  return {
    name: 'mocha',
    line(text) {
      const match = /^\s*(\d+) (passing|failing|pending)(?: \(\d+(?:\.\d+)?m?s\))?\s*$/.exec(text);
      if (!match) return;
      const count = Number(match[1]);
      if (match[2] === 'passing') current = { passed: count, failed: 0, skipped: 0 };
      else if (current === null) return;
      else if (match[2] === 'failing') current.failed = count;
      else current.skipped = count;
    },
    counts: () => (current === null ? null : { ...current }),
  };
}

// rspec: "4 examples, 1 failure, 1 pending" (errors outside examples count as failures).
function rspecReader(): RunnerReader {
  return lastSummary('rspec', (text) => {
    const match = /^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?(?:, (\d+) errors? occurred outside of examples)?\s*$/.exec(text);
    if (!match) return null;
    const examples = Number(match[1]);
    const failures = Number(match[2]);
    const pending = Number(match[3] ?? 0);
    return { passed: Math.max(0, examples - failures - pending), failed: failures + Number(match[4] ?? 0), skipped: pending };
  });
}
