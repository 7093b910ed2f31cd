import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { findTool } from '../../src/process/goald-tools.js';
import { executable, makeTempDir } from '../agents/support.js';

// Each test names its own tool, so the process-wide memo of one test never answers another.
describe('findTool', () => {
  test('takes the first on PATH, passing over relative entries', async () => {
    const dir = await makeTempDir();
    await mkdir(join(dir, 'tools'));
    await mkdir(join(dir, 'system'));
    await executable(join(dir, 'tools', 'tool-a'));
    const real = await executable(join(dir, 'system', 'tool-a'));
    expect(findTool('tool-a', { env: { PATH: `tools::${join(dir, 'system')}` } })).toBe(real);
    // Outside any work tree, the directory it runs in is passed over like one.
    expect(findTool('tool-a', { env: { PATH: join(dir, 'system') }, cwd: dir })).toBeNull();
    expect(findTool('tool-a-none', { env: { PATH: join(dir, 'system') } })).toBeNull();
  });

  test('passes over entries inside the work tree it runs in, also through a symlink, and from a subdirectory', async () => {
    const root = await makeTempDir();
    const workspace = join(root, 'ws');
    await mkdir(join(workspace, '.git'), { recursive: true });
    await mkdir(join(workspace, 'bin'));
    await mkdir(join(workspace, 'src'));
    await mkdir(join(root, 'system'));
    await executable(join(workspace, 'bin', 'tool-b'));
    const real = await executable(join(root, 'system', 'tool-b'));
    await symlink(join(workspace, 'bin'), join(root, 'linked-bin'));
    const PATH = [join(workspace, 'bin'), join(root, 'linked-bin'), join(root, 'system')].join(':');
    expect(findTool('tool-b', { env: { PATH }, cwd: workspace })).toBe(real);
    expect(findTool('tool-b', { env: { PATH }, cwd: join(workspace, 'src') })).toBe(real);
    // For another work tree, that directory is a directory like any other.
    await mkdir(join(root, 'other', '.git'), { recursive: true });
    expect(findTool('tool-b', { env: { PATH }, cwd: join(root, 'other') })).toBe(join(workspace, 'bin', 'tool-b'));
  });

  test('passes over the package caches and the agent CLIs’ state a sandboxed turn may write', async () => {
    const home = await makeTempDir();
    const moved = join(home, 'claude-config');
    for (const dir of ['.cache/bin', '.npm/bin', '.claude/local', 'claude-config/bin', 'system']) await mkdir(join(home, dir), { recursive: true });
    for (const dir of ['.cache/bin', '.npm/bin', '.claude/local', 'claude-config/bin']) await executable(join(home, dir, 'tool-c'));
    const real = await executable(join(home, 'system', 'tool-c'));
    const PATH = ['.cache/bin', '.npm/bin', '.claude/local', 'claude-config/bin', 'system'].map((dir) => join(home, dir)).join(':');
    const saved = process.env.HOME;
    process.env.HOME = home; // os.homedir() reads it
    try {
      expect(findTool('tool-c', { env: { PATH, CLAUDE_CONFIG_DIR: moved } })).toBe(real);
    } finally {
      process.env.HOME = saved;
    }
  });
});
