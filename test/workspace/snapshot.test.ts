import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { describe, expect, onTestFinished, test } from 'vitest';

import { resolveWorkspace } from '../../src/workspace/find-workspace.js';
import { cutPatch } from '../../src/workspace/delta-output.js';
import { createSnapshotter, EMPTY_TREE_HASH } from '../../src/workspace/snapshot.js';
import type { Snapshotter } from '../../src/workspace/types.js';
import { gitdir, type Gitdir, type GitdirOptions } from '../helpers/gitdir.js';

async function tempStateDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'goald-state-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function snapshotterFor(dir: string, stateDir?: string): Promise<Snapshotter> {
  const ws = await resolveWorkspace(dir);
  return createSnapshotter({
    workspace: ws.root,
    gitDir: ws.gitDir,
    objectsDir: ws.objectsDir,
    indexFile: ws.indexFile,
    stateDir: stateDir ?? (await tempStateDir()),
  });
}

async function setup(options: GitdirOptions = {}): Promise<{ repo: Gitdir; snap: Snapshotter }> {
  const repo = await gitdir({ initialCommit: true, files: { 'README.md': 'hello\n' }, ...options });
  return { repo, snap: await snapshotterFor(repo.dir) };
}

/** Every file under .git with its size: "nothing lands in the user's .git" made checkable. */
async function listGitDir(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(dir, '.git'), { recursive: true, withFileTypes: true });
  const rows: string[] = [];
  for (const entry of entries) {
    const full = path.join(entry.parentPath, entry.name);
    const info = await stat(full);
    rows.push(`${path.relative(dir, full)} ${entry.isDirectory() ? 'dir' : info.size}`);
  }
  return rows.sort();
}

