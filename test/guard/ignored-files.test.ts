import { describe, expect, test } from 'vitest';

import { DEFAULT_GUARD } from '../../src/config/defaults.js';
import { goaldPathsIn } from '../../src/guard/goald-paths.js';
import { judgeIgnoredChanges } from '../../src/guard/ignored-files.js';
import { protectionOf } from '../../src/guard/inspect-turn.js';
import type { IgnoredChange } from '../../src/workspace/ignored-changes.js';

// GOALD_HOME inside the workspace: its state churns while goals run (not the agent's), its other files are goald's.
const goaldPaths = goaldPathsIn('/w', { home: '/w/home', userConfig: '/elsewhere/config.json' });
// The supervisor's inputs: protectionOf bound to the goal's guard.protect globs, and goald's own paths.
const judgedAs = (protect: readonly string[]) => ({ protection: (file: string) => protectionOf(file, { goaldPaths, protect }), goaldPaths });
const changed = (...paths: string[]): IgnoredChange[] => paths.map((file) => ({ path: file, predates: file.includes('runner') }));

describe('judgeIgnoredChanges', () => {
  test('one note per top directory, naming the files (an in-place edit said so); nothing when nothing changed', () => {
    const report = judgeIgnoredChanges({ files: changed('node_modules/.bin/runner', 'node_modules/a.js', '.env'), more: 0 }, judgedAs(DEFAULT_GUARD.protect));
    expect(report.tamper).toEqual([]);
    expect(report.notes).toEqual([
      { path: '.env', kind: 'hidden-change', detail: expect.stringMatching(/^1 file git ignores changed during the agent's turns.*: \.env$/) },
      {
        path: 'node_modules/',
        kind: 'hidden-change',
        detail: expect.stringContaining(': node_modules/.bin/runner (edited in place: older than the goal), node_modules/a.js'),
      },
    ]);
    expect(judgeIgnoredChanges({ files: [], more: 0 }, judgedAs(DEFAULT_GUARD.protect))).toEqual({ tamper: [], notes: [] });
  });

  test("a protected path (guard.protect, goald's own files) is tamper; goald's churning state is neither", () => {
    const report = judgeIgnoredChanges(
      { files: changed('node_modules/.bin/runner', '.goald/x', 'home/state.json', 'home/keys.txt', 'dist/app.js'), more: 0 },
      judgedAs(['node_modules/**']),
    );
    expect(report.tamper.map((finding) => [finding.path, finding.kind, finding.detail.split(' changed')[0]])).toEqual([
      ['node_modules/.bin/runner', 'protected-path', 'a protected path (guard.protect)'],
      ['.goald/x', 'protected-path', "goald's own file"],
      ['home/keys.txt', 'protected-path', "goald's own file"],
    ]);
    expect(report.notes.map((note) => note.path)).toEqual(['dist/']);
  });

  test('files in a nested repository get a note of their own, saying the snapshots hold its commit only', () => {
    const report = judgeIgnoredChanges({ files: [{ path: 'vendor/lib/run.sh', predates: true, repo: 'vendor/lib' }, { path: 'vendor/x.log', predates: false }], more: 0 }, judgedAs(DEFAULT_GUARD.protect));
    expect(report.notes).toEqual([
      { path: 'vendor/', kind: 'hidden-change', detail: expect.stringMatching(/^1 file git ignores changed .*: vendor\/x\.log$/) },
      { path: 'vendor/lib/', kind: 'hidden-change', detail: expect.stringMatching(/^1 file in the nested repository vendor\/lib\/ changed .*the snapshots hold its commit, not its files.*: vendor\/lib\/run\.sh \(edited in place/) },
    ]);
  });

  test('a directory goald cannot list: tamper when the agent made it so during its turns, else a note', () => {
    const report = judgeIgnoredChanges(
      { files: [], more: 0, unreadable: [{ path: 'hide/', changed: true }, { path: 'pgdata/', changed: false }] },
      judgedAs(DEFAULT_GUARD.protect),
    );
    expect(report.tamper).toEqual([{ path: 'hide/', kind: 'unreadable-dir', detail: expect.stringContaining("made unreadable during the agent's turns") }]);
    expect(report.notes).toEqual([{ path: 'pgdata/', kind: 'hidden-change', detail: expect.stringContaining('goald cannot list this directory') }]);
  });

  test('many top directories: the last note covers the rest; files not looked at are counted', () => {
    const files = changed(...Array.from({ length: 12 }, (_, index) => `dir${String(index).padStart(2, '0')}/f.js`));
    const report = judgeIgnoredChanges({ files, more: 40 }, judgedAs(DEFAULT_GUARD.protect));
    expect(report.notes).toHaveLength(9);
    expect(report.notes[7]).toMatchObject({ path: '.', detail: expect.stringMatching(/^5 files .*dir07\/f\.js.* \(under 5 more paths\)$/) });
    expect(report.notes[8]).toMatchObject({ path: '.', detail: expect.stringMatching(/^40 more ignored files/) });
  });
  test("a nested repository's config or hook naming a program is tamper, beside the note for its files", () => {
    const report = judgeIgnoredChanges(
      { files: changed('lib/run.sh'), more: 0, gitControl: [{ repo: 'lib', file: 'lib/.git/config', names: 'core.fsmonitor' }] },
      judgedAs(DEFAULT_GUARD.protect),
    );
    expect(report.tamper).toEqual([{ path: 'lib/.git/config', kind: 'git-control', detail: expect.stringContaining('names core.fsmonitor') as string }]);
    expect(report.notes.map((note) => note.path)).toEqual(['lib/']);
  });
});
