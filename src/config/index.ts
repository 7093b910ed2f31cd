// Configuration: config files, flags and GOALD_* variables resolved into GoalSettings.

export type * from './types.js';
export * from './defaults.js';
export {
  DURATION_PATTERN,
  formatDuration,
  parseDuration,
  parseNonNegativeNumber,
  parsePositiveInt,
  toDurationText,
} from './duration.js';
export { CONFIG_FILE_NAME, loadConfigFile, parseConfigText } from './load-config.js';
export { ADAPTER_NAMES, checkNameFor, parseEvaluator } from './flag-values.js';
export { requireAgentCommand, requireEvaluatorModel, requireVerification } from './settings-rules.js';
export {
  resolveGoalSettings,
  resolveUserConfigPath,
  type ResolvedSettings,
  type ResolveSettingsInput,
  type StartFlags,
} from './resolve-settings.js';
export { configFileSchema, type ConfigFile, type ConfigLoop } from './schema.js';
