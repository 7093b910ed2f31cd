// The script `node --snapshot-blob <file> --build-snapshot` runs to take goald's start-up snapshot
// (build-snapshot.ts starts it). Bundled on its own (dist/bundle/startup-snapshot-builder.js, Node's
// builtins only): a snapshot's builder script gets a `require` for builtins alone, so it loads the bundle's
// chunks itself, from snapshot-main.js down, each as Node's CommonJS loader would (the same wrapper and
// arguments). Every function is compiled as it loads (V8's --no-lazy, only while loading): a snapshot keeps
// the bytecode it holds, and a function compiled at run time would have no code cache to start from.
// The process that later starts from the blob puts each of these modules in Node's module cache under
// its file name, so that a chunk loaded at run time requires the very same instances.

// What a chunk's wrapper gets as `module`: the bundle's chunks use `exports` alone.
interface LoadedModule {
  exports: unknown;
}
// Node's own module object, as the deserialized process puts it in the module cache.
interface NodeModule {
  filename: string;
  exports: unknown;
  loaded: boolean;
  paths: string[];
}
type ChunkRequire = (id: string) => unknown;
type Wrapper = (exports: unknown, require: ChunkRequire, module: LoadedModule, filename: string, dirname: string) => void;
interface NodeModuleApi {
  _cache: Record<string, unknown>;
  _nodeModulePaths(dir: string): string[];
  createRequire(filename: string): ChunkRequire;
  new (id: string): NodeModule;
}
interface SnapshotMain {
  runFromSnapshot(args: readonly string[]): Promise<number | null>;
}

const builtin = (id: string): unknown => process.getBuiltinModule(id);
const fs = builtin('node:fs') as typeof import('node:fs');
const path = builtin('node:path') as typeof import('node:path');
const vm = builtin('node:vm') as typeof import('node:vm');
const v8 = builtin('node:v8') as typeof import('node:v8');

const bundleDir = process.env.GOALD_SNAPSHOT_BUNDLE ?? '';
if (!path.isAbsolute(bundleDir)) throw new Error('GOALD_SNAPSHOT_BUNDLE must name the bundle directory');

const modules = new Map<string, LoadedModule>();

// The chunks require their siblings as `./name.js` and Node's builtins as `node:name`, nothing else.
function chunkRequire(id: string): unknown {
  if (id.startsWith('node:')) return builtin(id);
  if (!id.startsWith('./') || id.includes('/', 2)) throw new Error(`the start-up snapshot cannot load ${id}`);
  const filename = path.join(bundleDir, id.slice(2));
  const known = modules.get(filename);
  if (known !== undefined) return known.exports;
  // At run time, a chunk not in the snapshot: Node's loader (and goald's compile cache) takes it.
  if (!building) return runTimeRequire()(filename);
  return load(filename);
}

let building = true;
let nodeRequire: ChunkRequire | null = null;
function runTimeRequire(): ChunkRequire {
  nodeRequire ??= moduleApi().createRequire(path.join(bundleDir, 'bin.js'));
  return nodeRequire;
}
const moduleApi = (): NodeModuleApi => builtin('node:module') as NodeModuleApi;

function load(filename: string): unknown {
  const module: LoadedModule = { exports: {} };
  modules.set(filename, module);
  const source = fs.readFileSync(filename, 'utf8');
  const wrapper = vm.runInThisContext(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, { filename }) as Wrapper;
  wrapper.call(module.exports, module.exports, chunkRequire, module, filename, bundleDir);
  return module.exports;
}

v8.setFlagsFromString('--no-lazy');
const main = load(path.join(bundleDir, 'startup-snapshot-main.js')) as SnapshotMain;
v8.setFlagsFromString('--lazy');
building = false;

v8.startupSnapshot.setDeserializeMainFunction(() => {
  // Node's module cache learns the snapshot's modules, as if its loader had loaded them.
  const api = moduleApi();
  for (const [filename, loaded] of modules) {
    const module = new api(filename);
    module.filename = filename;
    module.paths = api._nodeModulePaths(bundleDir);
    module.exports = loaded.exports;
    module.loaded = true;
    api._cache[filename] = module;
  }
  // Started as `node --snapshot-blob <blob> start …`: argv as a run of bin.js would have it.
  const args = process.argv.slice(1);
  process.argv.splice(1, process.argv.length - 1, path.join(bundleDir, 'bin.js'), ...args);
  if (args[0] === 'goald-snapshot-self-test') {
    process.getBuiltinModule('node:fs').writeSync(1, `ok ${modules.size}\n`);
    return;
  }
  void main.runFromSnapshot(args).then((code) => {
    if (code !== null) process.exitCode = code;
  });
});
