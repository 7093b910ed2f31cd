// The persistence layer: the only code that imports lowdb (and holds state.json's lock, state-lock.ts).

export type * from './types.js';
export { restoreFromBackup } from './atomic-file-adapter.js';
export { isProcessAlive } from '../src/process/process-identity.js';
export { toJson } from './json.js';
export { turnOfSnapshot } from './machine-snapshot.js';
export { newGoalId, newLoopId, resolveGoaldHome, resolveSocketPath } from './paths.js';
export { createEmptySummary, pauseReasonSchema } from './state-schema.js';
export { openStore } from './store.js';
export type { TurnRecord } from './turn-record.js';
export { appendTurnRecord, readTurnRecords } from './turn-log.js';
