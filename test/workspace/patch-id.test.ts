// The turn's patch id is computed in goald (src/workspace/patch-id.ts) and must equal what the real
// `git diff-tree -p --full-index | git patch-id --stable` prints; the files changed since the start come
// from the same git process as the turn's delta and must equal a diff from the start. Both are checked
// here against the installed git on hand-picked diffs and on seeded random edit sequences.

import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, symlink, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { describe, expect, onTestFinished, test } from 'vitest';

import { resolveWorkspace } from '../../src/workspace/find-workspace.js';
import { DiffTreeStream, stdinFor, type PairRequest } from '../../src/workspace/diff-tree-stream.js';
import { stablePatchId } from '../../src/workspace/patch-id.js';
import { createSnapshotter } from '../../src/workspace/snapshot.js';
import type { Snapshotter } from '../../src/workspace/types.js';
import { gitdir, type Gitdir } from '../helpers/gitdir.js';

const DIFF_ARGS = ['diff-tree', '-r', '--no-renames', '--no-color', '--no-ext-diff', '--no-textconv', '-p', '--full-index'];

// The snapshots' objects live in the goal's own object store, beside the repository's.
let objectsEnv: Record<string, string> = {};

/** Runs git with `input` on stdin and returns stdout as bytes. */
function gitBytes(cwd: string, args: string[], input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C' };
    for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES']) delete env[name];
    Object.assign(env, objectsEnv);
    const child = spawn('git', args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`git ${args.join(' ')}: ${err}`))));
    child.stdin.end(input);
  });
}

/** What the real git says the patch id of from..to is (null when it prints none). */
async function gitPatchId(repo: Gitdir, from: string, to: string): Promise<string | null> {
  const patch = await gitBytes(repo.dir, [...DIFF_ARGS, from, to]);
  const printed = (await gitBytes(repo.dir, ['patch-id', '--stable'], patch)).toString();
  return printed.split(' ')[0]?.trim() || null;
}

async function snapshotterFor(repo: Gitdir): Promise<Snapshotter> {
  const ws = await resolveWorkspace(repo.dir);
  const stateDir = await mkdtemp(path.join(tmpdir(), 'goald-state-'));
  onTestFinished(() => rm(stateDir, { recursive: true, force: true }));
  objectsEnv = { GIT_OBJECT_DIRECTORY: path.join(stateDir, 'objects'), GIT_ALTERNATE_OBJECT_DIRECTORIES: ws.objectsDir };
  return createSnapshotter({ workspace: ws.root, gitDir: ws.gitDir, objectsDir: ws.objectsDir, indexFile: ws.indexFile, stateDir });
}

/**
 * The next tree as a turn takes it (snapshotAndDiffSince: the snapshot and both diffs from one shell), checked
 * against snapshot() and diffSince(), which expectSameAsGit checks against the real git.
 */
async function turnSnapshot(snap: Snapshotter, trees: readonly string[]): Promise<string> {
  const previous = trees.at(-1) ?? '';
  const base = trees[0] ?? '';
  const taken = await snap.snapshotAndDiffSince?.(previous, base);
  if (taken === undefined) throw new Error('the snapshotter has no snapshotAndDiffSince');
  expect(await snap.snapshot()).toBe(taken.tree);
  expect(await taken.diff).toEqual(await snap.diffSince?.(previous, taken.tree, base));
  return taken.tree;
}

