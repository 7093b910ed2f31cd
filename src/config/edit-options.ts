// The options of `goald edit`: the rows of the start options' table (start-options.ts) that an owner may
// change on a goal that already runs; they are parsed by the same code as `goald start`'s flags
// (apply-edit.ts). Light on purpose: the CLI builds its options from this module.

import { SETTING_OPTIONS, type StartFlags } from './start-options.js';

/** The start options `goald edit` takes, by key (in the table's order). */
export const EDIT_OPTION_KEYS = ['check', 'evaluator', 'maxTurns', 'tokenBudget', 'turnTimeout', 'costBudget', 'wallClock', 'progress'] as const;

type EditKey = (typeof EDIT_OPTION_KEYS)[number];

/** What `goald edit` carries over the socket: the edit options' values as the CLI received them. */
export type EditFlags = Pick<StartFlags, EditKey>;

function isEditKey(key: string): key is EditKey {
  return (EDIT_OPTION_KEYS as readonly string[]).includes(key);
}

/** The table's rows for the edit options (commander options and the request schema are made from them). */
export const EDIT_OPTIONS = SETTING_OPTIONS.filter((option) => isEditKey(option.key));
