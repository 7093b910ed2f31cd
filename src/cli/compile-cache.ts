// V8's code cache for goald's own bundle. Node 20 compiles every chunk a command loads from source on every
// run (a third of `goald start`'s module loading); V8 can instead take the bytecode it produced last time.
// Node ≥ 22.1 does this itself (module.enableCompileCache); on Node 20 goald keeps the cache by hand, for
// the files of its bundle only (dist/bundle/, CommonJS), never for anyone else's module.
//
// Where: GOALD_HOME/cache/compile/<node>-<arch>-<install>/, and nowhere else. Bytecode in the cache runs as goald,
// the judge, so it lives where no agent turn can write: the sandbox lets turns write ~/.cache and hides
// GOALD_HOME, and a shared /tmp would let another user plant it. The directory must be this user's and
// private (checked, never repaired); anything doubtful means no cache, never an error: it is only speed.
// Why not the `v8-compile-cache` package: it caches in os.tmpdir() and for every module loaded.

import path from 'node:path';

import { isPrivateDirectory, resolveGoaldHome } from '../../state/goald-home.js';

/** The part of a CommonJS module that `Module.prototype._compile` is called on (Node's internal API). */
interface CompilingModule {
  exports: unknown;
  filename: string;
  paths: string[];
  loaded: boolean;
  require(id: string): unknown;
  _compile(content: string, filename: string): unknown;
}
/** Node's CommonJS loader as this file uses it: the module cache and the constructor (internal API). */
interface ModuleLoader {
  _cache: Record<string, CompilingModule | undefined>;
  new (id: string, parent: CompilingModule): CompilingModule;
  prototype: { _compile: Compile };
  wrap(content: string): string;
}
type Compile = (this: CompilingModule, content: string, filename: string) => unknown;
type BundleRequire = (id: string) => unknown;
type CompiledWrapper = (exports: unknown, require: BundleRequire, module: CompilingModule, filename: string, dirname: string) => unknown;

const PRIVATE_MODE = 0o700;
const CACHE_SUFFIX = '.v8';
const STALE_VERSION_MS = 30 * 24 * 60 * 60 * 1000;

let enabled = false;

// Builtins through getBuiltinModule: this runs before anything else loads, and adds no module of its own.
const fs = (): typeof import('node:fs') => process.getBuiltinModule('node:fs');

/**
 * Turns the code cache on for the bundle files in `bundleDir` (no-op outside the CommonJS bundle).
 * GOALD_COMPILE_CACHE: unset keeps it in GOALD_HOME; `off` turns it off; an absolute path is an existing
 * private directory of this user to keep it in instead (the test suite shares one across its many homes).
 */
export function enableCompileCache(bundleDir: string, env: NodeJS.ProcessEnv = process.env): void {
  // Once a process: a start from the start-up snapshot that hands its line to bin.js comes here twice.
  if (enabled) return;
  enabled = true;
  const setting = env.GOALD_COMPILE_CACHE ?? '';
  if (setting === 'off') return;
  // `root`: the existing directory that must be this user's and private before anything under it is used.
  const root = path.isAbsolute(setting) ? setting : resolveGoaldHome(env);
  const dir = path.join(root, ...(path.isAbsolute(setting) ? [] : ['cache', 'compile']), cacheDirName(bundleDir));
  const moduleApi = moduleLoader();
  // Node ≥ 22.1 (not in Node 20's typings): the built-in cache, in the same private place.
  const builtIn = (moduleApi as { enableCompileCache?: (directory: string) => unknown }).enableCompileCache;
  if (typeof builtIn === 'function') {
    if (isPrivateDirectory(root) && prepareDirectory(dir)) builtIn(dir);
    return;
  }
  const readable = isPrivateDirectory(root) && isPrivateDirectory(dir);
  const produced = new Map<string, () => Buffer>();
  // Node's own loader calls `_compile` for each CommonJS file; it is not in the typings.
  const prototype = moduleApi.prototype;
  const compile = prototype._compile;
  prototype._compile = function compileWithCache(this: CompilingModule, content: string, filename: string): unknown {
    // A real dynamic import() needs a loader callback that vm.Script takes on Node 20 only behind a flag.
    if (path.dirname(filename) !== bundleDir || content.startsWith('#!') || content.includes('import(')) {
      return compile.call(this, content, filename);
    }
    const key = cacheKey(filename);
    if (key === null) return compile.call(this, content, filename);
    const cached = readable ? readCache(path.join(dir, key)) : undefined;
    const vm = process.getBuiltinModule('node:vm');
    const script = new vm.Script(moduleApi.wrap(content), { filename, ...(cached === undefined ? {} : { cachedData: cached }) });
    if (cached === undefined || script.cachedDataRejected === true) produced.set(key, () => script.createCachedData());
    const wrapper = script.runInThisContext({ displayErrors: true }) as CompiledWrapper;
    return wrapper.call(this.exports, this.exports, bundleRequire(moduleApi, this, bundleDir), this, filename, bundleDir);
  };
  // Written at exit, so the bytecode includes every function the run compiled, not only the top level.
  process.once('exit', () => {
    if (produced.size > 0) writeCaches(root, dir, produced, bundleDir);
  });
}

/**
 * Node's CommonJS loader. The public `node:module` builtin first loads the ES module loader and source-map
 * support (~0.3 ms of every command); in Node 20's CommonJS bundle the class is at hand as this chunk's own
 * module's constructor. Node ≥ 22 is asked through the builtin, which holds its own compile cache.
 */
