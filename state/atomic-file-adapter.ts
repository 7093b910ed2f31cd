// A lowdb adapter for state.json that never leaves a half-written or corrupt file behind: each write
// goes to a unique temp file that is fsynced and renamed over the target, after the previous good
// content was kept as state.json.bak (at most a second behind, see BACKUP_REFRESH_MS). A file that fails
// to parse or to match the schema is reported with its path and never overwritten; `restoreFromBackup`
// is the only way back, and only when asked. (The file goald wrote last, which the note beside it names,
// is read without the schema pass: every record of it was checked as it was written; state-seal.ts.)

import type { Adapter } from 'lowdb';
import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { monotonicMs } from '../src/clock.js';
import { isErrnoCode } from '../src/errno.js';
import { GoaldError } from '../src/errors.js';
import { tempPathFor, writeFileDurable, type DurableWriteOptions } from './durable-file.js';
import { stateFilePath } from './paths.js';
import { withStateLock, type StateLockOptions } from './state-lock.js';
import { createEmptyState, parseStateText } from './state-schema.js';
import { identityOfOpenFile, isSealed, writeSeal } from './state-seal.js';
import { StateTextBuilder, type StateText } from './state-text.js';
import type { GoalRecord, SeenStateListener, StateFile } from './types.js';

/** The backup of a state file: its previous good content. */
export function backupPathFor(path: string): string {
  return `${path}.bak`;
}

/** The error for a state file that cannot be read as goald state; the file is left as it is. */
function stateCorruptError(path: string, problem: string): GoaldError {
  return new GoaldError(
    'state-corrupt',
    `${path} is not valid goald state (${problem})`,
    `inspect it, or run \`goald state restore\` to restore ${backupPathFor(path)}`,
  );
}

/** Reads a file's text, or null when it does not exist (synchronously: state.json is a few KiB). */
function readTextIfExists(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return null;
    throw error;
  }
}

/** The state file as one read found it: its bytes, their text and the file's identity (state-seal.ts). */
interface FileRead {
  bytes: Buffer;
  text: string;
  identity: string | null;
}

// The state file's bytes and its identity (state-seal.ts), from one open file: null when there is none.
function readStateFile(path: string): Omit<FileRead, 'text'> | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return null;
    throw error;
  }
  try {
    return { identity: identityOfOpenFile(fd), bytes: readFileSync(fd) };
  } finally {
    closeSync(fd);
  }
}

// A file the note vouches for, parsed: null when it does not parse as JSON with both records' arrays after
// all (checked the usual way then).
function parseSealedText(text: string): StateFile | null {
  try {
    const state: unknown = JSON.parse(text);
    if (state === null || typeof state !== 'object' || !('goals' in state) || !('loops' in state)) return null;
    return Array.isArray(state.goals) && Array.isArray(state.loops) ? (state as StateFile) : null;
  } catch {
    return null;
  }
}

export interface AtomicFileAdapterOptions {
  /** Scanned for `*_API_KEY` values that must never be written (default process.env). */
  env?: NodeJS.ProcessEnv;
}

// How old the .bak may grow while this adapter rewrites its own text: a goal whose turns take milliseconds
// writes state.json several times a second, and each refresh is two more journaled directory changes on
// the turn's path (a link and a rename, each waiting out the fsync before it). A .bak at most this much
// older than its file is as good a way back from a corrupt file; over any other text it is taken at once.
const BACKUP_REFRESH_MS = 1_000;

// Keeps the file being replaced as `.bak` without copying it: a hard link to its inode, renamed into
// place (the content was fsynced when it was written; the caller's directory fsync covers the rename).
// Filesystems without hard links get a durable copy instead.
async function keepAsBackup(path: string, previous: string): Promise<void> {
  const temp = tempPathFor(backupPathFor(path));
  try {
    linkSync(path, temp);
    renameSync(temp, backupPathFor(path));
  } catch {
    try {
      unlinkSync(temp);
    } catch {
      // not made
    }
    await writeFileDurable(backupPathFor(path), previous);
  }
}

/** How a write lands: its rename flushed (default) or not, and what it waits for before the rename. */
type WriteOptions = Pick<DurableWriteOptions, 'syncDirectory' | 'after'>;

/** The state on disk and the exact text it was read from (null: no file yet). */
export interface StateOnDisk {
  state: StateFile | null;
  text: string | null;
}

export class AtomicFileAdapter implements Adapter<StateFile> {
  readonly path: string;
  readonly #text: StateTextBuilder;
  /**
   * What this adapter last found on disk or put there, already checked against the schema, and the state
   * it parses to. Reading the same text again (no other process wrote meanwhile) skips the schema; callers
   * get a copy, so this one is never mutated.
   */
  #known: StateText | null = null;
  /**
   * The bytes of #known's text (as written, or as a read found them): a read that finds the same bytes
   * takes that text without decoding the file again (~3 ms at 4 MB, a thousand goals).
   */
  #knownBytes: Buffer | null = null;
  /** The text this adapter last wrote, and when it last refreshed the .bak (monotonicMs()). */
  #written: string | null = null;
  #backedUpAt: number | null = null;
  /** Told of each version seen (#see); the identity last told, so a version is told once. */
  #listener: SeenStateListener | null = null;
  #toldIdentity: string | null = null;