describe('snapshot', () => {
  test('a clean committed tree snapshots to HEAD’s tree', async () => {
    const { repo, snap } = await setup({ files: { 'README.md': 'hello\n', 'src/a.ts': 'export {};\n' } });
    expect(await snap.snapshot()).toBe(await repo.git('rev-parse', 'HEAD^{tree}'));
  });

  test('an empty fresh repository (no index, no commit) snapshots to the empty tree', async () => {
    const repo = await gitdir();
    const snap = await snapshotterFor(repo.dir);
    expect(await snap.snapshot()).toBe(EMPTY_TREE_HASH);
  });

  test('untracked files are included and .gitignore is honoured', async () => {
    const { repo, snap } = await setup({
      files: { 'README.md': 'hello\n', '.gitignore': '*.log\nbuild/\n' },
    });
    const before = await snap.snapshot();
    await repo.write('notes/new.txt', 'one\ntwo\n');
    await repo.write('debug.log', 'noise\n');
    await repo.write('build/out.js', 'compiled\n');
    const after = await snap.snapshot();
    const delta = await snap.diff(before, after);
    expect(delta.files).toEqual([{ path: 'notes/new.txt', status: 'A', added: 2, deleted: 0 }]);
  });

  test("ignore rules are the repository's as the goal found them: a turn's edit to .git cannot hide a file", async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'README.md': 'hello\n' } });
    await writeFile(repo.path('.git/info/exclude'), 'ignored-at-start.txt\n');
    const stateDir = await tempStateDir();
    const snap = await snapshotterFor(repo.dir, stateDir);
    const before = await snap.snapshot();
    // What a hostile turn writes to keep its files from the judge: the live .git/info/exclude, a
    // core.excludesFile in .git/config, and a FIFO in place of an ignore file (which git would block on).
    await writeFile(repo.path('.git/info/exclude'), 'ignored-at-start.txt\nhidden.txt\n');
    await writeFile(repo.path('more-ignores'), 'hidden-too.txt\n');
    await repo.git('config', 'core.excludesFile', repo.path('more-ignores'));
    await repo.write('hidden.txt', 'conftest that passes everything\n');
    await repo.write('hidden-too.txt', 'x\n');
    await repo.write('ignored-at-start.txt', 'still ignored\n');
    const after = await snap.snapshot();
    const files = (await snap.diff(before, after)).files.map((file) => file.path);
    expect(files).toEqual(['hidden-too.txt', 'hidden.txt', 'more-ignores']);
    // A restarted daemon's snapshotter keeps the rules the goal started with.
    const restarted = await snapshotterFor(repo.dir, stateDir);
    expect(await restarted.snapshot()).toBe(after);
    // The user's own git still reads the live files (goald copied them; it changed nothing there).
    expect(await repo.git('check-ignore', 'hidden.txt')).toBe('hidden.txt');
  });

  test("the tree's .gitattributes cannot make a text change look binary to the judge", async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'README.md': 'hello\n', 'test/a.test.js': "test('adds', () => {});\n" } });
    // The user's own info/attributes is kept (and still outranked by goald's line after it).
    await writeFile(repo.path('.git/info/attributes'), '*.md text');
    const stateDir = await tempStateDir();
    const snap = await snapshotterFor(repo.dir, stateDir);
    const before = await snap.snapshot();
    // What a turn writes to hide its edit of a test from the patch the evaluator and the guard read.
    await repo.write('.gitattributes', '*.js -diff\n[attr]opaque -diff\n*.ts opaque\n');
    await repo.write('test/a.test.js', "test.skip('adds', () => {});\n");
    await repo.write('test/b.test.ts', "it.only('b', () => {});\n");
    const after = await snap.snapshot();
    const patch = await snap.patch(before, after, 1_000_000);
    expect(patch).not.toContain('Binary files');
    expect(patch).toContain("+test.skip('adds', () => {});");
    expect(patch).toContain("+it.only('b', () => {});");
    // A file that is binary by its content still diffs as binary.
    await repo.write('blob.bin', Buffer.from([0, 1, 2, 0, 255]));
    expect(await snap.patch(after, await snap.snapshot(), 1_000_000)).toContain('Binary files /dev/null and b/blob.bin differ');
    expect(await readFile(path.join(stateDir, 'git', 'info', 'attributes'), 'utf8')).toBe('*.md text\n* !diff !filter\n');
  });

  test('nested repositories without a commit (a turn’s `git init`) are left out instead of failing the snapshot', async () => {
    const { repo, snap } = await setup();
    const before = await snap.snapshot();
    for (const nested of ['crate', 'deep/pkg']) {
      await repo.write(`${nested}/lib.rs`, 'fn main() {}\n');
      execFileSync('git', ['init', '--quiet', repo.path(nested)]);
    }
    await repo.write('notes.txt', 'kept\n');
    const after = await snap.snapshot();
    expect((await snap.diff(before, after)).files.map((file) => file.path)).toEqual(['notes.txt']);
    // The turn's snapshot with its diffs from one shell, on a third one made since: left out as well.
    await repo.write('third/x.txt', 'x\n');
    execFileSync('git', ['init', '--quiet', repo.path('third')]);
    await repo.write('more.txt', 'more\n');
    const turn = await snap.snapshotAndDiffSince?.(after, before);
    expect((await turn?.diff)?.delta.files.map((file) => file.path)).toEqual(['more.txt']);
  });

  test('a FIFO at .git/info/exclude when the goal starts is skipped, not read', async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'README.md': 'hello\n' } });
    await rm(repo.path('.git/info/exclude'), { force: true });
    execFileSync('mkfifo', [repo.path('.git/info/exclude')]);
    await repo.write('new.txt', 'new\n');
    // Opening a FIFO for writing without blocking succeeds only while a reader waits on it: git, had it
    // been given the live file, would wait there (until this writer, or forever).
    let readerWaited = false;
    const writer = setTimeout(() => {
      try {
        closeSync(openSync(repo.path('.git/info/exclude'), constants.O_WRONLY | constants.O_NONBLOCK));
        readerWaited = true;
      } catch {
        // ENXIO: nobody reads it
      }
    }, 1_000);
    onTestFinished(() => clearTimeout(writer));
    const snap = await snapshotterFor(repo.dir);
    const tree = await snap.snapshot();
    clearTimeout(writer);
    expect(readerWaited).toBe(false);
    expect((await snap.diff(EMPTY_TREE_HASH, tree)).files.map((file) => file.path)).toEqual(['README.md', 'new.txt']);
  });

  test('modifications, additions and deletions show with numstat', async () => {
    const { repo, snap } = await setup({
      files: { 'keep.txt': 'a\nb\nc\n', 'gone.txt': 'x\ny\n', 'README.md': 'hello\n' },
    });
    const before = await snap.snapshot();
    await repo.write('keep.txt', 'a\nB\nc\nd\n');
    await rm(repo.path('gone.txt'));
    await repo.write('added.txt', 'new\n');
    const after = await snap.snapshot();
    const delta = await snap.diff(before, after);
    expect(delta.empty).toBe(false);
    expect(delta.fromTree).toBe(before);
    expect(delta.toTree).toBe(after);
    expect(delta.files).toEqual([
      { path: 'added.txt', status: 'A', added: 1, deleted: 0 },
      { path: 'gone.txt', status: 'D', added: 0, deleted: 2 },
      { path: 'keep.txt', status: 'M', added: 2, deleted: 1 },
    ]);
    expect(delta.patchId).toMatch(/^[0-9a-f]{40}$/);
  });

  test('paths with spaces, tabs and unicode survive the -z parsing', async () => {
    const { repo, snap } = await setup();
    const before = await snap.snapshot();
    await repo.write('dir with space/tab\there é.txt', 'x\n');
    const delta = await snap.diff(before, await snap.snapshot());
    expect(delta.files).toEqual([{ path: 'dir with space/tab\there é.txt', status: 'A', added: 1, deleted: 0 }]);
  });

  test('a commit made by the agent between snapshots counts as change', async () => {
    const { repo, snap } = await setup();
    const before = await snap.snapshot();
    await repo.write('feature.ts', 'export const x = 1;\n');
    await repo.commitAll('agent commit');
    const after = await snap.snapshot();
    expect(after).not.toBe(before);
    expect(after).toBe(await repo.git('rev-parse', 'HEAD^{tree}'));
    const delta = await snap.diff(before, after);
    expect(delta.files).toEqual([{ path: 'feature.ts', status: 'A', added: 1, deleted: 0 }]);
  });

  test('same content gives the same tree: unchanged, and changed then reverted', async () => {
    const { repo, snap } = await setup();
    const first = await snap.snapshot();
    expect(await snap.snapshot()).toBe(first);
    await repo.write('README.md', 'changed\n');
    expect(await snap.snapshot()).not.toBe(first);
    await repo.write('README.md', 'hello\n');
    const reverted = await snap.snapshot();
    expect(reverted).toBe(first);
    expect(await snap.diff(first, reverted)).toEqual({
      fromTree: first,
      toTree: first,
      files: [],
      patchId: null,
      empty: true,
    });
    expect(await snap.patch(first, reverted, 1000)).toBe('');
  });

  test('the same edit in two different turns has the same patch id; another edit does not', async () => {
    const { repo, snap } = await setup({ files: { 'README.md': 'hello\n', 'other.txt': 'o\n' } });
    const base = await snap.snapshot();
    await repo.write('README.md', 'hello\nworld\n');
    const turn1 = await snap.snapshot();
    // Meanwhile something unrelated changes, then the same edit is undone and redone.
    await repo.write('README.md', 'hello\n');
    await repo.write('other.txt', 'o\np\n');
    const between = await snap.snapshot();
    await repo.write('README.md', 'hello\nworld\n');
    const turn2 = await snap.snapshot();
    await repo.write('README.md', 'hello\nthere\n');
    const turn3 = await snap.snapshot();

    const first = await snap.diff(base, turn1);
    const second = await snap.diff(between, turn2);
    const third = await snap.diff(turn2, turn3);
    expect(turn2).not.toBe(turn1);
    expect(first.patchId).not.toBeNull();
    expect(second.patchId).toBe(first.patchId);
    expect(third.patchId).not.toBe(first.patchId);
  });

  test('binary files have null counts and distinct edits get distinct patch ids', async () => {
    const { repo, snap } = await setup();
    const base = await snap.snapshot();
    await repo.write('logo.bin', Buffer.from([0, 1, 2, 3, 0, 255]));
    const one = await snap.snapshot();
    await repo.write('logo.bin', Buffer.from([0, 1, 2, 3, 0, 254]));
    const two = await snap.snapshot();
    const added = await snap.diff(base, one);
    expect(added.files).toEqual([{ path: 'logo.bin', status: 'A', added: null, deleted: null }]);
    const changed = await snap.diff(one, two);
    expect(changed.files).toEqual([{ path: 'logo.bin', status: 'M', added: null, deleted: null }]);
    expect(changed.patchId).not.toBeNull();
    expect(changed.patchId).not.toBe(added.patchId);
  });

  test('a file turned into a symlink is a type change', async () => {
    const { repo, snap } = await setup({ files: { 'README.md': 'hello\n', 'link': 'plain\n' } });
    const before = await snap.snapshot();
    await rm(repo.path('link'));
    await symlink('README.md', repo.path('link'));
    const delta = await snap.diff(before, await snap.snapshot());
    expect(delta.files.map((f) => [f.path, f.status])).toEqual([['link', 'T']]);
  });

  test('nothing lands in the user’s .git: index bytes, HEAD, refs, objects, stash', async () => {
    const { repo, snap } = await setup({ files: { 'README.md': 'hello\n', 'src/a.ts': 'a\n' } });
    await repo.write('stashed.txt', 'stash me\n');
    await repo.git('add', 'stashed.txt');
    await repo.git('stash', 'push', '--quiet', '-m', 'user stash');
    await repo.write('staged.txt', 'staged by the user\n');
    await repo.git('add', 'staged.txt');

    const record = async (): Promise<Record<string, unknown>> => ({
      index: (await readFile(path.join(repo.dir, '.git', 'index'))).toString('base64'),
      head: await repo.git('rev-parse', 'HEAD'),
      symbolicHead: await repo.git('symbolic-ref', 'HEAD'),
      refs: await repo.git('for-each-ref'),
      objects: await repo.git('count-objects', '-v'),
      stash: await repo.git('stash', 'list'),
      files: await listGitDir(repo.dir),
    });
    const before = await record();

    let previous = await snap.snapshot();
    for (let turn = 0; turn < 4; turn++) {
      await repo.write(`src/turn-${turn}.ts`, `export const turn = ${turn};\n`);
      await repo.write('src/a.ts', `a\n${turn}\n`);
      await repo.write(`blob-${turn}.bin`, Buffer.from([0, turn, 0, turn]));
      const next = await snap.snapshot();
      await snap.diff(previous, next);
      await snap.patch(previous, next, 10_000);
      previous = next;
    }

    expect(await record()).toEqual(before);
  });

  test('the private index is seeded once; a new snapshotter on the same state keeps it', async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'README.md': 'hello\n' } });
    const stateDir = await tempStateDir();
    const first = await snapshotterFor(repo.dir, stateDir);
    await repo.write('later.txt', 'later\n');
    const tree = await first.snapshot();
    const privateIndex = await readFile(path.join(stateDir, 'index'));

    // The user now stages something else; a restarted daemon must not reseed from it.
    await repo.write('user.txt', 'user\n');
    await repo.git('add', 'user.txt');
    await snapshotterFor(repo.dir, stateDir);
    expect(await readFile(path.join(stateDir, 'index'))).toEqual(privateIndex);

    await rm(repo.path('user.txt'));
    await repo.git('rm', '--cached', '--quiet', 'user.txt');
    const again = await snapshotterFor(repo.dir, stateDir);
    expect(await again.snapshot()).toBe(tree);
  });

  test('a lock left by a run that died mid-snapshot does not block the next start', async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'README.md': 'hello\n' } });
    const stateDir = await tempStateDir();
    await (await snapshotterFor(repo.dir, stateDir)).snapshot();
    await writeFile(path.join(stateDir, 'index.lock'), '');
    const restarted = await snapshotterFor(repo.dir, stateDir);
    expect(await restarted.snapshot()).toBe(await repo.git('rev-parse', 'HEAD^{tree}'));
  });

  test('concurrent snapshots on one snapshotter are serialized and agree', async () => {
    const { repo, snap } = await setup();
    for (let i = 0; i < 20; i++) await repo.write(`many/file-${i}.txt`, `${i}\n`);
    const trees = await Promise.all(Array.from({ length: 6 }, () => snap.snapshot()));
    expect(new Set(trees).size).toBe(1);
  });

  test('a failed snapshot does not block the next one', async () => {
    const { snap } = await setup();
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    await expect(snap.snapshot(controller.signal)).rejects.toThrow('stopped');
    expect(await snap.snapshot()).toMatch(/^[0-9a-f]{40}$/);
  });

  test("a turn's snapshot and its diffs from one shell: the tree, the turn's delta and the files since the start", async () => {
    const { repo, snap } = await setup();
    const base = await snap.snapshot();
    await repo.write('a.txt', 'one\n');
    const first = await snap.snapshotAndDiffSince?.(base, base);
    if (first === undefined) throw new Error('the snapshotter has no snapshotAndDiffSince');
    expect(first.tree).toBe(await snap.snapshot());
    const firstDiff = await first.diff;
    expect(firstDiff.delta.files.map((file) => [file.path, file.status, file.added])).toEqual([['a.txt', 'A', 1]]);
    expect(firstDiff).toEqual(await snap.diffSince?.(base, first.tree, base));

    await repo.write('b.txt', 'two\nlines\n');
    const second = await snap.snapshotAndDiffSince?.(first.tree, base);
    const secondDiff = await second?.diff;
    expect(secondDiff?.delta.files.map((file) => file.path)).toEqual(['b.txt']);
    expect(secondDiff?.filesSinceBase.map((file) => file.path)).toEqual(['a.txt', 'b.txt']);
    // Nothing changed since: an empty delta, the files since the start unchanged.
    const third = await snap.snapshotAndDiffSince?.(second?.tree ?? '', base);
    expect(third?.tree).toBe(second?.tree);
    expect((await third?.diff)?.delta).toMatchObject({ empty: true, files: [] });
    expect((await third?.diff)?.filesSinceBase.map((file) => file.path)).toEqual(['a.txt', 'b.txt']);
  });

  test("a failed snapshot of a turn rejects its tree, and the next one works", async () => {
    const { repo, snap } = await setup();
    const base = await snap.snapshot();
    const stateDir = await tempStateDir();
    const locked = await snapshotterFor(repo.dir, stateDir);
    await writeFile(path.join(stateDir, 'index.lock'), ''); // `git add` cannot take the index
    await repo.write('a.txt', 'one\n');
    await expect(locked.snapshotAndDiffSince?.(base, base)).rejects.toThrow(/index\.lock/);
    await rm(path.join(stateDir, 'index.lock'));
    const next = await locked.snapshotAndDiffSince?.(base, base);
    expect((await next?.diff)?.delta.files.map((file) => file.path)).toEqual(['a.txt']);
  });

  test('onIndexed: called once the work tree is read, and what changes after it is not in the tree', async () => {
    const { repo, snap } = await setup();
    const base = await snap.snapshot();
    // What a check does once it may start: write to the work tree while the tree and diffs are still made.
    let indexedCalls = 0;
    const onIndexed = (): void => {
      indexedCalls += 1;
      writeFileSync(repo.path('artifact.txt'), `written by check run ${indexedCalls}\n`);
    };
    await repo.write('a.txt', 'one\n');
    const tree = await snap.snapshot(undefined, onIndexed);
    expect(indexedCalls).toBe(1);
    expect((await snap.diff(base, tree)).files.map((file) => file.path)).toEqual(['a.txt']);

    await repo.write('b.txt', 'two\n');
    const turn = await snap.snapshotAndDiffSince?.(tree, base, undefined, onIndexed);
    if (turn === undefined) throw new Error('the snapshotter has no snapshotAndDiffSince');
    expect(indexedCalls).toBe(2);
    // The first run's artifact was there before this snapshot; the second run's rewrite of it came after.
    expect((await turn.diff).delta.files.map((file) => [file.path, file.status])).toEqual([['artifact.txt', 'A'], ['b.txt', 'A']]);
    const after = await snap.snapshot();
    expect((await snap.diff(turn.tree, after)).files.map((file) => [file.path, file.status])).toEqual([['artifact.txt', 'M']]);
  });

  test('onIndexed: not called when git add fails', async () => {
    const { repo, snap } = await setup();
    const base = await snap.snapshot();
    const stateDir = await tempStateDir();
    const locked = await snapshotterFor(repo.dir, stateDir);
    await writeFile(path.join(stateDir, 'index.lock'), '');
    let indexed = false;
    await expect(locked.snapshot(undefined, () => (indexed = true))).rejects.toThrow(/index\.lock/);
    await expect(locked.snapshotAndDiffSince?.(base, base, undefined, () => (indexed = true))).rejects.toThrow(/index\.lock/);
    expect(indexed).toBe(false);
  });

  test('a state directory inside the workspace stays out of the snapshot', async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'README.md': 'hello\n' } });
    const snap = await snapshotterFor(repo.dir, path.join(repo.dir, '.goald-state'));
    expect(await snap.snapshot()).toBe(await repo.git('rev-parse', 'HEAD^{tree}'));
  });

  test("what goald writes in a GOALD_HOME inside the workspace stays out of the snapshot; a file added there does not", async () => {
    const repo = await gitdir({ initialCommit: true, files: { 'README.md': 'hello\n' } });
    // Named through a symlink, with glob characters in its name: both must still find it.
    const home = repo.path('.local/state/goald [1]');
    await repo.write('.local/state/goald [1]/state.json', '{}\n');
    await repo.write('.local/state/goald [1]/.state.json.1.tmp', '{}\n');
    await repo.write('.local/state/goald [1]/goals/g1/turns.jsonl', '{}\n');
    const linked = path.join(await tempStateDir(), 'home-link');
    await symlink(home, linked);
    const ws = await resolveWorkspace(repo.dir);
    const snap = await createSnapshotter({ workspace: ws.root, gitDir: ws.gitDir, objectsDir: ws.objectsDir, stateDir: await tempStateDir(), goaldHome: linked });
    const before = await snap.snapshot();
    expect(before).toBe(await repo.git('rev-parse', 'HEAD^{tree}'));
    await repo.write('.local/state/goald [1]/state.json', '{"goals":[]}\n');
    await repo.write('.local/state/goald [1]/daemon.log', 'started\n');
    await repo.write('.local/state/goald [1]/cache/compile/x.v8', 'bytes');
    await repo.write('.local/state/goald [1]/planted.sh', 'echo hi\n');
    await repo.write('.local/other.txt', 'mine\n');
    const delta = await snap.diff(before, await snap.snapshot());
    expect(delta.files.map((file) => file.path)).toEqual(['.local/other.txt', '.local/state/goald [1]/planted.sh']);
  });

  test('patch returns the unified diff, cut to maxChars with a marker saying how much', async () => {
    const { repo, snap } = await setup();
    const before = await snap.snapshot();
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n');
    await repo.write('big.txt', `${lines}\n`);
    const after = await snap.snapshot();

    const full = await snap.patch(before, after, 1_000_000);
    expect(full).toMatch(/^diff --git a\/big\.txt b\/big\.txt\n/);
    expect(full).toContain('+line 399 ');

    const cut = await snap.patch(before, after, 2_000);
    expect(cut.length).toBeLessThanOrEqual(2_000);
    expect(cut.startsWith('diff --git a/big.txt b/big.txt\n')).toBe(true);
    const marker = /\[goald: patch cut here, (\d+) more lines \((\d+) bytes\) not shown\]\n$/.exec(cut);
    expect(marker).not.toBeNull();
    const shown = cut.slice(0, marker?.index);
    expect(full.startsWith(shown)).toBe(true);
    expect(Number(marker?.[1])).toBe(full.slice(shown.length).split('\n').length - 1);
    expect(Number(marker?.[2])).toBe(Buffer.byteLength(full.slice(shown.length)));
  });

  test('a patch far larger than maxChars is streamed, counted and cut', async () => {
    const { repo, snap } = await setup();
    const before = await snap.snapshot();
    await repo.write('huge.txt', `${'y'.repeat(99)}\n`.repeat(20_000));
    const after = await snap.snapshot();
    const cut = await snap.patch(before, after, 300);
    expect(cut.length).toBeLessThanOrEqual(300);
    const marker = /(\d+) more lines \((\d+) bytes\)/.exec(cut);
    expect(Number(marker?.[1])).toBeGreaterThan(19_990);
    expect(Number(marker?.[2])).toBeGreaterThan(1_990_000);
  });
});

describe('cutPatch', () => {
  test('leaves text that fits alone and keeps whole lines when cutting', () => {
    const text = Array.from({ length: 50 }, (_, i) => `+${i}`).join('\n') + '\n';
    const cut = cutPatch(text, 100);
    expect(cut.length).toBeLessThanOrEqual(100);
    const [shown] = cut.split('[goald:');
    expect(shown?.endsWith('\n')).toBe(true);
    expect(text.startsWith(shown ?? '')).toBe(true);
  });

  test('a budget smaller than the marker still respects maxChars', () => {
    expect(cutPatch('a\n'.repeat(100), 10).length).toBeLessThanOrEqual(10);
    expect(cutPatch('a\n'.repeat(100), 0)).toBe('');
  });
});
