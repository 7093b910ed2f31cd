// `goald edit <goal>`: the owner changes a running goal's contract from its next turn, applies a held edit
// of goal.config.json (`--apply-config`), or reopens a goal that failed on a budget breaker (`--resume`).

import { ensureDaemon } from '../../daemon/auto-start.js';
import { goalFilterFor } from '../../daemon/resolve-goal.js';
import { EDIT_OPTION_KEYS, type EditFlags } from '../../config/edit-options.js';
import { readStartFlags } from '../../config/start-options.js';
import { EXIT } from '../../errors.js';
import { lookupGoal } from '../goal-lookup.js';
import type { CliIO } from '../io.js';
import { renderChange } from '../render-edits.js';

/** What commander parsed for `goald edit`. */
export type EditOptions = Record<string, unknown> & { applyConfig?: boolean; resume?: boolean; json?: boolean };

/** The edit flags among commander's options, as the socket request carries them. */
function toEditFlags(options: EditOptions): EditFlags {
  const all = readStartFlags(options);
  const flags: EditFlags = {};
  for (const key of EDIT_OPTION_KEYS) {
    if (key === 'check') {
      if (all.check !== undefined) flags.check = all.check;
    } else if (all[key] !== undefined) {
      flags[key] = all[key];
    }
  }
  return flags;
}

/** Runs `goald edit`; resolves with the exit code. */
export async function runEdit(ref: string, options: EditOptions, io: CliIO): Promise<number> {
  const client = await ensureDaemon(io.env);
  const goal = await lookupGoal(await client.listGoals(goalFilterFor(ref)), ref, io.cwd);
  const reply = await client.editGoal(goal.id, {
    flags: toEditFlags(options),
    applyConfig: options.applyConfig === true,
    resume: options.resume === true,
  });
  if (options.json) {
    io.out(JSON.stringify({ type: 'goal.edited', id: reply.goal.id, status: reply.goal.status, resumed: reply.resumed, changes: reply.changes }));
    return EXIT.ok;
  }
  const what = reply.resumed ? `reopened (turns continue after turn ${reply.goal.summary.turns})` : 'edited; applies from the next turn';
  io.out(`goal ${reply.goal.id} ${what}`);
  for (const change of reply.changes) io.out(`  ${renderChange(change)}`);
  return EXIT.ok;
}
