// The dashboard's page (`goald ui`): Preact + uPlot built by Vite at `npm run build` into dist/ui/, which
// ships in the package and is served by the daemon (src/ui/static-assets.ts). No CDN, nothing built at run
// time, no inline script (the server's CSP forbids it).

import path from 'node:path';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(import.meta.dirname, '..', 'dist', 'ui'),
    emptyOutDir: true,
    // No preload polyfill: it would be one more script, and every browser the page targets has modulepreload.
    modulePreload: false,
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
});
