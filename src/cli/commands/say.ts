// `goald say <goal> "<text>"`: guidance for a running goal, queued in the daemon and carried by the next
// turn's prompt. It never changes the goal's condition, checks, evaluator or limits.

import { ensureDaemon } from '../../daemon/auto-start.js';
import { EXIT, GoaldError } from '../../errors.js';
import { MAX_GUIDANCE_CHARS } from '../../prompt/guidance-block.js';
import { lookupGoal } from '../goal-lookup.js';
import type { CliIO } from '../io.js';

/** Runs `goald say`; resolves with the exit code. */
export async function runSay(ref: string, text: string, options: { json?: boolean }, io: CliIO): Promise<number> {
  if (text.trim() === '') throw new GoaldError('usage', 'goald say needs some text', 'e.g. goald say <goal> "the flaky test is in src/net; leave the parser alone"');
  if (text.length > MAX_GUIDANCE_CHARS) {
    throw new GoaldError('usage', `guidance is ${text.length} characters; at most ${MAX_GUIDANCE_CHARS}`, 'say less, or say it in two turns');
  }
  const client = await ensureDaemon(io.env);
  const goal = await lookupGoal(await client.listGoals(), ref, io.cwd);
  const reply = await client.guideGoal(goal.id, text);
  if (options.json) {
    io.out(JSON.stringify({ type: 'goal.guided', id: reply.goal.id, pending: reply.pending }));
    return EXIT.ok;
  }
  io.out(`goal ${reply.goal.id}: guidance queued for its next turn (${reply.pending} pending)`);
  return EXIT.ok;
}
