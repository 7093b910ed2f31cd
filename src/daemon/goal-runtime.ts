// What running goals and loops needs (the supervisor stack, agents, evaluators, config resolution, the
// config watcher, the scheduler), loaded on first use: an idle daemon that imported all of it up front
// would hold ~6 MB more (bench: daemon RSS idle, target ≤ 60 MB).

export { createAgent } from '../agents/registry.js';
export { watchConfigFile } from '../config/config-watcher.js';
export { loadConfigFile } from '../config/load-config.js';
export { resolveGoalSettings } from '../config/resolve-settings.js';
export { parseStoredSettings } from '../config/settings-schema.js';
export { buildSupervisor, createGoalEvaluator, newGoalRecord, prepareGoal } from '../supervisor/launch.js';
export { restoreGoalMachine } from '../supervisor/stored-machine.js';
export { createCheckRunner } from '../workspace/checks.js';
export { resolveWorkspace } from '../workspace/find-workspace.js';
export { declaredLoopLayer, LoopHost } from './loop-host.js';
