// The guard on real git-made deltas: a repository, a snapshot before and after the "turn", the
// snapshotter's own delta and readers, and inspectTurn's findings.

import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, realpath, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { deflateSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_GUARD } from '../../src/config/defaults.js';
import type { GuardSettings } from '../../src/config/types.js';
import { goaldPathsIn } from '../../src/guard/goald-paths.js';
import { inspectTurn } from '../../src/guard/inspect-turn.js';
import type { GuardInput } from '../../src/guard/types.js';
import type { ToolCall } from '../../src/agents/types.js';
import { resolveWorkspace } from '../../src/workspace/find-workspace.js';
import { createSnapshotter } from '../../src/workspace/snapshot.js';
import type { Snapshotter } from '../../src/workspace/types.js';
import { gitdir, type Gitdir } from '../helpers/gitdir.js';

const PASSING_TEST = [
  "import { test } from 'node:test';",
  "import assert from 'node:assert';",
  "import { add } from '../src/add.js';",
  "test('adds', () => {",
  '  assert.equal(add(1, 2), 3);',
  '  assert.equal(add(2, 2), 4);',
  '});',
  '',
].join('\n');

const PACKAGE = JSON.stringify({ name: 'demo', scripts: { test: 'node --test test/', lint: 'eslint .' } }, null, 2);

interface Turn {
  repo: Gitdir;
  snapshotter: Snapshotter;
  /** Runs `change` as the turn and returns the guard's report on it. */
  inspect(change: () => Promise<void>, over?: Partial<Omit<GuardInput, 'delta'>> & { guard?: Partial<GuardSettings> }): ReturnType<typeof inspectTurn>;
}

async function repoWithTests(files: Record<string, string> = {}): Promise<Turn> {
  const repo = await gitdir({
    files: { 'package.json': PACKAGE, 'src/add.js': 'export const add = (a, b) => a + b;\n', 'test/add.test.js': PASSING_TEST, ...files },
    initialCommit: true,
  });
  const state = await realpath(await mkdtemp(path.join(tmpdir(), 'guard-state-')));
  onTestFinished(() => rm(state, { recursive: true, force: true }));
  const ws = await resolveWorkspace(repo.dir);
  const snapshotter = await createSnapshotter({ ...ws, workspace: ws.root, stateDir: state });
  return {
    repo,
    snapshotter,
    async inspect(change, over = {}) {
      const before = await snapshotter.snapshot();
      await change();
      const after = await snapshotter.snapshot();
      const delta = await snapshotter.diff(before, after);
      const { guard, ...rest } = over;
      return inspectTurn(
        {
          delta,
          toolCalls: [],
          workspace: repo.dir,
          checkCommands: ['npm test'],
          settings: { ...DEFAULT_GUARD, testFiles: [...DEFAULT_GUARD.testFiles], ...guard },
          goaldPaths: goaldPathsIn(repo.dir, { home: '/nonexistent/goald-home', userConfig: '/nonexistent/config.json' }),
          ...rest,
        },
        snapshotter,
      );
    },
  };
}

