// The dashboard's prebuilt page (Vite's output, `npm run build` → dist/ui/, shipped in the package): found
// beside the running code, listed once, and served only by that list, so no request path ever reaches the
// file system.

import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
};

/** One file the dashboard serves. */
export interface Asset {
  body: Buffer;
  contentType: string;
}

/** Where dist/ui is from this module: the bundle (dist/bundle/), tsc's dist/src/ui/, or the sources (src/ui/). */
export function findAssetsDir(moduleDir: string = import.meta.dirname): string | null {
  const candidates = [path.join(moduleDir, '..', 'ui'), path.join(moduleDir, '..', '..', 'ui'), path.join(moduleDir, '..', '..', 'dist', 'ui')];
  return candidates.find((dir) => existsSync(path.join(dir, 'index.html'))) ?? null;
}

/** Every file under `dir` by its URL path (`/index.html`, `/assets/index-abc.js`), read into memory. */
export async function loadAssets(dir: string): Promise<Map<string, Asset>> {
  const assets = new Map<string, Asset>();
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const urlPath = `/${path.relative(dir, file).split(path.sep).join('/')}`;
    const contentType = CONTENT_TYPES[path.extname(entry.name)];
    if (contentType === undefined) continue;
    assets.set(urlPath, { body: await readFile(file), contentType });
  }
  return assets;
}
