import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { findExecutable, readCommandName } from '../../src/agents/which.js';
import { makeTempDir } from './support.js';

describe('readCommandName', () => {
  test.each([
    ['claude -p {prompt}', 'claude'],
    ['  aider --yes ', 'aider'],
    ['FOO=1 BAR=x codex exec', 'codex'],
    ['exec ./agent.sh', './agent.sh'],
    ['/usr/bin/env node agent.js', '/usr/bin/env'],
    ['env FOO=1 claude', null],
    ['cd sub && make', null],
    ['echo hi', null],
    ['"my agent" -x', null],
    ['$AGENT run', null],
    ['(cd x; run)', null],
    ['{prompt}', null],
    ['', null],
  ])('%j → %j', (command, name) => {
    expect(readCommandName(command)).toBe(name);
  });
});

describe('findExecutable', () => {
  test('finds a command on PATH', async () => {
    const dir = await makeTempDir();
    await mkdir(join(dir, 'bin'));
    await writeFile(join(dir, 'bin', 'my-agent'), '#!/bin/sh\n');
    await chmod(join(dir, 'bin', 'my-agent'), 0o755);
    const env = { PATH: `/nonexistent:${join(dir, 'bin')}` };
    expect(findExecutable('my-agent --flag {prompt}', { env })).toEqual({
      status: 'found',
      name: 'my-agent',
      path: join(dir, 'bin', 'my-agent'),
    });
  });

  test('a command missing from PATH is missing, with a message', () => {
    expect(findExecutable('goald-no-such-agent -p x', { env: { PATH: '/usr/bin:/bin' } })).toEqual({
      status: 'missing',
      name: 'goald-no-such-agent',
      message: 'agent command goald-no-such-agent was not found on PATH',
    });
  });

  test('a path is resolved from the workspace and must be an executable file', async () => {
    const dir = await makeTempDir();
    await writeFile(join(dir, 'run.sh'), '#!/bin/sh\n');
    await writeFile(join(dir, 'plain.sh'), '#!/bin/sh\n');
    await chmod(join(dir, 'run.sh'), 0o755);
    await chmod(join(dir, 'plain.sh'), 0o644);

    expect(findExecutable('./run.sh', { cwd: dir })).toMatchObject({ status: 'found', path: join(dir, 'run.sh') });
    expect(findExecutable('./plain.sh', { cwd: dir })).toMatchObject({
      status: 'missing',
      message: 'agent command ./plain.sh is not executable (chmod +x?)',
    });
    expect(findExecutable('./gone.sh', { cwd: dir })).toMatchObject({
      status: 'missing',
      message: 'agent command ./gone.sh does not exist',
    });
    expect(findExecutable('./', { cwd: dir })).toMatchObject({ status: 'missing', message: 'agent command ./ is not a file' });
  });

  test('the first entry of PATH that has it wins, as in the shell; a file that cannot run is passed over', async () => {
    const dir = await makeTempDir();
    for (const name of ['a', 'b', 'c']) await mkdir(join(dir, name));
    for (const name of ['a', 'b']) {
      await writeFile(join(dir, name, 'my-agent'), '#!/bin/sh\n');
      await chmod(join(dir, name, 'my-agent'), 0o755);
    }
    await writeFile(join(dir, 'c', 'my-agent'), '#!/bin/sh\n');
    const lookUp = (entries: string[]): unknown =>
      findExecutable('my-agent', { env: { PATH: entries.map((entry) => (entry.startsWith('/') ? entry : join(dir, entry))).join(':') } });
    expect(lookUp(['a', 'b'])).toEqual({ status: 'found', name: 'my-agent', path: join(dir, 'a', 'my-agent') });
    expect(lookUp(['b', 'a'])).toEqual({ status: 'found', name: 'my-agent', path: join(dir, 'b', 'my-agent') });
    expect(lookUp(['c', '/nonexistent', 'b', 'a'])).toEqual({ status: 'found', name: 'my-agent', path: join(dir, 'b', 'my-agent') });
  });

  test('a directory on PATH with the same name does not count', async () => {
    const dir = await makeTempDir();
    await mkdir(join(dir, 'bin', 'my-agent'), { recursive: true });
    expect(findExecutable('my-agent', { env: { PATH: join(dir, 'bin') } })).toMatchObject({ status: 'missing' });
  });

  test('shell syntax and builtins cannot be checked up front', () => {
    expect(findExecutable('cd x && make')).toMatchObject({ status: 'unknown' });
    expect(findExecutable('"quoted" cmd')).toMatchObject({ status: 'unknown' });
  });
});
