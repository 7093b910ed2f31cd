// bwrap's probe, remembered across processes. Without it every `goald start --foreground` starts one
// `bwrap … true` (a process start and a namespace set-up) before its first check, for an answer that changes
// only when the machine does. Only a working bwrap is remembered, under a key of everything that answer
// depends on: the executable (path, inode, mode, owner, size, times), the network setting, the boot, this
// process's namespaces (another container is another mount namespace), its seccomp, no_new_privs and LSM
// state, and the user-namespace sysctls. A key that differs in anything means a fresh probe; so does
// `goald sandbox`, which is asked to diagnose.
//
// The file lives in GOALD_HOME, which no sandboxed turn can see. It is read and written only when GOALD_HOME
// and its cache directory are this user's alone, since the probe runs before GOALD_HOME is checked. A stale
// or forged entry can only make goald use bwrap where bwrap fails: the turns and checks then fail, with
// bwrap's own message. It can never make goald skip the sandbox: an entry says only that bwrap works.

import { mkdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { isPrivateDirectory } from '../../state/goald-home.js';

/** GOALD_HOME/cache/<this>: the remembered probe. */
export const PROBE_CACHE_FILE = path.join('cache', 'bwrap-probe');

// Sysctls that decide whether an unprivileged process may create a user namespace (Debian, every kernel,
// Ubuntu 24.04+); absent ones read as empty.
const USERNS_SYSCTLS = [
  '/proc/sys/kernel/unprivileged_userns_clone',
  '/proc/sys/user/max_user_namespaces',
  '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
];
const NAMESPACES = ['user', 'mnt', 'pid', 'net', 'ipc'];
const STATUS_FIELDS = /^(NoNewPrivs|Seccomp|Seccomp_filters|CapBnd):.*$/gm;
// Keys kept: the few bwraps and network settings one user's goals use.
const MAX_KEYS = 8;

/** Everything the probe's answer for `executable` depends on, as one string; null when any part cannot be read. */
export function probeKey(executable: string, network: boolean): string | null {
  try {
    const stats = statSync(executable);
    const status = readFileSync('/proc/self/status', 'utf8').match(STATUS_FIELDS) ?? [];
    return JSON.stringify([
      executable,
      [stats.dev, stats.ino, stats.mode, stats.uid, stats.size, stats.mtimeMs, stats.ctimeMs],
      network,
      process.getuid?.() ?? null,
      readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      NAMESPACES.map((name) => readlinkSync(`/proc/self/ns/${name}`)),
      status.join(' '),
      readOptional('/proc/self/attr/current'),
      USERNS_SYSCTLS.map(readOptional),
    ]);
  } catch {
    return null; // not Linux, or /proc not mounted: no key, so always a probe
  }
}

/** True when `file` remembers a working bwrap under exactly `key`. */
export function isRememberedWorking(file: string, key: string): boolean {
  return isPrivateCacheDir(file) && readKeys(file).includes(key);
}

/**
 * Remembers that bwrap works under `key`, beside the other keys remembered (another bwrap, the other
 * network setting), the most recent few. Written whole: a temp file renamed into place. Never throws.
 */
export function rememberWorking(file: string, key: string): void {
  const cacheDir = path.dirname(file);
  // This runs before GOALD_HOME is checked: into a home and a cache directory that are this user's only.
  if (!isPrivateDirectory(path.dirname(cacheDir))) return;
  try {
    // The cache directory, not GOALD_HOME itself: a home that does not exist yet is made, and checked, elsewhere.
    mkdirSync(cacheDir, { mode: 0o700 });
  } catch {
    // There already (checked next).
  }
  if (!isPrivateDirectory(cacheDir)) return;
  const keys = [key, ...readKeys(file).filter((other) => other !== key)].slice(0, MAX_KEYS);
  const temp = `${file}.${process.pid}.tmp`;
  try {
    // `wx`: a file already at the temp name (a dead writer's) is never written through.
    writeFileSync(temp, keys.map((one) => `${one}\n`).join(''), { mode: 0o600, flag: 'wx' });
    renameSync(temp, file);
  } catch {
    rmSync(temp, { force: true }); // a full disk, or a dead writer's temp file: the next start simply probes again
  }
}

/** Forgets every remembered answer (a bwrap was just found not to work: trust none without a probe). Never throws. */
export function forgetRemembered(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // A home goald cannot write: nothing it could do about the entry.
  }
}

function isPrivateCacheDir(file: string): boolean {
  const cacheDir = path.dirname(file);
  return isPrivateDirectory(path.dirname(cacheDir)) && isPrivateDirectory(cacheDir);
}

// Each line one key (JSON: no raw line break); nothing when the file is missing or unreadable.
function readKeys(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((line) => line !== '');
  } catch {
    return [];
  }
}

function readOptional(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}
