// `goald prune [--older-than dur] [--keep n] [--dry-run] [--json]`: deletes finished goals' records and
// directories beyond the limits; through the daemon when it runs (so it never deletes a goal it is still
// closing), directly on the store (under its lock) when it does not.

import { z } from '../../zod.js';
import { openStore, resolveGoaldHome } from '../../../state/index.js';
import type { PruneResult } from '../../../state/prune-goals.js';
import { pruneGoalsAndWorktrees } from '../../worktree/prune-worktrees.js';
import { parseDuration } from '../../config/duration.js';
import { connectIfRunning } from '../../daemon/auto-start.js';
import type { PruneRequest } from '../../daemon/types.js';
import { EXIT, GoaldError } from '../../errors.js';
import { clip } from '../../cut-text.js';
import { formatBytes } from '../format.js';
import type { CliIO } from '../io.js';

/** Finished goals younger than this are kept unless --older-than says otherwise. */
const PRUNE_DEFAULT_OLDER_THAN = '30d';
/** The most recently finished goals kept whatever their age, unless --keep says otherwise. */
const PRUNE_DEFAULT_KEEP = 10;

const optionsSchema = z.object({
  olderThan: z.string().default(PRUNE_DEFAULT_OLDER_THAN),
  keep: z.string().optional(),
  dryRun: z.boolean().default(false),
  json: z.boolean().default(false),
});

// --keep 0 is meaningful (keep none by count), so this takes 0 and up.
function parseKeep(text: string | undefined): number {
  if (text === undefined) return PRUNE_DEFAULT_KEEP;
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw new GoaldError('usage', `--keep: ${JSON.stringify(text)} is not a whole number of 0 or more`, 'use e.g. --keep 10, or --keep 0 to keep none by count');
  }
  return value;
}

/** `goald prune` — resolves with the exit code. */
export async function runPrune(rawOptions: Record<string, unknown>, io: CliIO): Promise<number> {
  const options = optionsSchema.parse(rawOptions);
  const request: PruneRequest = {
    olderThanMs: parseDuration(options.olderThan, '--older-than'),
    keep: parseKeep(options.keep),
    dryRun: options.dryRun,
  };
  const client = await connectIfRunning(io.env);
  const result = client
    ? await client.prune(request)
    : await pruneGoalsAndWorktrees(await openStore(resolveGoaldHome(io.env)), { ...request, now: Date.now() });
  if (options.json) {
    io.out(JSON.stringify({ type: 'prune.finished', ...result }));
    return EXIT.ok;
  }
  for (const line of renderPrune(result)) io.out(line);
  return EXIT.ok;
}

// One line per goal, then the totals.
function renderPrune(result: PruneResult): string[] {
  const lines = result.goals.map((goal) =>
    [goal.id, goal.status.padEnd(8), (goal.finishedAt ?? '').slice(0, 16).replace('T', ' ').padEnd(16), formatBytes(goal.bytes).padStart(9), clip(goal.condition, 50)].join('  '),
  );
  const removal = result.dryRun ? 'would remove' : 'removed';
  for (const dir of result.worktrees ?? []) lines.push(`${removal} worktree ${dir}`);
  for (const branch of result.branches ?? []) lines.push(`${result.dryRun ? 'would delete' : 'deleted'} branch ${branch}`);
  const count = `${result.goals.length} finished goal${result.goals.length === 1 ? '' : 's'}`;
  const kept = `${result.kept} finished kept`;
  lines.push(
    result.dryRun
      ? `would prune ${count}, freeing ${formatBytes(result.bytes)} (${kept}; nothing was deleted: --dry-run)`
      : `pruned ${count}, freed ${formatBytes(result.bytes)} (${kept})`,
  );
  return lines;
}