  constructor(path: string, options: AtomicFileAdapterOptions = {}) {
    this.path = path;
    this.#text = new StateTextBuilder(path, options.env ?? process.env);
  }

  /**
   * Tells `listener` of each version of the file this adapter reads or writes from now on (a write's
   * under the caller's lock, right after its rename), and at once of the version on disk now (none when
   * there is no file). The daemon's status snapshot is kept this way (src/daemon/status-snapshot.ts).
   */
  watch(listener: SeenStateListener): void {
    this.#listener = listener;
    this.#toldIdentity = null;
    try {
      const file = this.#readFile();
      if (file !== null) this.#checkedText(file);
    } catch {
      // A file that cannot be read now is told when a good version is read or written.
    }
  }

  // Tells the listener of a version, once.
  #see(identity: string | null, state: StateFile): void {
    if (this.#listener === null || identity === null || identity === this.#toldIdentity) return;
    this.#toldIdentity = identity;
    try {
      this.#listener({ identity, state });
    } catch {
      // The listener's trouble (it is only told) never fails a read or a write of the state.
    }
  }

  /** The validated state, or null when the file does not exist yet; throws `state-corrupt` otherwise. */
  read(): Promise<StateFile | null> {
    try {
      return Promise.resolve(this.readWithText().state);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Copies of the stored goals `keep` accepts (read as read() would); the others are not copied. */
  readGoals(keep: (goal: Readonly<GoalRecord>) => boolean): GoalRecord[] {
    const file = this.#readFile();
    if (file === null) return [];
    return this.#checkedText(file).state.goals.filter(keep).map((goal) => structuredClone(goal));
  }

  /** The validated state and the text it came from (both null when there is no file). */
  readWithText(): StateOnDisk {
    return this.#stateOnDisk(this.#readFile());
  }

  // The state file as read: its text is #known's, not decoded again, when the bytes are those it came from.
  #readFile(): FileRead | null {
    const file = readStateFile(this.path);
    if (file === null) return null;
    if (this.#known !== null && this.#knownBytes?.equals(file.bytes) === true) return { ...file, text: this.#known.text };
    return { ...file, text: file.bytes.toString('utf8') };
  }

  // A file read (#readFile) as readWithText gives it.
  #stateOnDisk(file: FileRead | null): StateOnDisk {
    if (file === null) return { state: null, text: null };
    const { text } = this.#checkedText(file);
    // The caller's own copy: the text parsed again, which is the checked state (the schema only checks: no
    // defaults, no transforms; state-schema.ts) at a third of structuredClone's cost.
    return { state: JSON.parse(text) as StateFile, text };
  }

  // The file's text with the state it parses to: #known when it is that text; else checked against the
  // schema (throws `state-corrupt`), unless the note beside it vouches for this very file (state-seal.ts);
  // known from now on, and told to the listener (#see). Never to be changed by the caller.
  #checkedText(file: FileRead): StateText {
    const checked = this.#checkText(file);
    this.#see(file.identity, checked.state);
    return checked;
  }

  // #checkedText without telling anyone.
  #checkText(file: FileRead): StateText {
    const { text } = file;
    if (this.#known?.text === text) return this.#known;
    const sealed = isSealed(this.path, file.identity) ? parseSealedText(text) : null;
    if (sealed !== null) {
      this.#known = { text, state: sealed, vouched: true };
    } else {
      const parsed = parseStateText(text);
      if (!parsed.ok) throw stateCorruptError(this.path, parsed.problem);
      this.#known = { text, state: parsed.state };
    }
    this.#knownBytes = file.bytes;
    return this.#known;
  }

