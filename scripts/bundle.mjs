// Bundles the `goald` executable into dist/bundle/ (run by `npm run build`, after tsc has typechecked and
// emitted dist/ for the benchmarks and the demo). Node 20 spends most of a short command's life loading
// modules: ~150 of goald's own plus its dependencies', each resolved and read on its own, and an ES module
// entry alone costs it a quarter of a bare `node -e 0` to set up the ESM loader. So the bundle is
// CommonJS, split into chunks: every `await import()` in the sources (the hook and status fast paths, each
// command, the evaluators with the openai and Anthropic SDKs, the daemon's goal runtime) becomes a chunk
// required on first use, so a command loads only what it runs. (esbuild splits ES module output only.)
//
// Every file lands flat in dist/bundle/ with the entry named bin.js: src/cli/goald-entry.ts finds the
// executable as `bin.js` beside itself, which holds in the bundle as in tsc's dist/src/cli/. A package.json
// there says the .js files are CommonJS (goald's own package.json says "module").

import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { rolldown } from 'rolldown';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist', 'bundle');

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
await writeFile(path.join(outdir, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);

// Every bundle fails its build on a warning (an unresolved import, a bad re-export) rather than ship it.
function failOnWarning(level, log, handler) {
  if (level === 'warn') handler('error', log);
  else handler(level, log);
}
// Minified but for names (no mangling: stack traces in daemon.log stay readable), without comments.
const compact = {
  minify: { mangle: false, compress: true, codegen: { removeWhitespace: true } },
  comments: { legal: false, annotation: false, jsdoc: false },
};

const bundle = await rolldown({
  cwd: root,
  // The second entry is what a start-up snapshot holds (src/cli/startup-snapshot/): the chunks a
  // foreground start loads before its first agent, shared with bin.js's own, so that a start from the
  // snapshot and one without load the same files under the same names.
  input: { bin: 'src/cli/bin.ts', 'startup-snapshot-main': 'src/cli/startup-snapshot/snapshot-main.ts' },
  platform: 'node',
  logLevel: 'warn',
  onLog: failOnWarning,
});
const { output } = await bundle.write({
  dir: outdir,
  format: 'cjs',
  // Non-ASCII characters escaped (`\u2014`): V8 keeps a source that holds one character past U+00FF (an em
  // dash in a message) as a two-byte string, twice the memory for the whole chunk, and each chunk's source
  // is read and kept on every start (ten of the start's chunks held one). The strings at run time are the same.
  charset: 'ascii',
  entryFileNames: '[name].js',
  chunkFileNames: '[name]-[hash].js',
  codeSplitting: {
    // `goald status` is polled by scripts and prompts: its whole path (fast-command.ts, control.ts and
    // everything they import statically, the daemon client included) in two chunks, not a dozen small
    // files each resolved, read and compiled apart (race-files.ts included: status reads the races directory
    // every time): `cli-base`, what every command shares with it, and `status`, the rest, which
    // `goald start --foreground` never loads (36 KB of a start's ~560 KB; measured 94.1 -> 90.2 ms, 25 runs).
    // The compile cache and the GOALD_HOME it lives in come first (the status group would take
    // goald-home.ts along with everything else it imports), in a chunk of their own the entry loads.
    groups: [
      { name: 'compile-cache', test: /[\\/](src[\\/]cli[\\/]compile-cache|state[\\/]goald-home)\.ts$/, priority: 1 },
      {
        name: 'cli-base',
        test: /[\\/](src[\\/](cut-text|errors|errno|clock|os-random|config[\\/]duration|process[\\/]process-identity|cli[\\/](goald-entry|format|terminal-text|render-progress|render-edits|render-distance|io|report-error))|state[\\/](paths|state-seal|machine-snapshot|not-recovered|home-trust))\.ts$/,
        priority: 1,
      },
      { name: 'status', test: /[\\/]src[\\/](cli[\\/](fast-command|commands[\\/]control)|race[\\/]race-files)\.ts$/ },
      // The agent command's lookup and the PATH search it shares with spawn.ts and the sandbox probe: one
      // chunk, not a second file of a few hundred bytes that every start would load.
      { name: 'which', test: /[\\/]src[\\/](agents[\\/]which|process[\\/]find-on-path)\.ts$/ },
    ],
  },
  ...compact,
});
await bundle.close();

// The start-up snapshot's builder script: `node --build-snapshot` gives it a `require` for Node's builtins
// only, so it is one file that loads the chunks itself (src/cli/startup-snapshot/builder.ts).
const builderBundle = await rolldown({
  cwd: root,
  input: { 'startup-snapshot-builder': 'src/cli/startup-snapshot/builder.ts' },
  platform: 'node',
  logLevel: 'warn',
  onLog: failOnWarning,
});
const { output: builderOutput } = await builderBundle.write({
  dir: outdir,
  format: 'cjs',
  charset: 'ascii',
  entryFileNames: '[name].js',
  ...compact,
});
await builderBundle.close();

// `goald watch`'s interactive view (ink 6, React 19) is an ES module bundle of its own, watch-ui.mjs beside
// the rest: ink's layout engine (yoga-layout) starts with a top-level await, which CommonJS cannot hold. The
// watch command imports it by path on first use, so no other command loads it (src/cli/commands/watch.ts).
const watchBundle = await rolldown({
  cwd: root,
  input: { 'watch-ui': 'src/cli/watch/watch-ui.ts' },
  platform: 'node',
  logLevel: 'warn',
  // React's production build; ink's devtools bridge (only with DEV=true) needs a package goald does not ship.
  transform: { define: { 'process.env.NODE_ENV': '"production"' } },
  external: ['react-devtools-core'],
  onLog: failOnWarning,
});
const { output: watchOutput } = await watchBundle.write({
  dir: outdir,
  format: 'esm',
  entryFileNames: '[name].mjs',
  chunkFileNames: 'watch-[name]-[hash].mjs',
  ...compact,
});
await watchBundle.close();

const all = [...output, ...builderOutput, ...watchOutput];
const bytes = all.reduce((sum, file) => sum + (file.type === 'chunk' ? file.code.length : 0), 0);
process.stdout.write(`bundled dist/bundle/: ${all.length} files, ${Math.round(bytes / 1024)} KiB\n`);
