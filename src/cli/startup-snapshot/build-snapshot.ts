// Takes the start-up snapshot for this node and this goald, in the background (`goald startup-snapshot`,
// started detached at the end of a start that found none current; not for users). Nothing here is on
// anyone's path: at low priority, one build at a time per snapshot directory, and any doubt (a home that
// is not private, a build or a self-test that fails) leaves no blob, so the launcher keeps starting goald
// the usual way. The blob holds goald's own code, which runs as the judge: it lives in GOALD_HOME, which
// sandboxed turns never see, in a directory of this user's that nobody else can write, like the compile
// cache; and it is published (renamed into place, its identity file last) only after a process started
// from it has answered.

import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { isPrivateDirectory, resolveGoaldHome } from '../../../state/goald-home.js';
import { BLOB_NAME, IDENTITY_NAME, currentIdentity, isPrivateFile, snapshotDir } from './snapshot-files.js';

const fs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs');

const BUILD_TIMEOUT_MS = 120_000;
// A lock older than this was left by a build that died: taken over.
const STALE_LOCK_MS = 2 * BUILD_TIMEOUT_MS;
const STALE_SNAPSHOT_MS = 30 * 24 * 60 * 60 * 1000;

/** Builds the snapshot for the bundle in `bundleDir` unless a current one exists; returns the exit code. */
export function buildStartupSnapshot(bundleDir: string, env: NodeJS.ProcessEnv = process.env): number {
  const home = resolveGoaldHome(env);
  if (!isPrivateDirectory(home)) return 1;
  const dir = snapshotDir(home, bundleDir);
  if (!makePrivateDirectory(path.dirname(dir)) || !makePrivateDirectory(dir)) return 1;
  const identity = currentIdentity(bundleDir);
  if (identity === null) return 1;
  const blob = path.join(dir, BLOB_NAME);
  // Current, and as private as the launcher requires (a blob made readable to others is replaced).
  if (readText(path.join(dir, IDENTITY_NAME)) === identity && isPrivateFile(blob)) return 0;
  const lock = path.join(dir, '.building');
  if (!takeLock(lock)) return 0;
  try {
    try {
      process.getBuiltinModule('node:os').setPriority(19);
    } catch {
      // not allowed here: it builds at the usual priority
    }
    const temp = path.join(dir, `.${BLOB_NAME}.${process.pid}.tmp`);
    // Nothing of the user's environment: a module that read one at load would keep it in the blob.
    const built = spawnSync(process.execPath, ['--snapshot-blob', temp, '--build-snapshot', path.join(bundleDir, 'startup-snapshot-builder.js')], {
      cwd: dir,
      env: { GOALD_SNAPSHOT_BUNDLE: bundleDir },
      stdio: 'ignore',
      timeout: BUILD_TIMEOUT_MS,
    });
    const answered = built.status === 0 && selfTest(temp, dir);
    if (!answered) {
      fs().rmSync(temp, { force: true });
      return 1;
    }
    fs().chmodSync(temp, 0o600);
    fs().renameSync(temp, blob);
    const identityTemp = path.join(dir, `.${IDENTITY_NAME}.${process.pid}.tmp`);
    fs().writeFileSync(identityTemp, identity, { mode: 0o600 });
    fs().renameSync(identityTemp, path.join(dir, IDENTITY_NAME));
    removeStale(path.dirname(dir), dir);
    return 0;
  } finally {
    fs().rmSync(lock, { recursive: true, force: true });
  }
}

// A process started from the new blob must come up and answer before anyone runs it.
function selfTest(blob: string, cwd: string): boolean {
  const run = spawnSync(process.execPath, ['--snapshot-blob', blob, 'goald-snapshot-self-test'], { cwd, env: {}, encoding: 'utf8', timeout: 30_000 });
  return run.status === 0 && /^ok \d+\n$/.test(run.stdout);
}

// Snapshots of installs not started for a month (a goald removed, a checkout deleted: ~7 MB each). One in
// use but not rebuilt for that long goes too, and the next foreground start builds it again.
function removeStale(parent: string, current: string): void {
  try {
    for (const entry of fs().readdirSync(parent)) {
      const other = path.join(parent, entry);
      if (other !== current && Date.now() - fs().statSync(other).mtimeMs > STALE_SNAPSHOT_MS) fs().rmSync(other, { recursive: true, force: true });
    }
  } catch {
    // Only space: the next build looks again.
  }
}

function takeLock(lock: string): boolean {
  try {
    fs().mkdirSync(lock, { mode: 0o700 });
    return true;
  } catch {
    try {
      if (Date.now() - fs().statSync(lock).mtimeMs < STALE_LOCK_MS) return false;
      fs().rmSync(lock, { recursive: true, force: true });
      fs().mkdirSync(lock, { mode: 0o700 });
      return true;
    } catch {
      return false;
    }
  }
}

function makePrivateDirectory(dir: string): boolean {
  try {
    fs().mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    return false;
  }
  return isPrivateDirectory(dir);
}

function readText(file: string): string | null {
  try {
    return fs().readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