/** Checks every consecutive pair of trees, and every tree against the first, against the real git. */
async function expectSameAsGit(repo: Gitdir, snap: Snapshotter, trees: string[]): Promise<void> {
  const base = trees[0] ?? '';
  for (let i = 1; i < trees.length; i++) {
    const from = trees[i - 1] ?? '';
    const to = trees[i] ?? '';
    const patch = await gitBytes(repo.dir, [...DIFF_ARGS, from, to]);
    const expected = await gitPatchId(repo, from, to);
    expect(stablePatchId(patch), `patch id of step ${i}`).toBe(expected);
    const delta = await snap.diff(from, to);
    expect(delta.patchId, `snapshotter patch id of step ${i}`).toBe(expected);
    if (from !== to) expect(delta.patch?.text).toBe(patch.toString('utf8'));

    const sinceStart = await snap.diffSince?.(from, to, base);
    expect(sinceStart?.delta, `delta of step ${i}`).toEqual(delta);
    // Files since the start, from the same git run, equal a plain diff from the start.
    const fromStart = base === to ? [] : ((await snap.files?.(base, to)) ?? []);
    expect(sinceStart?.filesSinceBase, `files since the start at step ${i}`).toEqual(fromStart);
    expect((await snap.diff(base, to)).patchId, `patch id from the start at step ${i}`).toBe(await gitPatchId(repo, base, to));
  }
}

const text = (lines: number, tag = 'line'): string => Array.from({ length: lines }, (_, i) => `${tag} ${i + 1}`).join('\n') + '\n';

