// The breakers' public surface: pure functions over BreakerState, no I/O.

export {
  accountUnevaluatedTurn,
  afterRestoredTree,
  initialBreakerState,
  nextBreakerState,
  projectNextTurn,
  PATCH_HISTORY_LIMIT,
  TREE_HISTORY_LIMIT,
} from './breaker-state.js';
export { findTrip, mostRepeatedPatch, refuseNextTurn, TRIP_PRIORITY } from './find-trip.js';
export { DEFAULT_NOISE_PATHS, isNoisePath } from './noise.js';
export { nearBreakerWarnings } from './warnings.js';
export { distanceOf } from './no-progress.js';
