// Whether bubblewrap works on this machine: found, and able to create the namespaces a turn needs. Probed
// once per executable and network setting per process (a daemon start), by running `true` inside; a
// working bwrap is also remembered across processes (probe-cache.ts).

import path from 'node:path';
import { executableProblem } from '../process/find-on-path.js';
import { findTool } from '../process/goald-tools.js';
import { spawnGroupLeader } from '../process/spawn.js';
import { forgetRemembered, isRememberedWorking, PROBE_CACHE_FILE, probeKey, rememberWorking } from './probe-cache.js';

export type BwrapProbe =
  | { ok: true; executable: string }
  | { ok: false; executable: string | null; problem: string; fix: string };

// A probe that takes longer than this is a broken bwrap (it normally takes a few milliseconds).
const PROBE_TIMEOUT_MS = 10_000;
const INSTALL_FIX = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or set sandbox to "off"';
const USERNS_FIX =
  'allow unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian), sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04+), or raise user.max_user_namespaces; or set sandbox to "off"';

const probes = new Map<string, Promise<BwrapProbe>>();

/** The flags every sandboxed process gets besides its mounts (also what the probe tries). */
export function namespaceArgs(network: boolean): string[] {
  return ['--unshare-pid', '--unshare-ipc', ...(network ? [] : ['--unshare-net']), '--die-with-parent', '--cap-drop', 'ALL'];
}

export interface ProbeOptions {
  /** GOALD_HOME: where a working bwrap is remembered across processes (probe-cache.ts); none without it. */
  goaldHome?: string;
  /** Probe even when an answer is remembered (`goald sandbox`, which is asked to diagnose). */
  fresh?: boolean;
}

/**
 * Probes `configured` (sandbox.bwrap) or `bwrap` on PATH; cached for the life of the process, and a working
 * bwrap remembered in `goaldHome` across processes while nothing it depends on changes.
 */
export function probeBwrap(configured: string | null, network: boolean, env: NodeJS.ProcessEnv = process.env, options: ProbeOptions = {}): Promise<BwrapProbe> {
  const key = `${configured ?? ''}\0${String(network)}`;
  let probe = options.fresh === true ? undefined : probes.get(key);
  if (probe === undefined) {
    probe = runProbe(configured, network, env, options);
    probes.set(key, probe);
  }
  return probe;
}

async function runProbe(configured: string | null, network: boolean, env: NodeJS.ProcessEnv, options: ProbeOptions): Promise<BwrapProbe> {
  const executable = configured ?? findTool('bwrap', { env });
  if (executable === null) return { ok: false, executable: null, problem: 'bwrap (bubblewrap) is not installed or not on PATH', fix: INSTALL_FIX };
  if (executableProblem(executable) !== null) {
    return { ok: false, executable, problem: `sandbox.bwrap: ${executable} is not an executable file`, fix: INSTALL_FIX };
  }
  const remembered = options.goaldHome === undefined ? null : path.join(options.goaldHome, PROBE_CACHE_FILE);
  const key = remembered === null ? null : probeKey(executable, network);
  if (remembered !== null && key !== null && options.fresh !== true && isRememberedWorking(remembered, key)) return { ok: true, executable };
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', ...namespaceArgs(network), '--', 'true'];
  const outcome = await runQuietly(executable, args);
  if (outcome.code === 0) {
    if (remembered !== null && key !== null) rememberWorking(remembered, key);
    return { ok: true, executable };
  }
  if (remembered !== null) forgetRemembered(remembered);
  const said = outcome.stderr.trim().split('\n')[0] ?? '';
  return {
    ok: false,
    executable,
    problem: `bwrap cannot create the sandbox's namespaces${said === '' ? '' : `: ${said}`}`,
    fix: USERNS_FIX,
  };
}

// Runs the probe with its output captured; exit code null when it could not start or timed out.
function runQuietly(executable: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    let stderr = '';
    let child;
    try {
      child = spawnGroupLeader(executable, args, { cwd: '/', env: process.env, stdin: 'ignore' });
    } catch (error) {
      resolve({ code: null, stderr: error instanceof Error ? error.message : String(error) });
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stdout.resume();
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stderr: error.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

