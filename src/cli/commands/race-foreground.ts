// `goald race --foreground`: the race runs in this process, no daemon involved. The same RaceHost as the
// daemon's decides it, over members run here (ForegroundGoals): each an ordinary worktree goal owned by
// this process. Prints like `start --foreground` (each member's progress lines, prefixed with its goal id,
// or every event as JSON between `race.submitted` and `race.finished`); Ctrl-C stops every member.

import { EXIT } from '../../errors.js';
import { createNotifier } from '../../notify/notifier.js';
import { ForegroundGoals } from '../../race/foreground-goals.js';
import { RaceHost, type StartRaceRequest } from '../../race/race-host.js';
import type { RaceRecord } from '../../race/race-record.js';
import { openHomeStore } from '../../supervisor/launch.js';
import type { ProgressEvent } from '../../supervisor/types.js';
import type { CliIO } from '../io.js';
import { renderProgressLine } from '../render-progress.js';
import { renderRaceDetail } from '../render-race.js';

/** Runs the race here to its end; resolves with the exit code (0: a member was picked, 1: none achieved). */
export async function runRaceInForeground(request: StartRaceRequest, json: boolean, io: CliIO): Promise<number> {
  const store = await openHomeStore(io.env);
  // Members' events that come before the race's own first line wait for it.
  let pending: (() => void)[] | null = [];
  const show = (line: () => void): void => {
    if (pending === null) line();
    else pending.push(line);
  };
  const notifier = createNotifier({ store, env: process.env, log: (line) => io.err(`goald: ${line}`) });
  const print = (goalId: string, event: ProgressEvent): void => {
    notifier.notify(goalId, event);
    if (json) {
      show(() => io.out(JSON.stringify(event)));
      return;
    }
    const line = renderProgressLine(event);
    if (line !== null) show(() => io.out(`${goalId}  ${line}`));
  };
  const goals = new ForegroundGoals({
    store,
    env: io.env,
    onEvent: print,
    crashed: (goalId, error) => io.err(`goald: member ${goalId} crashed: ${error instanceof Error ? error.message : String(error)}`),
  });
  const host = new RaceHost({ home: store.home, goals, env: io.env, log: (line) => io.err(`goald: ${line}`), owner: { kind: 'foreground', pid: process.pid } });
  const onSignal = (signal: NodeJS.Signals): void => goals.interrupt(`interrupted by ${signal}`);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const race = await host.start(request);
    if (json) io.out(JSON.stringify({ type: 'race.submitted', id: race.id, repo: race.repo, pick: race.pick, members: race.members }));
    else io.out(`race ${race.id} running here in ${race.repo}: ${race.members.length} members, pick ${race.pick}`);
    for (const line of pending) line();
    pending = null;
    const finished: RaceRecord = await host.decided(race.id);
    // A member the race stopped has ended too before the last line.
    await goals.settled();
    if (json) io.out(JSON.stringify({ type: 'race.finished', id: finished.id, status: finished.status, winner: finished.winner, reason: finished.reason, members: finished.members }));
    else for (const line of renderRaceDetail(finished)) io.out(line);
    return finished.status === 'picked' ? EXIT.ok : EXIT.goalFailed;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await goals.settled();
    await notifier.idle();
  }
}
