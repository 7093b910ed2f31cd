// The dashboard's files (src/ui/static-assets.ts): found beside the running code in every layout, and
// served only from the list read at start, so no request path reaches the file system.

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { findAssetsDir, loadAssets } from '../../src/ui/static-assets.js';

async function layout(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'goald-assets-'));
  await mkdir(path.join(root, 'dist', 'ui', 'assets'), { recursive: true });
  await mkdir(path.join(root, 'dist', 'bundle'), { recursive: true });
  await mkdir(path.join(root, 'dist', 'src', 'ui'), { recursive: true });
  await mkdir(path.join(root, 'src', 'ui'), { recursive: true });
  await writeFile(path.join(root, 'dist', 'ui', 'index.html'), '<!doctype html>');
  await writeFile(path.join(root, 'dist', 'ui', 'assets', 'index-a1.js'), 'export {}');
  await writeFile(path.join(root, 'dist', 'ui', 'assets', 'notes.md'), '# not served');
  return root;
}

describe('static assets', () => {
  it('finds dist/ui from the bundle, from tsc output and from the sources', async () => {
    const root = await layout();
    const ui = path.join(root, 'dist', 'ui');
    expect(findAssetsDir(path.join(root, 'dist', 'bundle'))).toBe(ui);
    expect(findAssetsDir(path.join(root, 'dist', 'src', 'ui'))).toBe(ui);
    expect(findAssetsDir(path.join(root, 'src', 'ui'))).toBe(ui);
    expect(findAssetsDir(path.join(root, 'elsewhere', 'deeper', 'still'))).toBeNull();
  });

  it('lists the files it will serve by URL path, with their types, and nothing of an unknown type', async () => {
    const assets = await loadAssets(path.join(await layout(), 'dist', 'ui'));
    expect([...assets.keys()].sort()).toEqual(['/assets/index-a1.js', '/index.html']);
    expect(assets.get('/assets/index-a1.js')?.contentType).toBe('text/javascript; charset=utf-8');
    expect(assets.get('/index.html')?.body.toString()).toBe('<!doctype html>');
  });
});