describe('inspectTurn', () => {
  it('finds nothing in an honest fix of the code', async () => {
    const turn = await repoWithTests({ 'src/add.js': 'export const add = (a, b) => a - b;\n' });
    const report = await turn.inspect(() => turn.repo.write('src/add.js', 'export const add = (a, b) => a + b;\n'));
    expect(report).toEqual({ tamper: [], notes: [] });
  });

  it('finds a deleted test file', async () => {
    const turn = await repoWithTests();
    const report = await turn.inspect(() => unlink(turn.repo.path('test/add.test.js')));
    expect(report.tamper).toEqual([{ path: 'test/add.test.js', kind: 'deleted-test', detail: 'test file deleted' }]);
    expect(report.notes).toEqual([expect.objectContaining({ path: 'test/add.test.js', kind: 'assertions-removed' })]);
  });

  it('tells a test moved to another test path (fine) from one renamed out of the test globs (tamper)', async () => {
    const moved = await repoWithTests();
    const ok = await moved.inspect(async () => {
      await unlink(moved.repo.path('test/add.test.js'));
      await moved.repo.write('test/math/add.test.js', PASSING_TEST);
    });
    expect(ok.tamper).toEqual([]);
    expect(ok.notes).toEqual([]);

    const hidden = await repoWithTests();
    const report = await hidden.inspect(async () => {
      await unlink(hidden.repo.path('test/add.test.js'));
      await hidden.repo.write('disabled/add.js.txt', PASSING_TEST);
    });
    expect(report.tamper).toEqual([
      { path: 'test/add.test.js', kind: 'renamed-test', detail: 'test file renamed to disabled/add.js.txt, which no test glob matches' },
    ]);
  });

  it('counts a test file replaced by a symlink as deleted', async () => {
    const turn = await repoWithTests({ 'empty.js': '' });
    const report = await turn.inspect(async () => {
      await unlink(turn.repo.path('test/add.test.js'));
      await symlink('../empty.js', turn.repo.path('test/add.test.js'));
    });
    expect(report.tamper).toEqual([expect.objectContaining({ path: 'test/add.test.js', kind: 'deleted-test' })]);
  });

  it('does not count a deleted fixture under test/ as a deleted test', async () => {
    const turn = await repoWithTests({ 'test/fixtures/input.json': '{"a":1}\n' });
    const report = await turn.inspect(() => unlink(turn.repo.path('test/fixtures/input.json')));
    expect(report.tamper).toEqual([]);
  });

  it.each([
    ['JS .skip(', 'test/add.test.js', PASSING_TEST.replace("test('adds'", "test.skip('adds'"), '.skip('],
    ['JS .only(', 'test/add.test.js', PASSING_TEST.replace("test('adds'", "test.only('adds'"), '.only('],
    ['mocha xit(', 'test/add.test.js', PASSING_TEST.replace("test('adds'", "xit('adds'"), 'xit('],
    ['it.todo', 'test/add.test.js', PASSING_TEST.replace("test('adds', () => {", "test.todo('adds'); (() => {"), '.todo('],
    ['pytest', 'tests/test_add.py', '@pytest.mark.skip(reason="later")\ndef test_add():\n    assert add(1, 2) == 3\n', '@pytest.mark.skip'],
    ['unittest', 'pkg/add_test.py', 'class T(unittest.TestCase):\n    @unittest.skip("x")\n    def test_add(self): pass\n', '@unittest.skip'],
    ['Go', 'add_test.go', 'func TestAdd(t *testing.T) {\n\tt.Skip("later")\n}\n', 't.Skip('],
    ['Rust', 'tests/add.rs', '#[test]\n#[ignore]\nfn adds() {}\n', '#[ignore]'],
    ['JUnit', 'src/test/java/AddTest.java', '@Disabled\n@Test\nvoid adds() {}\n', '@Disabled'],
  ])('finds an added skip marker: %s', async (_name, file, content, label) => {
    const turn = await repoWithTests();
    const report = await turn.inspect(() => turn.repo.write(file, content));
    expect(report.tamper).toEqual([{ path: file, kind: 'skip-marker', detail: `added ${label} to a test file` }]);
  });

  it('ignores a marker that only moved, and markers outside test files', async () => {
    const skipped = PASSING_TEST.replace("test('adds'", "test.skip('adds'");
    const turn = await repoWithTests({ 'test/add.test.js': skipped });
    const report = await turn.inspect(async () => {
      await turn.repo.write('test/add.test.js', `// moved down\n\n${skipped}`.replace('test.skip(', '  test.skip('));
      await turn.repo.write('src/runner.js', "export function run(list) { return list.skip(1); } // it.skip('x')\n");
    });
    expect(report.tamper).toEqual([]);
  });

  it('finds a check script rewritten to `exit 0`, and the scripts it reaches', async () => {
    const turn = await repoWithTests();
    const report = await turn.inspect(() =>
      turn.repo.write('package.json', JSON.stringify({ name: 'demo', scripts: { test: 'exit 0', lint: 'eslint .' } })),
    );
    expect(report.tamper).toEqual([
      { path: 'package.json', kind: 'check-script', detail: 'script "test" changed: "node --test test/" → "exit 0", and a check runs it' },
    ]);

    const chained = await repoWithTests({
      'package.json': JSON.stringify({ scripts: { test: 'npm run unit && npm run lint', unit: 'node --test', lint: 'eslint .', build: 'tsc' } }),
    });
    const unit = await chained.inspect(() =>
      chained.repo.write('package.json', JSON.stringify({ scripts: { test: 'npm run unit && npm run lint', unit: 'true', pretest: 'rm -rf test', lint: 'eslint .', build: 'tsc -b' } })),
    );
    expect(unit.tamper.map((finding) => finding.detail)).toEqual([
      'script "pretest" changed: (none) → "rm -rf test", and a check runs it',
      'script "unit" changed: "node --test" → "true", and a check runs it',
    ]);
  });

  it('leaves scripts no check runs alone, and a manifest that no longer parses to the check', async () => {
    const turn = await repoWithTests();
    const report = await turn.inspect(() =>
      turn.repo.write('package.json', JSON.stringify({ scripts: { test: 'node --test test/', lint: 'true', build: 'tsc' } })),
    );
    expect(report.tamper).toEqual([]);
    const broken = await repoWithTests();
    expect((await broken.inspect(() => broken.repo.write('package.json', '{ "scripts": '))).tamper).toEqual([]);
    const other = await repoWithTests();
    const lint = await other.inspect(() => other.repo.write('package.json', JSON.stringify({ scripts: { test: 'node --test test/', lint: 'true' } })), {
      checkCommands: ['CI=1 pnpm --filter web lint', 'node check.js'],
    });
    expect(lint.tamper).toEqual([expect.objectContaining({ kind: 'check-script', detail: expect.stringContaining('"lint"') })]);
  });

  it('finds a workspace file a check runs changed: by path, as a script, or put first on the checks’ PATH', async () => {
    const turn = await repoWithTests({ 'scripts/ci.sh': 'node --test test/\n', 'tools/lint.py': 'print(1)\n', 'src/other.sh': 'echo\n' });
    const bin = path.join(turn.repo.dir, 'bin');
    const report = await turn.inspect(
      async () => {
        await turn.repo.write('scripts/ci.sh', 'exit 0\n');
        await turn.repo.write('tools/lint.py', 'pass\n');
        await turn.repo.write('bin/npm', '#!/bin/sh\nexit 0\n');
        // Not run by any check; a test file a check names is the test rules' (an edit is no finding).
        await turn.repo.write('src/other.sh', 'echo changed\n');
        await turn.repo.write('test/add.test.js', `${PASSING_TEST}// more\n`);
      },
      { checkCommands: ['./scripts/ci.sh', 'python3 -u tools/lint.py && npm test', 'node --test test/add.test.js'], checkPath: `${bin}:/usr/bin:/bin` },
    );
    expect(report.tamper).toEqual([
      { path: 'bin/npm', kind: 'check-script', detail: 'a check runs this file, and it was added since the goal started (guard.checkScripts: false allows it)' },
      { path: 'scripts/ci.sh', kind: 'check-script', detail: 'a check runs this file, and it was modified since the goal started (guard.checkScripts: false allows it)' },
      { path: 'tools/lint.py', kind: 'check-script', detail: 'a check runs this file, and it was modified since the goal started (guard.checkScripts: false allows it)' },
    ]);
    // With the workspace's bin/ off PATH, a bin/npm runs no check; `guard.checkScripts: false` turns it all off.
    const again = await repoWithTests();
    const offPath = await again.inspect(() => again.repo.write('bin/npm', '#!/bin/sh\nexit 0\n'), { checkPath: '/usr/bin:/bin' });
    expect(offPath.tamper).toEqual([]);
    const off = await repoWithTests({ 'scripts/ci.sh': 'true\n' });
    const allowed = await off.inspect(() => off.repo.write('scripts/ci.sh', 'exit 0\n'), { checkCommands: ['sh scripts/ci.sh'], guard: { checkScripts: false } });
    expect(allowed.tamper).toEqual([]);
  });

  it("protects goald's own files and guard.protect paths", async () => {
    const turn = await repoWithTests({ 'ci/deploy.yml': 'on: push\n' });
    const report = await turn.inspect(
      async () => {
        await turn.repo.write('.goald/notes.txt', 'mine now\n');
        await turn.repo.write('ci/deploy.yml', 'on: never\n');
        await turn.repo.write('home/settings.json', '{}\n');
        await turn.repo.write('home/state.json', '{"goals":[]}\n');
      },
      {
        guard: { protect: ['ci/**'] },
        goaldPaths: goaldPathsIn('/w', { home: '/w/home', userConfig: '/elsewhere/config.json' }),
      },
    );
    expect(report.tamper).toEqual([
      { path: '.goald/notes.txt', kind: 'protected-path', detail: "goald's own file added" },
      { path: 'ci/deploy.yml', kind: 'protected-path', detail: 'a protected path (guard.protect) modified' },
      { path: 'home/settings.json', kind: 'protected-path', detail: "goald's own file added" },
    ]);
  });

  it('counts goal.config.json as tamper only when the agent is seen writing it', async () => {
    const turn = await repoWithTests({ 'goal.config.json': '{"checks":[{"run":"npm test"}]}\n' });
    const edit = (): Promise<void> => turn.repo.write('goal.config.json', '{"checks":[{"run":"true"}]}\n');
    const unseen = await turn.inspect(edit);
    expect(unseen.tamper).toEqual([]);
    expect(unseen.notes).toEqual([expect.objectContaining({ path: 'goal.config.json', kind: 'config-change' })]);

    const toolCalls: ToolCall[] = [{ name: 'Edit', filePath: path.join(turn.repo.dir, 'goal.config.json') }];
    const seen = await turn.inspect(() => turn.repo.write('goal.config.json', '{"checks":[{"run":"exit 0"}]}\n'), { toolCalls });
    expect(seen.tamper).toEqual([{ path: 'goal.config.json', kind: 'config-edit', detail: "the agent modified the goal's config file itself" }]);

    // Once seen as the agent's, the edit stays tamper in later turns until it is reverted.
    const later = await turn.inspect(() => turn.repo.write('goal.config.json', '{"checks":[{"run":"exit 0"}]} \n'), { prior: seen });
    expect(later.tamper).toEqual([expect.objectContaining({ path: 'goal.config.json', kind: 'config-edit' })]);
  });

  it('notes a nested repository the snapshots leave out, on every turn, even one that changed nothing else', async () => {
    const turn = await repoWithTests();
    // A conftest.py a test runner would load, in a directory the agent made a repository of its own.
    const hidden = (): Promise<void> => {
      execFileSync('git', ['init', '--quiet', turn.repo.path('tests/helpers')]);
      return turn.repo.write('tests/helpers/conftest.py', 'import pytest\n');
    };
    const first = await turn.inspect(hidden);
    const note = { path: 'tests/helpers/', kind: 'nested-repo', detail: expect.stringContaining('its files are in no snapshot') as unknown };
    expect(first.tamper).toEqual([]);
    expect(first.notes).toEqual([note]);
    const next = await turn.inspect(() => Promise.resolve());
    expect(next.notes).toEqual([note]);
  });

  it('finds a test file whose starting object was rewritten in .git/objects to hide its .skip(', async () => {
    const turn = await repoWithTests();
    const skipped = PASSING_TEST.replace("test('", "test.skip('");
    const report = await turn.inspect(async () => {
      await turn.repo.write('test/add.test.js', skipped);
      // The object of the file's starting content, rewritten to hold the new content under its old name:
      // git reads it without hashing it, so the diff from the start shows no change at all.
      const id = await turn.repo.git('rev-parse', 'HEAD:test/add.test.js');
      const object = turn.repo.path(`.git/objects/${id.slice(0, 2)}/${id.slice(2)}`);
      await chmod(object, 0o644);
      await writeFile(object, deflateSync(Buffer.concat([Buffer.from(`blob ${Buffer.byteLength(skipped)}\0`), Buffer.from(skipped)])));
    });
    expect(report.tamper).toEqual([expect.objectContaining({ path: 'test/add.test.js', kind: 'forged-object' })]);
  });

  it('notes a .gitignore changed since the start: what it hides is not in the snapshot', async () => {
    const turn = await repoWithTests();
    const report = await turn.inspect(async () => {
      await turn.repo.write('test/.gitignore', 'conftest.js\n');
      await turn.repo.write('test/conftest.js', 'globalThis.assert = () => {};\n');
    });
    expect(report.tamper).toEqual([]);
    expect(report.notes).toEqual([{ path: 'test/.gitignore', kind: 'ignore-change', detail: 'added since the goal started: a file it ignores is in no snapshot, diff or inspection' }]);
  });

  it('reports lost assertions as a note, not as tamper', async () => {
    const turn = await repoWithTests();
    const report = await turn.inspect(() => turn.repo.write('test/add.test.js', PASSING_TEST.replace('  assert.equal(add(2, 2), 4);\n', '')));
    expect(report.tamper).toEqual([]);
    expect(report.notes).toEqual([
      { path: 'test/add.test.js', kind: 'assertions-removed', detail: '1 assertions removed, 0 added (test files: 1 fewer in all)' },
    ]);
  });

  it('finds nothing with the guard off, and honours each switch', async () => {
    const turn = await repoWithTests();
    const off = await turn.inspect(() => unlink(turn.repo.path('test/add.test.js')), { guard: { enabled: false } });
    expect(off).toEqual({ tamper: [], notes: [] });
    const noDeleted = await repoWithTests();
    const kept = await noDeleted.inspect(() => unlink(noDeleted.repo.path('test/add.test.js')), { guard: { deletedTests: false } });
    expect(kept.tamper).toEqual([]);
    const noScripts = await repoWithTests();
    const scripts = await noScripts.inspect(() => noScripts.repo.write('package.json', '{"scripts":{"test":"exit 0"}}'), { guard: { checkScripts: false } });
    expect(scripts.tamper).toEqual([]);
  });

  it("keeps the last turn's test findings without reading git when this turn touched no test file", () => {
    const input: GuardInput = {
      delta: {
        fromTree: 'a',
        toTree: 'b',
        files: [
          { path: 'src/add.js', status: 'M', added: 1, deleted: 1 },
          { path: 'test/add.test.js', status: 'M', added: 1, deleted: 1 },
        ],
        patchId: null,
        empty: false,
      },
      toolCalls: [],
      workspace: '/w',
      checkCommands: ['npm test'],
      settings: { ...DEFAULT_GUARD, testFiles: [...DEFAULT_GUARD.testFiles] },
      goaldPaths: { protect: [], ignore: [] },
      prior: { tamper: [{ path: 'test/add.test.js', kind: 'skip-marker', detail: 'added .skip( to a test file' }], notes: [] },
    };
    // A reader that cannot read: only the kept findings can come back.
    const kept = inspectTurn({ ...input, turnFiles: [{ path: 'src/add.js', status: 'M', added: 1, deleted: 1 }] }, {});
    const reread = inspectTurn({ ...input, turnFiles: [{ path: 'test/add.test.js', status: 'M', added: 1, deleted: 1 }] }, {});
    return Promise.all([
      expect(kept).resolves.toEqual({ tamper: input.prior?.tamper, notes: [] }),
      expect(reread).resolves.toEqual({ tamper: [], notes: [] }),
    ]);
  });

  it('reads paths git has to quote', async () => {
    const turn = await repoWithTests();
    const file = 'test/we\tird "näme".test.js';
    const report = await turn.inspect(() => turn.repo.write(file, "describe.only('x', () => {});\n"));
    expect(report.tamper).toEqual([{ path: file, kind: 'skip-marker', detail: 'added .only( to a test file' }]);
  });
});
