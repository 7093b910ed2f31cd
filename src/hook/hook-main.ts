// The fast entry of `goald hook <name>`: bin.js imports it before anything else (commander, zod, the SDKs)
// when argv[2] is `hook`, because Claude Code runs the hook after every tool call and waits for it. It is
// an entry point like bin.js: it reads stdin and writes stdout itself. Also runnable directly:
// `node dist/src/hook/hook-main.js post-tool-use`.

import { isErrnoCode } from '../errno.js';
import { runPostToolUseHook } from './post-tool-use.js';

// Not `import ... from 'node:fs'`: see post-tool-use.ts on the cost of importing built-ins on this path.
const { fstatSync, readFileSync, realpathSync } = process.getBuiltinModule('node:fs');

/** The hooks goald answers, by the name that follows `goald hook`. */
const HOOK_NAMES = ['post-tool-use'] as const;
// Same value as EXIT.usage in src/errors.ts, not imported to keep this path minimal.
const EXIT_USAGE = 2;

/**
 * Runs `goald hook <args>`: `args` are the words after `hook` (`process.argv.slice(3)` in bin.js). Reads
 * the payload from process.stdin, prints the hook's answer (if any) on stdout, and resolves with the exit
 * code. A hook problem never fails the agent's tool call: only a wrong hook name exits non-zero.
 */
export async function main(args: readonly string[]): Promise<number> {
  const name = args[0];
  if (name !== 'post-tool-use') {
    process.stderr.write(
      `goald hook: ${name === undefined ? 'missing hook name' : `unknown hook ${JSON.stringify(name)}`}; ` +
        `expected one of: ${HOOK_NAMES.join(', ')}\n`,
    );
    return EXIT_USAGE;
  }
  const stdin = await readStdin();
  const outcome = runPostToolUseHook({ stdin, env: process.env });
  if (outcome.stdout !== '') await writeStdout(outcome.stdout);
  return outcome.exitCode;
}

// All of stdin as text; empty when stdin is a terminal (run by hand), instead of waiting for input. Read
// with one synchronous call on fd 0: setting up process.stdin as a stream costs several milliseconds.
async function readStdin(): Promise<string> {
  try {
    // A terminal (or /dev/null): a character device, never a payload.
    if (fstatSync(0).isCharacterDevice()) return '';
    return readFileSync(0, 'utf8');
  } catch (error) {
    // EAGAIN: the parent left our stdin non-blocking, and the stream copes with that. Anything else (EBADF:
    // no stdin at all) means there is no payload.
    if (!isErrnoCode(error, 'EAGAIN')) return '';
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function writeStdout(text: string): Promise<void> {
  return new Promise((resolve) => {
    // EPIPE when Claude Code stopped reading: nothing to do about it, and never worth a crash.
    process.stdout.once('error', () => resolve());
    process.stdout.write(text, () => resolve());
  });
}

// Run directly (not imported by bin.js). import.meta.filename spares loading node:url for pathToFileURL; the
// realpath covers a symlinked checkout, and is only asked for when the entry is named hook-main.js.
const entry = process.argv[1];
const isEntry = (path: string): boolean => path === import.meta.filename || realpathSync(path) === import.meta.filename;
// No top-level await: the bundle (scripts/bundle.mjs) is CommonJS.
if (entry?.endsWith('hook-main.js') === true && isEntry(entry)) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
