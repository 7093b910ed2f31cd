// `goald rollback <goal> --to-turn n [--json]`: puts the files of a paused or finished goal back as turn n
// left them (src/checkpoints/); a worktree goal's branch (and a paused one's worktree) goes back to turn n's commit. Through the daemon when one runs (a paused goal needs it: its supervisor
// must know); a finished goal also without one. An active goal is refused (exit 2): its agent may be
// writing the very files, so it must be paused first.

import { openStore, resolveGoaldHome } from '../../../state/index.js';
import type { GoalRecord, GoalRollback } from '../../../state/types.js';
import { rollbackFinishedGoal } from '../../checkpoints/rollback-goal.js';
import { connectIfRunning } from '../../daemon/auto-start.js';
import { goalFilterFor, isLiveGoal } from '../../daemon/resolve-goal.js';
import { EXIT, GoaldError } from '../../errors.js';
import { lookupGoal } from '../goal-lookup.js';
import type { CliIO } from '../io.js';

/** `goald rollback <goal> --to-turn n [--json]`. */
export async function runRollback(ref: string, options: { toTurn?: string; json?: boolean }, io: CliIO): Promise<number> {
  const toTurn = parseTurn(options.toTurn);
  const client = await connectIfRunning(io.env);
  let result: { goal: GoalRecord; rollback: GoalRollback };
  if (client) {
    const goal = await lookupGoal(await client.listGoals(goalFilterFor(ref)), ref, io.cwd);
    result = await client.rollbackGoal(goal.id, toTurn);
  } else {
    const store = await openStore(resolveGoaldHome(io.env));
    const goal = await lookupGoal((await store.read()).goals, ref, io.cwd);
    if (isLiveGoal(goal)) {
      if (goal.owner?.kind === 'foreground') {
        throw new GoaldError('conflict', `goal ${goal.id} is ${goal.status} in a foreground process (pid ${goal.owner.pid})`, 'stop it first (Ctrl-C in its terminal, or goald stop), then roll it back');
      }
      throw new GoaldError('daemon-unreachable', `goal ${goal.id} is ${goal.status} and the daemon that runs it is not running`, 'start it with `goald daemon` (it takes the goal back), pause the goal, then roll it back');
    }
    result = { goal, rollback: await rollbackFinishedGoal(store, goal, toTurn) };
  }
  const { goal, rollback } = result;
  if (options.json) {
    io.out(JSON.stringify({ type: 'goal.rolled-back', id: goal.id, status: goal.status, ...rollback }));
    return EXIT.ok;
  }
  const files = [...rollback.written, ...rollback.removed];
  const named = files.length === 0 ? '' : `: ${files.slice(0, 10).join(', ')}${rollback.writtenCount + rollback.removedCount > 10 ? ', ...' : ''}`;
  io.out(`goal ${goal.id} rolled back to turn ${rollback.toTurn}: ${rollback.writtenCount} file${rollback.writtenCount === 1 ? '' : 's'} restored, ${rollback.removedCount} removed${named}`);
  if (goal.worktree !== undefined && rollback.commit !== undefined) io.out(`branch ${goal.worktree.branch} is at ${rollback.commit.slice(0, 12)} (was ${rollback.fromCommit?.slice(0, 12) ?? 'unknown'}): goald diff ${goal.id} shows it`);
  if (goal.status === 'paused') io.out(`its next turn starts from there: goald resume ${goal.id}`);
  return EXIT.ok;
}

function parseTurn(text: string | undefined): number {
  if (text === undefined) throw new GoaldError('usage', 'goald rollback needs --to-turn <n>', 'goald show <goal> lists its turns; e.g. goald rollback <goal> --to-turn 2');
  if (!/^\d+$/.test(text.trim())) throw new GoaldError('usage', `--to-turn: "${text}" is not a turn number`, 'use a whole number of 0 or more (0: the files before the first turn)');
  return Number(text.trim());
}