  /**
   * Read-modify-write that adds one goal, under the caller's lock. `admit` sees the goals stored first (the
   * adapter's own, not to be changed): it throws to refuse, returns null to add nothing, and what else it
   * returns is returned. Only the new record is checked when the file is one this builder could have
   * written (state-text.ts, buildWithAddedGoal): a registration costs about the same with a thousand
   * finished goals in the home as with none. `beforeWrite` may throw to cancel the write.
   */
  async addGoal<T>(goal: GoalRecord, admit: (stored: readonly GoalRecord[]) => T | null, options: WriteOptions & { beforeWrite?: () => void } = {}): Promise<T | null> {
    const file = this.#readFile();
    const known = file === null ? null : this.#checkedText(file);
    const text = file?.text ?? null;
    const stored = known?.state.goals ?? [];
    const result = admit(stored);
    if (result === null) return null;
    options.beforeWrite?.();
    const built = (known === null ? null : this.#text.buildWithAddedGoal(known, goal)) ?? this.#text.build({ ...(known?.state ?? createEmptyState()), goals: [...stored, goal] }, known ?? undefined);
    await this.#put(built, text, options);
    return result;
  }

  /** Replaces the file atomically (secrets redacted), keeping the previous good content as `.bak`. */
  async write(data: StateFile): Promise<void> {
    await this.replace(data, readTextIfExists(this.path));
  }

  /**
   * write() when the caller knows what is on disk: `previous` is the text readWithText() returned under
   * the same lock (null: no file). `syncDirectory: false` skips flushing the rename (see StoreUpdateOptions).
   */
  async replace(state: StateFile, previous: string | null, options: WriteOptions = {}): Promise<void> {
    // Redacted, validated as it will read back, and scanned by the secret guard (state-text.ts).
    // The file last read, when `previous` is its text: its records are adopted as checked (state-text.ts).
    const validated = previous !== null && previous === this.#known?.text ? this.#known : undefined;
    await this.#put(this.#text.build(state, validated), previous, options);
  }

  /**
   * Read-modify-write of one goal's record, under the caller's lock: `mutate` changes a copy of the goal as
   * stored; false (nothing written) when there is no such goal. When the file is the one this adapter last
   * wrote (no other process wrote since), only that record is checked and the rest of the text is reused:
   * the write costs the same with one goal in the home as with a thousand finished ones.
   * `beforeWrite` may throw to cancel the write (the caller lost its lock).
   */
  async updateGoal(
    goalId: string,
    mutate: (goal: GoalRecord) => void,
    options: WriteOptions & { beforeWrite?: () => void } = {},
  ): Promise<boolean> {
    // One read for both ways: the text compared below, or the file checked as readWithText would.
    const file = this.#readFile();
    const text = file?.text ?? null;
    const known = this.#known;
    if (text !== null && known?.text === text && this.#text.lastText === text) {
      const index = known.state.goals.findIndex((goal) => goal.id === goalId);
      const stored = known.state.goals[index];
      if (stored === undefined) return false;
      const goal = structuredClone(stored);
      mutate(goal);
      options.beforeWrite?.();
      const built = this.#text.buildWithGoal(index, goal) ?? this.#text.build({ ...known.state, goals: known.state.goals.with(index, goal) });
      await this.#put(built, text, options);
      return true;
    }
    const onDisk = this.#stateOnDisk(file);
    const state = onDisk.state ?? createEmptyState();
    const goal = state.goals.find((candidate) => candidate.id === goalId);
    if (goal === undefined) return false;
    mutate(goal);
    options.beforeWrite?.();
    await this.replace(state, onDisk.text, options);
    return true;
  }

  // Writes a built text over `previous` (see replace), keeping `previous` as the .bak (BACKUP_REFRESH_MS).
  async #put(built: StateText, previous: string | null, options: WriteOptions): Promise<void> {
    const { text } = built;
    if (previous !== null) {
      if (previous === text) return;
      // Text this adapter read or wrote is valid; anything else is checked before it becomes the .bak.
      if (previous !== this.#known?.text) {
        const current = parseStateText(previous);
        if (!current.ok) throw stateCorruptError(this.path, current.problem);
      }
      const now = monotonicMs();
      const recentlyBackedUp = previous === this.#written && this.#backedUpAt !== null && now - this.#backedUpAt < BACKUP_REFRESH_MS;
      if (!recentlyBackedUp) {
        await keepAsBackup(this.path, previous);
        this.#backedUpAt = now;
      }
    }
    let identity: string | null = null;
    // Encoded here rather than inside the write (the same cost), so the bytes are known for the next read.
    const bytes = Buffer.from(text, 'utf8');
    await writeFileDurable(this.path, bytes, { ...options, onFlushed: (fd) => (identity = identityOfOpenFile(fd)) });
    this.#known = built;
    this.#knownBytes = bytes;
    this.#written = text;
    // Every record of `text` was checked by the builder: the next process may read it without the schema.
    writeSeal(this.path, identity);
    this.#see(identity, built.state);
  }
}

export interface RestoreResult {
  /** The state file that was restored. */
  path: string;
  /** The backup it was restored from. */
  backupPath: string;
  /** Where the replaced (corrupt) content was kept, or null when there was no state file. */
  replacedCopyPath: string | null;
}

/** Restores `<home>/state.json` from `state.json.bak`, keeping the replaced file beside it. Only on request. */
export async function restoreFromBackup(home: string, lockOptions: StateLockOptions = {}): Promise<RestoreResult> {
  const path = stateFilePath(home);
  const backupPath = backupPathFor(path);
  return withStateLock(
    home,
    async () => {
      const backup = readTextIfExists(backupPath);
      if (backup === null) {
        throw new GoaldError('not-found', `${backupPath} does not exist`, `inspect ${path} and repair it by hand`);
      }
      const parsed = parseStateText(backup);
      if (!parsed.ok) {
        throw new GoaldError(
          'state-corrupt',
          `${backupPath} is not valid goald state either (${parsed.problem})`,
          `inspect both files; moving ${path} aside makes goald start with an empty state`,
        );
      }
      const current = readTextIfExists(path);
      let replacedCopyPath: string | null = null;
      if (current !== null && current !== backup) {
        // Keep the evidence: the replaced file may hold goals the backup predates.
        replacedCopyPath = `${path}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
        await writeFileDurable(replacedCopyPath, current);
      }
      await writeFileDurable(path, backup);
      return { path, backupPath, replacedCopyPath };
    },
    lockOptions,
  );
}
