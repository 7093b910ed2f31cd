// The Store: locked, atomic access to `<home>/state.json` through AtomicFileAdapter (a lowdb adapter).

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SerialQueue } from '../src/daemon/serial-queue.js';
import { GoaldError } from '../src/errors.js';
import { AtomicFileAdapter, backupPathFor } from './atomic-file-adapter.js';
import { removeOrphanTempFiles } from './durable-file.js';
import { isSafeId, stateFilePath } from './paths.js';
import { withStateLock, type StateLockOptions } from './state-lock.js';
import { createEmptyState } from './state-schema.js';
import type { GoalRecord, StateFile, Store, StoreUpdateOptions } from './types.js';

// The home holds the control socket and every goal's transcripts: owner only.
const DIR_MODE = 0o700;

export interface StoreOptions extends StateLockOptions {
  /** Scanned for `*_API_KEY` values that must never be written (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** Opens the store of a goald home, creating the home (mode 0700) if it is missing. */
export async function openStore(home: string, options: StoreOptions = {}): Promise<Store> {
  // Synchronous: each step is a small one on the way to every command's first write.
  mkdirSync(home, { recursive: true, mode: DIR_MODE });
  removeOrphanTempFiles([stateFilePath(home), backupPathFor(stateFilePath(home))]);
  const adapter = new AtomicFileAdapter(stateFilePath(home), options.env === undefined ? {} : { env: options.env });
  const lockOptions: StateLockOptions = {};
  if (options.retries !== undefined) lockOptions.retries = options.retries;
  if (options.staleMs !== undefined) lockOptions.staleMs = options.staleMs;
  const lostLockError = (): GoaldError =>
    new GoaldError(
      'state-locked',
      `lost the lock on ${adapter.path} while updating it; the update was not written`,
      'retry; this happens when goald is stalled for more than 10 s',
    );

  async function updateLocked<T>(mutate: (state: StateFile) => T, options: StoreUpdateOptions): Promise<T> {
    return withStateLock(
      home,
      async (isCompromised) => {
        // Read under the lock: what another process wrote is seen, and nobody writes until we are done.
        const onDisk = adapter.readWithText();
        const state = onDisk.state ?? createEmptyState();
        const result = mutate(state);
        if (isCompromised()) throw lostLockError();
        await adapter.replace(state, onDisk.text, writeOptionsOf(options));
        return result;
      },
      lockOptions,
    );
  }

  // Updates from this instance queue here first, so they do not spin against each other on the file lock.
  const queue = new SerialQueue();
  const queued = <T>(task: () => Promise<T>): Promise<T> => queue.run(task);
  // An adapter write queued and under the lock, cancelled before it writes when the lock was lost.
  type LockedWriteOptions = ReturnType<typeof writeOptionsOf> & { beforeWrite: () => void };
  const lockedWrite = <T>(options: StoreUpdateOptions, write: (options: LockedWriteOptions) => Promise<T>): Promise<T> =>
    queued(() =>
      withStateLock(
        home,
        (isCompromised) =>
          write({
            ...writeOptionsOf(options),
            beforeWrite: () => {
              if (isCompromised()) throw lostLockError();
            },
          }),
        lockOptions,
      ),
    );

  return {
    home,
    read: async () => (await adapter.read()) ?? createEmptyState(),
    readGoals: async (keep: (goal: Readonly<GoalRecord>) => boolean) => adapter.readGoals(keep),
    watch: (listener) => adapter.watch(listener),
    update: <T>(mutate: (state: StateFile) => T, options: StoreUpdateOptions = {}): Promise<T> => queued(() => updateLocked(mutate, options)),
    updateGoal: (goalId: string, mutate: (goal: GoalRecord) => void, options: StoreUpdateOptions = {}): Promise<boolean> =>
      lockedWrite(options, (writeOptions) => adapter.updateGoal(goalId, mutate, writeOptions)),
    addGoal: <T>(goal: GoalRecord, admit: (stored: readonly GoalRecord[]) => T | null, options: StoreUpdateOptions = {}): Promise<T | null> =>
      lockedWrite(options, (writeOptions) => adapter.addGoal(goal, admit, writeOptions)),
    goalDir: (goalId: string): string => {
      if (!isSafeId(goalId)) {
        throw new GoaldError('usage', `"${goalId}" is not a goal id`, 'goal ids are letters, digits, - and _');
      }
      const dir = join(home, 'goals', goalId);
      mkdirSync(dir, { recursive: true, mode: DIR_MODE });
      return dir;
    },
  };
}

// How an update's write lands (AtomicFileAdapter): its rename flushed unless it need not be durable, and
// after what it waits for.
function writeOptionsOf(options: StoreUpdateOptions): { syncDirectory: boolean; after?: Promise<unknown> } {
  return { syncDirectory: options.durable !== false, ...(options.after === undefined ? {} : { after: options.after }) };
}