function moduleLoader(): ModuleLoader {
  const major = Number(process.versions.node.split('.')[0]);
  // `module` is this chunk's own only in the CommonJS bundle (tsc's ES module build has none, and `node -e`
  // makes every builtin a global, `module` included): taken only when it is a module Node's loader made.
  const own: unknown = typeof module === 'object' && module !== null ? (module as { constructor?: unknown }).constructor : undefined;
  if (major < 22 && isModuleLoader(own)) return own;
  return process.getBuiltinModule('node:module') as unknown as ModuleLoader;
}

function isModuleLoader(candidate: unknown): candidate is ModuleLoader {
  if (typeof candidate !== 'function') return false;
  const loader = candidate as Partial<Record<'prototype' | '_cache' | 'wrap', unknown>>;
  const prototype = loader.prototype as { _compile?: unknown } | undefined;
  return typeof prototype?._compile === 'function' && typeof loader._cache === 'object' && typeof loader.wrap === 'function';
}

/**
 * The `require` a cached chunk runs with. The bundle's code requires only its sibling chunks (`./name.js`)
 * and Node's builtins, by literal names it was built with; Node's own `require` resolves each of those as
 * it would any path (stat, realpath, the package scope's type) and `createRequire` costs a module object per
 * chunk: ~2 ms of a `goald start`. A sibling is taken from, or put in, Node's own module cache under the
 * path Node would give it, so a chunk is never instantiated twice, whoever requires it first; anything else
 * goes to Node's `require`.
 */
function bundleRequire(moduleApi: ModuleLoader, parent: CompilingModule, bundleDir: string): BundleRequire {
  return (id) => {
    if (id.startsWith('node:')) return process.getBuiltinModule(id);
    if (!id.startsWith('./') || id.includes('/', 2)) return parent.require(id);
    const filename = `${bundleDir}/${id.slice(2)}`;
    const cached = moduleApi._cache[filename];
    if (cached !== undefined) return cached.exports;
    const module = new moduleApi(filename, parent);
    module.filename = filename;
    module.paths = parent.paths;
    moduleApi._cache[filename] = module;
    let loaded = false;
    try {
      module._compile(fs().readFileSync(filename, 'utf8'), filename);
      loaded = true;
    } finally {
      if (!loaded) delete moduleApi._cache[filename];
    }
    module.loaded = true;
    return module.exports;
  };
}

/**
 * One directory per Node version, architecture and installed goald (its bundle directory, hashed): two
 * installs sharing a GOALD_HOME (a global one and a checkout) would otherwise prune each other's chunks.
 */
export function cacheDirName(bundleDir: string): string {
  // FNV-1a, 32 bits: names apart, not a secret (node:crypto would cost more to load than this run saves).
  let hash = 0x811c9dc5;
  for (let index = 0; index < bundleDir.length; index += 1) hash = Math.imul(hash ^ bundleDir.charCodeAt(index), 0x01000193) >>> 0;
  return `${process.version}-${process.arch}-${hash.toString(16).padStart(8, '0')}`;
}

// The chunk's name carries its content hash; size and mtime catch a file edited in place.
function cacheKey(filename: string): string | null {
  try {
    const stats = fs().statSync(filename);
    return `${path.basename(filename)}-${stats.size}-${Math.trunc(stats.mtimeMs)}${CACHE_SUFFIX}`;
  } catch {
    return null;
  }
}

function readCache(file: string): Buffer | undefined {
  try {
    return fs().readFileSync(file);
  } catch {
    return undefined;
  }
}

function writeCaches(root: string, dir: string, produced: ReadonlyMap<string, () => Buffer>, bundleDir: string): void {
  // GOALD_HOME may have been created by this very command; a run that never made one leaves none behind.
  if (!isPrivateDirectory(root) || !prepareDirectory(dir)) return;
  try {
    for (const [key, data] of produced) {
      const temp = path.join(dir, `${key}.${process.pid}.tmp`);
      fs().writeFileSync(temp, data(), { mode: 0o600 });
      fs().renameSync(temp, path.join(dir, key));
    }
    removeStale(dir, bundleDir);
  } catch {
    // A full disk or a vanished home: the next run compiles from source, as without a cache.
  }
}

// Caches of chunks an upgrade replaced, and of Node versions and installs not run for a month (not every
// other one: a daemon and a CLI run by two Node versions would remove each other's cache on every run).
function removeStale(dir: string, bundleDir: string): void {
  const chunks = new Set(fs().readdirSync(bundleDir));
  for (const entry of fs().readdirSync(dir)) {
    const chunk = entry.slice(0, entry.lastIndexOf('-', entry.lastIndexOf('-') - 1));
    if (!entry.endsWith(CACHE_SUFFIX) || !chunks.has(chunk)) fs().rmSync(path.join(dir, entry), { force: true });
  }
  const versions = path.dirname(dir);
  for (const entry of fs().readdirSync(versions)) {
    const other = path.join(versions, entry);
    if (entry !== path.basename(dir) && Date.now() - fs().statSync(other).mtimeMs > STALE_VERSION_MS) fs().rmSync(other, { recursive: true, force: true });
  }
}

function prepareDirectory(dir: string): boolean {
  try {
    fs().mkdirSync(dir, { recursive: true, mode: PRIVATE_MODE });
  } catch {
    return false;
  }
  return isPrivateDirectory(dir) && isPrivateDirectory(path.dirname(dir));
}

