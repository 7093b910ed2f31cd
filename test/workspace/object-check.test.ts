import { chmod, writeFile } from 'node:fs/promises';
import { deflateSync } from 'node:zlib';

import { describe, expect, test } from 'vitest';

import { findForgedObjects, objectNamesOf } from '../../src/workspace/object-check.js';
import { gitdir } from '../helpers/gitdir.js';

describe('findForgedObjects', () => {
  test('names the objects whose content does not hash to their id, over many chunks, and skips missing ones', async () => {
    // A file large enough for cat-file's output to arrive in several chunks, one with a space in its path.
    const big = `${'x'.repeat(300_000)}\n`;
    const repo = await gitdir({ initialCommit: true, files: { 'big.txt': big, 'empty.txt': '', 'dir with space/a.txt': 'a\n', 'b.txt': 'b\n' } });
    const head = await repo.git('rev-parse', 'HEAD^{tree}');
    const names = [...objectNamesOf(head, 'dir with space/a.txt'), `${head}:big.txt`, `${head}:empty.txt`, `${head}:no/such/file`, `${head}:b.txt`];
    expect(await findForgedObjects(names, { cwd: repo.dir, env: {} })).toEqual([]);

    const id = await repo.git('rev-parse', 'HEAD:b.txt');
    const object = repo.path(`.git/objects/${id.slice(0, 2)}/${id.slice(2)}`);
    await chmod(object, 0o644);
    await writeFile(object, deflateSync(Buffer.from('blob 2\0c\n')));
    expect(await findForgedObjects(names, { cwd: repo.dir, env: {} })).toEqual([`${head}:b.txt`]);
  });

  test('objectNamesOf: the tree, each directory on the way, and the file', () => {
    expect(objectNamesOf('t', 'a/b/c.js')).toEqual(['t', 't:a', 't:a/b', 't:a/b/c.js']);
    expect(objectNamesOf('t', 'c.js')).toEqual(['t', 't:c.js']);
  });
});
