// The bundle's V8 code cache (src/cli/compile-cache.ts) through the real executable: kept in GOALD_HOME
// (never where an agent turn may write), taken on the next run without being rewritten, survived when
// corrupt, refused in a directory others can write, off on request, and pruned of chunks no build has.

import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { describe, expect, test } from 'vitest';

import { cacheDirName } from '../../src/cli/compile-cache.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldBin, goaldSandbox, repoRoot, type GoaldSandbox } from '../helpers/run-goald.js';

const VERSION_DIR = cacheDirName(path.dirname(goaldBin));

// `goald history` loads the full CLI (commander, the store, zod): a dozen chunks.
async function history(sandbox: GoaldSandbox, cache: string): Promise<string> {
  const run = await sandbox.run(['history', '--json'], { env: { GOALD_COMPILE_CACHE: cache } });
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  return run.stdout;
}

async function cacheFiles(dir: string): Promise<Map<string, number>> {
  const files = new Map<string, number>();
  for (const name of await readdir(dir)) files.set(name, (await stat(path.join(dir, name))).mtimeMs);
  return files;
}

describe('the compile cache', () => {
  test('lives in GOALD_HOME/cache/compile/<node>-<arch>-<install>, private, and is taken as it is on the next run', async () => {
    const sandbox = await goaldSandbox();
    await mkdir(sandbox.home, { recursive: true, mode: 0o700 });
    const first = await history(sandbox, '');
    const dir = path.join(sandbox.home, 'cache', 'compile', VERSION_DIR);
    const written = await cacheFiles(dir);
    expect([...written.keys()].length).toBeGreaterThan(3);
    expect([...written.keys()].every((name) => /^[\w.-]+\.js-\d+-\d+\.v8$/.test(name))).toBe(true);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    // Taken, not rejected: a rejected cache would be written again at exit.
    expect(await history(sandbox, '')).toBe(first);
    expect(await cacheFiles(dir)).toEqual(written);
  });

  test('a corrupt cache file is rejected by V8 and replaced; the command runs as without one', async () => {
    const sandbox = await goaldSandbox();
    await mkdir(sandbox.home, { recursive: true, mode: 0o700 });
    const expected = await history(sandbox, '');
    const dir = path.join(sandbox.home, 'cache', 'compile', VERSION_DIR);
    const names = [...(await cacheFiles(dir)).keys()];
    expect(names.length).toBeGreaterThan(3);
    for (const name of names) await writeFile(path.join(dir, name), 'not bytecode');
    expect(await history(sandbox, '')).toBe(expected);
    for (const name of names) expect((await readFile(path.join(dir, name), 'utf8')) === 'not bytecode').toBe(false);
  });

  test('nothing is cached in a directory group or others can write, nor with GOALD_COMPILE_CACHE=off', async () => {
    const sandbox = await goaldSandbox();
    const shared = path.join(sandbox.root, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o777);
    const expected = await history(sandbox, shared);
    expect(await readdir(shared)).toEqual([]);
    expect(await history(sandbox, 'off')).toBe(expected);
    expect(await readdir(sandbox.home).catch(() => [])).not.toContain('cache');
  });

  test('a command that makes no GOALD_HOME leaves no cache behind', async () => {
    const sandbox = await goaldSandbox();
    const run = await sandbox.run(['--help'], { env: { GOALD_COMPILE_CACHE: '' } });
    expect(run.code).toBe(0);
    await expect(stat(sandbox.home)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('one directory per install: names differ by bundle directory and Node version', () => {
    expect(cacheDirName('/usr/lib/node_modules/goald/dist/bundle')).not.toBe(cacheDirName('/home/me/goald/dist/bundle'));
    expect(cacheDirName('/a')).toBe(cacheDirName('/a'));
    expect(cacheDirName('/a')).toMatch(new RegExp(`^${process.version.replace(/\./g, '\\.')}-${process.arch}-[0-9a-f]{8}$`));
  });

  test('caches of chunks the build no longer has are removed when the cache is next written', async () => {
    const sandbox = await goaldSandbox();
    const own = path.join(sandbox.root, 'cache');
    await mkdir(own, { mode: 0o700 });
    await history(sandbox, own);
    const dir = path.join(own, VERSION_DIR);
    const stale = 'main-0ld0ld00.js-100-100.v8';
    await writeFile(path.join(dir, stale), 'old');
    const [kept] = [...(await cacheFiles(dir)).keys()].filter((name) => name !== stale);
    if (kept === undefined) throw new Error('no cache file was written');
    await writeFile(path.join(dir, kept), 'not bytecode'); // so this run writes, and prunes
    await history(sandbox, own);
    const after = await readdir(dir);
    expect(after).not.toContain(stale);
    expect(after).toContain(kept);
  });

  describe('a cached chunk requires its siblings itself', () => {
    // A bundle of three chunks: `first` requires `shared` and a builtin; `broken` throws once, then loads.
    async function miniBundle(root: string): Promise<{ dir: string; cache: string }> {
      const dir = path.join(root, 'bundle');
      const cache = path.join(root, 'cache');
      await mkdir(dir, { recursive: true });
      await mkdir(cache, { mode: 0o700 });
      await writeFile(path.join(dir, 'package.json'), '{"type":"commonjs"}\n');
      await writeFile(path.join(dir, 'shared.js'), 'globalThis.loads = (globalThis.loads ?? 0) + 1; exports.value = {};\n');
      await writeFile(path.join(dir, 'first.js'), 'exports.shared = require("./shared.js"); exports.path = require("node:path");\n');
      await writeFile(path.join(dir, 'broken.js'), 'if (!globalThis.thrown) { globalThis.thrown = true; throw new Error("once"); } exports.ok = true;\n');
      await writeFile(path.join(dir, 'uses-broken.js'), 'exports.load = () => require("./broken.js");\n');
      return { dir, cache };
    }

    // Loads the chunks in `order` through Node's own require once the cache is on, and reports what it saw.
    function load(dir: string, cache: string, order: string[]): unknown {
      const script = `
        const { enableCompileCache } = await import(${JSON.stringify(path.join(repoRoot, 'dist', 'src', 'cli', 'compile-cache.js'))});
        const { createRequire } = await import('node:module');
        const dir = ${JSON.stringify(dir)};
        enableCompileCache(dir, { GOALD_COMPILE_CACHE: ${JSON.stringify(cache)} });
        const req = createRequire(dir + '/entry.js');
        const loaded = Object.fromEntries(${JSON.stringify(order)}.map((name) => [name, req('./' + name + '.js')]));
        const first = req('./first.js');
        const usesBroken = req('./uses-broken.js');
        let firstTry = 'loaded';
        try { usesBroken.load(); } catch (error) { firstTry = error.message; }
        console.log(JSON.stringify({
          loads: globalThis.loads,
          sameShared: first.shared === req('./shared.js'),
          builtin: first.path === req('node:path'),
          inNodeCache: req.cache[dir + '/shared.js']?.exports === first.shared,
          broken: [firstTry, usesBroken.load().ok, req('./broken.js') === usesBroken.load()],
          order: Object.keys(loaded),
        }));`;
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(run.stderr).toBe('');
      return JSON.parse(run.stdout) as unknown;
    }

    test.each([['first', 'shared'], ['shared', 'first']])('once, whoever requires it first (%s, then %s), with and without a cache', async (...order) => {
      const sandbox = await goaldSandbox();
      const { dir, cache } = await miniBundle(sandbox.root);
      const expected = { loads: 1, sameShared: true, builtin: true, inNodeCache: true, broken: ['once', true, true], order };
      expect(load(dir, cache, order)).toEqual(expected);
      expect((await readdir(path.join(cache, cacheDirName(dir)))).length).toBeGreaterThan(0);
      expect(load(dir, cache, order)).toEqual(expected);
    });
  });

  test("a start through the bundle loads neither node:module's ES module loader nor perf_hooks (only speed, but every command's)", async () => {
    const sandbox = await goaldSandbox();
    const repo = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const list = path.join(sandbox.root, 'builtins.txt');
    const preload = path.join(sandbox.root, 'builtins.cjs');
    await writeFile(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`);
    const run = await sandbox.run(
      ['start', 'done.txt exists', '--foreground', '-C', repo.dir, '--check', 'test -f done.txt', '--agent', 'touch done.txt', '--evaluator', 'none', '--cooldown', '0', '--no-sandbox', '--json'],
      { env: { NODE_OPTIONS: `--require ${preload}` } },
    );
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const loaded = (await readFile(list, 'utf8')).split('\n');
    expect(loaded).toContain('NativeModule vm'); // the compile cache was on
    expect(loaded).toContain('NativeModule child_process'); // and the goal ran its turn
    expect(loaded.filter((name) => /^NativeModule (module|perf_hooks|internal\/modules\/esm\/loader)$/.test(name))).toEqual([]);
  });
});
