// The view → bwrap arguments: mounts shallowest first (the most specific rule wins), hidden directories
// made read-only after everything mounted below them, hidden files covered by an empty file.

import { describe, expect, it } from 'vitest';
import { toBwrapArgs } from '../../src/sandbox/bwrap-args.js';
import type { SandboxView } from '../../src/sandbox/types.js';

const view = (parts: Partial<SandboxView>): SandboxView => ({ writable: [], readable: [], hidden: [], private: ['/tmp'], network: true, absent: [], ...parts });
const directories = new Set(['/home/u/.local/state/goald', '/home/u/.ssh', '/tmp/ws', '/tmp/ws/.goald-home', '/home/u/.local/state/goald/goals/g/turn-1.state']);
const options = { cwd: '/tmp/ws', emptyFile: '/home/u/.local/state/goald/sandbox-empty', isDirectory: (file: string) => directories.has(file) };

/** The mount operations only, as [flag, destination] pairs. */
function mounts(args: string[]): string[][] {
  const pairs: string[][] = [];
  for (let index = 0; index < args.length; index += 1) {
    const flag = args[index] ?? '';
    if (flag === '--bind' || flag === '--ro-bind') {
      pairs.push([flag, args[index + 2] ?? '']);
      index += 2;
    } else if (flag === '--tmpfs' || flag === '--remount-ro') {
      pairs.push([flag, args[index + 1] ?? '']);
      index += 1;
    }
  }
  return pairs;
}

describe('toBwrapArgs', () => {
  it('mounts a turn: root read-only, private /tmp, then each path after its parents, read-only remounts last', () => {
    const args = toBwrapArgs(
      view({
        writable: ['/tmp/ws', '/home/u/.local/state/goald/goals/g/turn-1.state'],
        readable: ['/home/u/.local/state/goald/goals/g/turn-1.prompt.txt'],
        hidden: ['/home/u/.local/state/goald', '/home/u/.ssh', '/home/u/.npmrc', '/tmp/ws/.goald-home'],
      }),
      options,
    );
    expect(args.slice(0, 7)).toEqual(['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc']);
    expect(mounts(args)).toEqual([
      ['--ro-bind', '/'],
      ['--tmpfs', '/tmp'],
      ['--bind', '/tmp/ws'],
      ['--tmpfs', '/home/u/.ssh'],
      ['--ro-bind', '/home/u/.npmrc'],
      ['--tmpfs', '/tmp/ws/.goald-home'],
      ['--tmpfs', '/home/u/.local/state/goald'],
      ['--ro-bind', '/home/u/.local/state/goald/goals/g/turn-1.prompt.txt'],
      ['--bind', '/home/u/.local/state/goald/goals/g/turn-1.state'],
      ['--remount-ro', '/home/u/.ssh'],
      ['--remount-ro', '/tmp/ws/.goald-home'],
      ['--remount-ro', '/home/u/.local/state/goald'],
    ]);
    // A hidden file is covered by goald's empty file.
    expect(args.join(' ')).toContain(`--ro-bind ${options.emptyFile} /home/u/.npmrc`);
    expect(args.slice(-10)).toEqual(['--setenv', 'TMPDIR', '/tmp', '--unshare-pid', '--unshare-ipc', '--die-with-parent', '--cap-drop', 'ALL', '--chdir', '/tmp/ws']);
  });

  it('network off adds --unshare-net; on, the host network stays', () => {
    expect(toBwrapArgs(view({ network: false }), options)).toContain('--unshare-net');
    expect(toBwrapArgs(view({ network: true }), options)).not.toContain('--unshare-net');
  });
});