describe('stable patch id and files since the start, against the real git', () => {
  test('hand-picked diffs: binary, mode, type change, no trailing newline, whitespace, CRLF, NUL late in a text file', async () => {
    const repo = await gitdir({
      initialCommit: true,
      files: {
        'a.txt': text(40),
        'no-eol.txt': 'one\ntwo',
        'bin.dat': Buffer.from([0, 1, 2, 3, 255, 0, 7]),
        'run.sh': '#!/bin/sh\necho hi\n',
        'crlf.txt': 'a\r\nb\r\nc\r\n',
        'ws.txt': 'alpha beta\n\tgamma\n',
        'one.txt': 'x\n',
        'empty.txt': '',
        'dir with space/tab\there é.txt': 'unicode\n',
      },
    });
    const snap = await snapshotterFor(repo);
    const trees = [await snap.snapshot()];
    const step = async (edit: () => Promise<void>): Promise<void> => {
      await edit();
      trees.push(await turnSnapshot(snap, trees));
    };

    await step(async () => {
      await repo.write('a.txt', text(40).replace('line 20\n', 'line twenty\nline 20b\n'));
      await repo.write('no-eol.txt', 'one\ntwo\n'); // gains its final newline
      await repo.write('bin.dat', Buffer.from([0, 1, 2, 3, 254, 0, 7]));
      await chmod(repo.path('run.sh'), 0o755); // mode only
      await repo.write('crlf.txt', 'a\r\nB\r\nc\r\n');
      await repo.write('new.txt', 'fresh\n');
      await unlink(repo.path('empty.txt'));
    });
    await step(async () => {
      await repo.write('ws.txt', 'alpha  beta\n  gamma\u000b\f\n'); // whitespace only, and \v \f (not spaces to git)
      await repo.write('one.txt', 'y\n'); // @@ -1 +1 @@
      await repo.write('late-nul.txt', `${'t'.repeat(9000)}\nbefore\u0000after\nend\n`); // text: the NUL is past git's 8000-byte sniff
      await rm(repo.path('dir with space/tab\there é.txt'));
      await symlink('a.txt', repo.path('dir with space/tab\there é.txt')); // type change
      await repo.write('empty-new.txt', '');
      await repo.write('new.bin', Buffer.from([0, 0, 0, 1]));
      await repo.write('no-eol.txt', 'one\ntwo\nthree'); // loses it again
    });
    await step(async () => {
      await repo.write('a.txt', text(40)); // changed, then reverted to the start
      await unlink(repo.path('bin.dat'));
      await rm(repo.path('new.txt'));
      await repo.write('moved/new.txt', 'fresh\n'); // renames are off: an add and a delete
      await repo.write('run.sh', '#!/bin/sh\necho bye\n');
      await chmod(repo.path('run.sh'), 0o644); // mode back, content changed
    });
    await step(async () => {
      await repo.write('one.txt', 'y\n'); // nothing changes: equal trees
    });
    await step(async () => {
      // Everything back to the start: the diff from the start is empty.
      await repo.git('checkout', '--', '.');
      await repo.git('clean', '-fdq');
      await chmod(repo.path('run.sh'), 0o644);
    });
    expect(trees.at(-1)).toBe(trees[0]);
    await expectSameAsGit(repo, snap, trees);

    // The stream parser gives the same however git's output is cut into chunks.
    const pairs: PairRequest[] = trees.slice(1).flatMap((to, i) => [
      { from: trees[i] ?? '', to, withPatch: true },
      { from: trees[0] ?? '', to, withPatch: false },
    ]);
    const output = await gitBytes(
      repo.dir,
      ['diff-tree', '--stdin', '-r', '--no-renames', '--no-color', '--no-ext-diff', '--no-textconv', '--raw', '--numstat', '-p', '--full-index', '-z'],
      Buffer.from(stdinFor(pairs)),
    );
    const parse = (size: number): unknown => {
      const stream = new DiffTreeStream(pairs, { keepPatchBytes: 200 });
      for (let at = 0; at < output.length; at += size) stream.push(output.subarray(at, at + size));
      return stream.finish();
    };
    const whole = parse(output.length);
    expect(parse(1)).toEqual(whole);
    expect(parse(7)).toEqual(whole);
    expect(JSON.stringify(whole)).toContain('"patchCut":true');
  });

  test('output that is not what diff-tree prints is an internal error, not a wrong answer', () => {
    const from = 'a'.repeat(40);
    const to = 'b'.repeat(40);
    const stream = new DiffTreeStream([{ from, to, withPatch: true }], { keepPatchBytes: 10 });
    expect(() => stream.push(Buffer.from(`${to} ${from}\n`))).toThrow(/expected the header/);
    const cut = new DiffTreeStream([{ from, to, withPatch: true }], { keepPatchBytes: 10 });
    cut.push(Buffer.from(`${from} ${to}\n:100644 100644 ${'1'.repeat(40)} ${'2'.repeat(40)} M\0a.t`));
    expect(() => cut.finish()).toThrow(/middle of a record/);
    expect(() => stdinFor([{ from: 'HEAD', to, withPatch: false }])).toThrow(/full tree ids/);
  });

  test('seeded random edit sequences', async () => {
    let seed = 20261201;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const names = ['a.txt', 'b.txt', 'c/d.txt', 'e.bin', 'f.txt', 'g h.txt'];
    const pieces = ['x', 'y', ' ', '\t', 'z z', '', '\r', 'ü', '+', '-', '@@ -1 +1 @@', 'diff --git', '\\ no'];
    const line = (): string => Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(pieces)).join('');
    const content = (): string | Buffer => {
      if (random() < 0.1) return Buffer.from(Array.from({ length: 1 + Math.floor(random() * 20) }, () => Math.floor(random() * 4)));
      const body = Array.from({ length: Math.floor(random() * 12) }, line).join('\n');
      return random() < 0.3 ? body : `${body}\n`;
    };

    const repo = await gitdir({ initialCommit: true, files: { 'a.txt': 'start\n', 'f.txt': text(8) } });
    const snap = await snapshotterFor(repo);
    const trees = [await snap.snapshot()];
    const present = new Set(['a.txt', 'f.txt']);
    for (let turn = 0; turn < 24; turn++) {
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
        const name = pick(names);
        const roll = random();
        if (present.has(name) && roll < 0.2) {
          await rm(repo.path(name));
          present.delete(name);
        } else if (present.has(name) && roll < 0.3) {
          await chmod(repo.path(name), random() < 0.5 ? 0o755 : 0o644);
        } else if (name === 'f.txt' && present.has(name) && roll < 0.7) {
          // Small edits inside a longer file: several hunks, context lines, one-line hunks.
          const lines = text(8).split('\n');
          lines[Math.floor(random() * 8)] = line();
          await repo.write(name, lines.join('\n'));
        } else {
          await repo.write(name, content());
          present.add(name);
        }
      }
      trees.push(await turnSnapshot(snap, trees));
    }
    await expectSameAsGit(repo, snap, trees);
  });
});
