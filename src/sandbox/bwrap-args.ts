// A SandboxView as bwrap arguments. Mounts go shallowest first so the most specific rule wins: GOALD_HOME
// inside a writable workspace stays hidden, a worktree inside a hidden directory stays writable, and the
// prompt file shows through the hidden GOALD_HOME. Hidden directories become empty tmpfs mounts made
// read-only last (after anything mounted below them), hidden files an empty read-only file.

import path from 'node:path';
import { namespaceArgs } from './probe.js';
import type { SandboxView } from './types.js';

type Mount = { path: string; kind: 'private' | 'hide' | 'ro' | 'rw' };

// For one path named twice, the later kind wins: writable over readable over hidden.
const KIND_ORDER: Readonly<Record<Mount['kind'], number>> = { private: 0, hide: 1, ro: 2, rw: 3 };

/** The bwrap arguments (before `--` and the command) for `view`, starting in `cwd`. */
export function toBwrapArgs(view: SandboxView, options: { cwd: string; emptyFile: string; isDirectory: (file: string) => boolean }): string[] {
  const mounts: Mount[] = [
    ...view.private.map((file) => ({ path: file, kind: 'private' as const })),
    ...view.hidden.map((file) => ({ path: file, kind: 'hide' as const })),
    ...view.readable.map((file) => ({ path: file, kind: 'ro' as const })),
    ...view.writable.map((file) => ({ path: file, kind: 'rw' as const })),
  ].sort((a, b) => depth(a.path) - depth(b.path) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind]);

  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  const readOnlyAtEnd: string[] = [];
  for (const mount of mounts) {
    switch (mount.kind) {
      case 'private':
        args.push('--tmpfs', mount.path);
        break;
      case 'hide':
        if (options.isDirectory(mount.path)) {
          args.push('--tmpfs', mount.path);
          readOnlyAtEnd.push(mount.path);
        } else args.push('--ro-bind', options.emptyFile, mount.path);
        break;
      case 'ro':
        args.push('--ro-bind', mount.path, mount.path);
        break;
      case 'rw':
        args.push('--bind', mount.path, mount.path);
        break;
    }
  }
  for (const dir of readOnlyAtEnd) args.push('--remount-ro', dir);
  // TMPDIR may name a directory the sandbox shows read-only; /tmp is the turn's own.
  args.push('--setenv', 'TMPDIR', '/tmp', ...namespaceArgs(view.network), '--chdir', options.cwd);
  return args;
}

function depth(file: string): number {
  return file.split(path.sep).filter((part) => part !== '').length;
}
