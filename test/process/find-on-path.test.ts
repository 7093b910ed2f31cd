import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { executableProblem, findOnPath } from '../../src/process/find-on-path.js';
import { executable, makeTempDir } from '../agents/support.js';

describe('findOnPath', () => {
  test('relative entries resolve from cwd, an empty one is cwd itself (as execvp reads PATH)', async () => {
    const dir = await makeTempDir();
    await mkdir(join(dir, 'tools'));
    const inTools = await executable(join(dir, 'tools', 'helper'));
    const inDir = await executable(join(dir, 'helper'));

    expect(findOnPath('helper', { pathVariable: '/nonexistent:tools', cwd: dir })).toBe(inTools);
    expect(findOnPath('helper', { pathVariable: '/nonexistent::tools', cwd: dir })).toBe(inDir);
  });

  test('an entry that is a file is passed over without an error', async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, 'not-a-dir'), '');
    await mkdir(join(dir, 'bin'));
    const found = await executable(join(dir, 'bin', 'helper'));

    expect(findOnPath('helper', { pathVariable: `${join(dir, 'not-a-dir')}:${join(dir, 'bin')}`, cwd: dir })).toBe(found);
  });
});

describe('executableProblem', () => {
  test('names what keeps a file from running', async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, 'plain'), '');
    await mkdir(join(dir, 'folder'));

    expect(executableProblem(await executable(join(dir, 'run')))).toBeNull();
    expect(executableProblem(join(dir, 'plain'))).toBe('is not executable (chmod +x?)');
    expect(executableProblem(join(dir, 'folder'))).toBe('is not a file');
    expect(executableProblem(join(dir, 'gone'))).toBe('does not exist');
    expect(executableProblem(join(dir, 'plain', 'below'))).toBe('does not exist');
  });
});
