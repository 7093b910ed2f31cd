// The persistence layer: the only code that imports lowdb and proper-lockfile.

export type * from './types.js';
export {
  AtomicFileAdapter,
  backupPathFor,
  restoreFromBackup,
  serializeState,
  stateCorruptError,
  type AtomicFileAdapterOptions,
  type RestoreResult,
} from './atomic-file-adapter.js';
export { fsyncDirectory, isProcessAlive, writeFileDurable } from './durable-file.js';
export { jsonSchema, toJson } from './json.js';
export {
  isSafeId,
  newGoalId,
  newLoopId,
  resolveGoaldHome,
  resolveSocketPath,
  stateFilePath,
  SOCKET_FILE_NAME,
  STATE_FILE_NAME,
} from './paths.js';
export { LOCK_STALE_MS, stateLockPath, type StateLockOptions } from './state-lock.js';
export { createEmptyState, createEmptySummary, stateFileSchema } from './state-schema.js';
export { openStore, type StoreOptions } from './store.js';
export {
  appendTurnRecord,
  readTurnLog,
  readTurnRecords,
  turnLogPath,
  TURN_LOG_FILE_NAME,
  type SkippedLine,
  type TurnLog,
} from './turn-log.js';
