// What the guard looks for in the changed lines of test files: markers that skip or focus tests (an added
// one is tamper) and assertions (a net loss is a note). Matched per line, so a marker moved within a file
// (removed on one line, added on another) cancels out.

// Who owns a JavaScript skip/only/todo: the test functions, mocha's `this`, node:test's `t`, vitest's `ctx`.
const JS_TEST_OWNER = '\\b(?:it|test|describe|context|suite|specify|bench|this|t|ctx)';

/** A marker that stops a test from running (skip) or stops the others from running (only/focus). */
interface SkipMarker {
  /** How the finding names it. */
  label: string;
  pattern: RegExp;
}

// `.todo(` counts: jest, vitest and node:test report a todo as a test that was not run, and a goal turn that
// turns a failing test into a todo has deleted it. Comments are not told apart from code: a marker written
// in a comment of a test file is rare, and `guard.skipMarkers: false` turns the rule off.
const SKIP_MARKERS: readonly SkipMarker[] = [
  // JavaScript / TypeScript: jest, vitest, mocha (`this.skip()`), jasmine, node:test (`t.skip()`), playwright.
  { label: '.skip(', pattern: new RegExp(`${JS_TEST_OWNER}(?:\\.\\w+)*\\.skip(?:If)?\\s*\\(`) },
  { label: '.only(', pattern: new RegExp(`${JS_TEST_OWNER}(?:\\.\\w+)*\\.only\\s*\\(`) },
  { label: '.todo(', pattern: new RegExp(`${JS_TEST_OWNER}(?:\\.\\w+)*\\.todo\\s*\\(`) },
  { label: 'xit(', pattern: /(?<![.\w$])x(?:it|test|describe|context|specify)\s*\(/ },
  { label: 'fit(', pattern: /(?<![.\w$])f(?:it|describe)\s*\(/ },
  { label: '{ skip: true }', pattern: /\bskip\s*:\s*(?:true\b|['"`])/ },
  // Python: pytest and unittest.
  { label: '@pytest.mark.skip', pattern: /@pytest\.mark\.(?:skip|skipif|xfail)\b/ },
  { label: 'pytest.skip(', pattern: /\bpytest\.(?:skip|xfail)\s*\(/ },
  { label: '@unittest.skip', pattern: /@unittest\.(?:skip|skipIf|skipUnless|expectedFailure)\b/ },
  { label: 'skipTest(', pattern: /\.skipTest\s*\(/ },
  // Go.
  { label: 't.Skip(', pattern: /\b[tb]\.Skip(?:Now|f)?\s*\(/ },
  // Rust.
  { label: '#[ignore]', pattern: /#\[ignore\b/ },
  // Java / Kotlin: JUnit 4 and 5, TestNG.
  { label: '@Disabled', pattern: /@Disabled\b/ },
  { label: '@Ignore', pattern: /@Ignore\b/ },
  { label: '@Test(enabled = false)', pattern: /@Test\s*\([^)]*enabled\s*=\s*false/ },
  // Ruby: RSpec and minitest (`skip`, `skip "why"`, `pending "why"`).
  { label: 'skip', pattern: /^\s*(?:skip|pending)(?:\s*\(|\s+['"]|\s*$)/ },
];

// Assertions across the common runners: expect(...), assert*, should, Go's t.Error/t.Fatal, Rust's assert!.
const ASSERTION = /\bexpect\s*\(|\bassert\w*!?\s*[(.\s]|\.should\b|\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(/g;

/** The skip markers on one line, by label (each label at most once per line). */
export function skipMarkersIn(line: string): string[] {
  const found: string[] = [];
  for (const marker of SKIP_MARKERS) if (marker.pattern.test(line)) found.push(marker.label);
  return found;
}

/** How many assertions one line holds. */
export function assertionsIn(line: string): number {
  ASSERTION.lastIndex = 0;
  let count = 0;
  while (ASSERTION.exec(line) !== null) count++;
  return count;
}
