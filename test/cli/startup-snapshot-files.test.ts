// The launcher (bin/startup-snapshot.sh, under /bin/sh) and goald (snapshot-files.ts) must name the same
// snapshot directory for an install and the same GOALD_HOME, whatever bytes the install's path holds; and
// the identity goald writes must be what the launcher's `stat` prints.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { describe, expect, test } from 'vitest';

import { currentIdentity, snapshotDir } from '../../src/cli/startup-snapshot/snapshot-files.js';
import { repoRoot } from '../helpers/run-goald.js';

const script = path.join(repoRoot, 'bin', 'startup-snapshot.sh');

/** The directory the launcher looks in, for an install at `install` (its bin/goald resolved) and `env`. */
function launcherDir(install: string, env: NodeJS.ProcessEnv, cwd = '/'): string {
  return execFileSync('/bin/sh', ['-c', `goald_self="$1/bin/goald"; shift; . "$0"; printf %s "$goald_dir"`, script, install, 'start', '--foreground'], {
    cwd,
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
  });
}

describe('the start-up snapshot directory', () => {
  test.each([
    ['/usr/lib/node_modules/goald'],
    ['/home/me/my projects/goald'],
    ['/home/me/dépôt/goald'],
    ['/opt/a+b/c=d/goald_1.0'],
    ['/srv/x  y/__/goald'],
  ])('is the same for goald and the launcher: %s', (install) => {
    const home = '/var/lib/some home/goald';
    expect(launcherDir(install, { GOALD_HOME: home })).toBe(snapshotDir(home, path.join(install, 'dist', 'bundle')));
  });

  test('GOALD_HOME is found as goald finds it: relative to the working directory, XDG_STATE_HOME, HOME', () => {
    const install = '/opt/goald';
    const bundle = path.join(install, 'dist', 'bundle');
    expect(launcherDir(install, { GOALD_HOME: 'rel/h' }, '/tmp')).toBe(snapshotDir('/tmp/rel/h', bundle));
    expect(launcherDir(install, { XDG_STATE_HOME: '/state', HOME: '/home/me' })).toBe(snapshotDir('/state/goald', bundle));
    // A relative XDG_STATE_HOME is ignored, as the XDG spec says; an empty GOALD_HOME is unset.
    expect(launcherDir(install, { GOALD_HOME: '', XDG_STATE_HOME: 'state', HOME: '/home/me' })).toBe(snapshotDir('/home/me/.local/state/goald', bundle));
    // No home to be found: no snapshot, the launcher leaves it to goald.
    expect(launcherDir(install, {})).toBe('');
    // Not a foreground start: not looked for.
    const background = execFileSync('/bin/sh', ['-c', `goald_self=/opt/goald/bin/goald; . "$0"; printf %s "$goald_dir"`, script, 'start', 'x'], { env: { PATH: process.env.PATH, GOALD_HOME: '/h' }, encoding: 'utf8' });
    expect(background).toBe('');
  });

  test("goald's identity of the node binary and the bundle is what the launcher's stat prints", () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'gss-')));
    try {
      writeFileSync(path.join(dir, 'bin.js'), '// a bundle\n');
      const printed = execFileSync('stat', ['-L', '-c', '%a:%d:%i:%s:%Y:%Z', '--', process.execPath, path.join(dir, 'bin.js')], { encoding: 'utf8' });
      expect(currentIdentity(dir)).toBe(printed);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
