// The daemon's races (issue 12, `goald race`): k worktree goals on one condition, started through the goal
// host like any goal (so admission, worktrees, recovery and events are theirs), at most `race.concurrency`
// at once. `first`: the first achieved member wins and the others are stopped; `best`: all run to their
// end, then the evaluator compares the achieved members' diffs (race-judge.ts). The record is stored at
// every change (race-record.ts); a daemon that restarts picks running races up again (resume).

import path from 'node:path';
import { isProcessAlive } from '../../state/index.js';
import type { GoalRecord } from '../../state/types.js';
import { readStartFlags, type StartFlags } from '../config/start-options.js';
import { ADAPTER_NAMES } from '../config/flag-values.js';
import { loadConfigFile, CONFIG_FILE_NAME } from '../config/load-config.js';
import { resolveUserConfigPath } from '../config/resolve-settings.js';
import { parseStoredSettings } from '../config/settings-schema.js';
import type { EventSubscription, StartGoalRequest, StartGoalResponse } from '../daemon/types.js';
import { GoaldError } from '../errors.js';
import { createGoalEvaluator } from '../supervisor/launch.js';
import { resolveWorkspace } from '../workspace/find-workspace.js';
import { runGit } from '../workspace/git.js';
import { pickBest, type Candidate } from './race-judge.js';
import { newRaceId, readRaces, writeRace, type RaceRecord } from './race-record.js';

/** POST /v1/races body. */
export interface StartRaceRequest {
  condition?: string;
  dir: string;
  flags: StartFlags;
  env: Record<string, string>;
  /** Each an adapter name or a shell command; member i runs agents[i % agents.length]. */
  agents: string[];
  /** Members (default: one per agent). */
  n?: number;
  pick: 'first' | 'best';
}

/** What a race needs of the goal host. */
export interface RaceGoals {
  startGoal(request: StartGoalRequest): Promise<StartGoalResponse>;
  stopGoal(ref: string): Promise<GoalRecord>;
  subscribe(ref: string): Promise<EventSubscription>;
  getGoal(ref: string): Promise<GoalRecord>;
}

/** How many members of a race run at once unless `race.concurrency` says otherwise: all of them. */
const DEFAULT_CONCURRENCY = Number.POSITIVE_INFINITY;

/** The members of a race a request asks for; exit 2 for a race of fewer than two. */
export function raceMembers(agents: readonly string[], n: number | undefined): string[] {
  const count = n ?? agents.length;
  if (agents.length === 0) throw new GoaldError('usage', 'race: no --agent given', 'pass --agent <cmd|adapter> once per contender, e.g. --agent claude-code --agent codex');
  if (!Number.isSafeInteger(count) || count < 2) {
    throw new GoaldError('usage', `race: ${count} member${count === 1 ? '' : 's'} is no race`, 'pass two or more --agent, or --n 2 or more');
  }
  return Array.from({ length: count }, (_, i) => agents[i % agents.length] as string);
}

/**
 * The start flags of a member that runs `agent` (an adapter name or a command), in a worktree of its own;
 * `worktree: false` on a cluster, where every goal already runs on its own branch.
 */
export function memberFlags(flags: StartFlags, agent: string, worktree = true): StartFlags {
  const { agent: _agent, adapter: _adapter, ...rest } = flags;
  const isAdapter = (ADAPTER_NAMES as readonly string[]).includes(agent) && agent !== 'command';
  return { ...rest, ...(worktree ? { worktree: true } : {}), ...(isAdapter ? { adapter: agent } : { agent }) };
}

export class RaceHost {
  private readonly home: string;
  private readonly goals: RaceGoals;
  private readonly env: NodeJS.ProcessEnv;
  private readonly log: (line: string) => void;
  private readonly owner: RaceRecord['owner'];
  /** Members in worktrees of their own (false on a cluster: each goal has its branch there). */
  private readonly worktrees: boolean;
  /** An achieved member's changes since its start, for `best`. */
  private readonly patchOf: (goal: GoalRecord) => Promise<string>;
  /** Each race this host runs, until it is decided. */
  private readonly runs = new Map<string, Promise<RaceRecord>>();
  private closing = false;

  constructor(options: {
    home: string;
    goals: RaceGoals;
    env: NodeJS.ProcessEnv;
    log: (line: string) => void;
    owner?: RaceRecord['owner'];
    worktrees?: boolean;
    patchOf?: (goal: GoalRecord) => Promise<string>;
  }) {
    this.home = options.home;
    this.goals = options.goals;
    this.env = options.env;
    this.log = options.log;
    this.owner = options.owner ?? null;
    this.worktrees = options.worktrees ?? true;
    this.patchOf = options.patchOf ?? branchPatch;
  }

  /** The race's record once this host has decided it (`goald race --foreground` waits on it). */
  async decided(raceId: string): Promise<RaceRecord> {
    const run = this.runs.get(raceId);
    if (run === undefined) throw new GoaldError('not-found', `race ${raceId} is not run here`);
    return run;
  }

  /** Starts a race: its record is stored and its first members are running when this resolves. */
  async start(request: StartRaceRequest): Promise<RaceRecord> {
    const agents = raceMembers(request.agents, request.n);
    const workspace = await resolveWorkspace(request.dir);
    const race: RaceRecord = {
      id: newRaceId(),
      condition: request.condition ?? '',
      repo: workspace.root,
      pick: request.pick,
      concurrency: Math.min(agents.length, await readConcurrency(workspace.root, { ...this.env, ...request.env })),
      members: agents.map((agent) => ({ agent, goalId: null, status: 'waiting' })),
      status: 'running',
      winner: null,
      reason: null,
      createdAt: new Date().toISOString(),
      finishedAt: null,
      ...(this.owner ? { owner: this.owner } : {}),
    };
    const base: Omit<StartGoalRequest, 'flags'> = { dir: request.dir, env: request.env, queue: true, ...(request.condition === undefined ? {} : { condition: request.condition }) };
    // The first members start here, so bad input (every one of them refused) reaches the caller before
    // anything is stored.
    const refused = await this.startMembers(race, base, request.flags);
    if (refused !== null && race.members.every((member) => member.status !== 'running')) throw refused;
    await writeRace(this.home, race);
    this.log(`race ${race.id}: ${race.members.length} members, pick ${race.pick}, ${race.concurrency} at once`);
    this.runs.set(race.id, this.run(race, base, request.flags).then(
      () => race,
      (error: unknown) => {
        this.log(`race ${race.id} crashed: ${error instanceof Error ? error.message : String(error)}`);
        return race;
      },
    ));
    return race;
  }

  /** Picks races a previous daemon left running up again (their member goals were recovered as goals). */
  async resume(): Promise<void> {
    for (const race of await readRaces(this.home)) {
      if (race.status !== 'running') continue;
      if (race.owner?.kind === 'foreground') {
        // A foreground race is its process's: left alone while it lives, ended once it is gone.
        if (!isProcessAlive(race.owner.pid)) await this.finish(race, null, `the foreground process that ran it (pid ${race.owner.pid}) ended`);
        continue;
      }
      const member = race.members.find((entry) => entry.goalId !== null);
      const first = member?.goalId ? await this.goals.getGoal(member.goalId).catch(() => null) : null;
      const stored = storedStart(first?.request);
      if (stored === null) {
        await this.finish(race, null, 'the daemon restarted and the race could not be resumed');
        continue;
      }
      this.log(`race ${race.id} resumed`);
      const base = { dir: race.repo, env: stored.env, queue: true, ...(race.condition === '' ? {} : { condition: race.condition }) };
      void this.run(race, base, stored.flags).catch((error: unknown) => this.log(`race ${race.id} crashed: ${String(error)}`));
    }
  }

  /** Nothing more starts (daemon shutdown); running members are detached with every goal. */
  close(): void {
    this.closing = true;
  }

  /**
   * Starts the waiting members the concurrency leaves room for, all at once: each start (validation, the
   * worktree, admission) overlaps the others' instead of queueing behind them. A member that cannot start
   * is marked failed; resolves with the first such error (null: none).
   */
  private async startMembers(race: RaceRecord, base: Omit<StartGoalRequest, 'flags'>, flags: StartFlags, watch?: (goalId: string) => void): Promise<Error | null> {
    const running = race.members.filter((member) => member.status === 'running').length;
    const next = race.members.flatMap((member, index) => (member.status === 'waiting' ? [index] : [])).slice(0, Math.max(0, race.concurrency - running));
    const errors = await Promise.all(
      next.map(async (index) => {
        try {
          await this.startMember(race, index, base, flags);
          const id = race.members[index]?.goalId;
          if (id) watch?.(id);
          return null;
        } catch (error) {
          const member = race.members[index];
          if (member) member.status = 'failed';
          this.log(`race ${race.id}: member ${index + 1} could not start: ${error instanceof Error ? error.message : String(error)}`);
          return error instanceof Error ? error : new Error(String(error));
        }
      }),
    );
    return errors.find((error) => error !== null) ?? null;
  }

  private async startMember(race: RaceRecord, index: number, base: Omit<StartGoalRequest, 'flags'>, flags: StartFlags): Promise<void> {
    const member = race.members[index];
    if (member === undefined) return;
    const { goal } = await this.goals.startGoal({ ...base, flags: memberFlags(flags, member.agent, this.worktrees) });
    member.goalId = goal.id;
    member.status = 'running';
    if (race.condition === '') race.condition = goal.condition;
  }

  // Runs members up to the concurrency limit until the race is decided; stores every change.
  private async run(race: RaceRecord, base: Omit<StartGoalRequest, 'flags'>, flags: StartFlags): Promise<void> {
    const ends = new Map<string, Promise<{ id: string; status: 'achieved' | 'failed' }>>();
    const watch = (goalId: string): void => {
      ends.set(goalId, this.waitForEnd(goalId).then((status) => ({ id: goalId, status })));
    };
    for (const member of race.members) if (member.status === 'running' && member.goalId) watch(member.goalId);
    const fill = async (): Promise<void> => {
      // A member that could not start frees its slot again: go on until the slots are full or none waits.
      while (!this.closing && race.winner === null && ends.size < race.concurrency && race.members.some((member) => member.status === 'waiting')) {
        await this.startMembers(race, base, flags, watch);
        await writeRace(this.home, race);
      }
    };
    await fill();
    while (ends.size > 0) {
      const ended = await Promise.race(ends.values());
      ends.delete(ended.id);
      const member = race.members.find((entry) => entry.goalId === ended.id);
      if (member && member.status === 'running') member.status = ended.status;
      if (race.pick === 'first' && ended.status === 'achieved' && race.winner === null) {
        race.winner = ended.id;
        race.reason = 'the first member to achieve the goal';
        for (const other of race.members) if (other.status === 'waiting') other.status = 'skipped';
        await writeRace(this.home, race);
        for (const id of ends.keys()) await this.goals.stopGoal(id).catch(() => undefined);
      } else {
        await writeRace(this.home, race);
      }
      if (this.closing) return;
      await fill();
    }
    if (this.closing) return;
    if (race.pick === 'first') {
      await this.finish(race, race.winner, race.winner === null ? 'no member achieved the goal' : race.reason ?? '');
      return;
    }
    await this.pickBest(race);
  }

  // `best`: the achieved members' diffs, compared by one evaluator call.
  private async pickBest(race: RaceRecord): Promise<void> {
    const candidates: Candidate[] = [];
    let evaluatorOf: GoalRecord | null = null;
    for (const member of race.members) {
      if (member.status !== 'achieved' || member.goalId === null) continue;
      const goal = await this.goals.getGoal(member.goalId);
      evaluatorOf ??= goal;
      const patch = await this.patchOf(goal);
      member.diffLines = countChangedLines(patch);
      candidates.push({ goalId: goal.id, patch, diffLines: member.diffLines });
    }
    if (candidates.length === 0 || evaluatorOf === null) {
      await this.finish(race, null, 'no member achieved the goal');
      return;
    }
    const parsed = parseStoredSettings(evaluatorOf.settings);
    if (!parsed.ok) throw new GoaldError('state-corrupt', `goal ${evaluatorOf.id} has invalid stored settings (${parsed.problem})`);
    const evaluator = await createGoalEvaluator(parsed.settings.evaluator, this.env);
    const pick = await pickBest(candidates, race.condition, evaluator);
    await this.finish(race, pick.goalId, pick.reason);
  }

  private async finish(race: RaceRecord, winner: string | null, reason: string): Promise<void> {
    race.winner = winner;
    race.reason = reason;
    race.status = winner === null ? 'none' : 'picked';
    race.finishedAt = new Date().toISOString();
    await writeRace(this.home, race);
    this.log(`race ${race.id} ${race.status}${winner ? `: ${winner}` : ''} (${reason})`);
  }

  // A member's end: its goal.finished event, or its record when it ended already (checked after the
  // listener is in place, so an end between the two is not missed).
  private async waitForEnd(goalId: string): Promise<'achieved' | 'failed'> {
    const subscription = await this.goals.subscribe(goalId);
    return new Promise((resolve) => {
      let done = false;
      const settle = (status: 'achieved' | 'failed'): void => {
        if (done) return;
        done = true;
        unsubscribe();
        resolve(status);
      };
      const unsubscribe = subscription.follow((event) => {
        if (event.type === 'goal.finished') settle(event.status);
      });
      const past = subscription.past.find((event) => event.type === 'goal.finished');
      if (past?.type === 'goal.finished') settle(past.status);
      void this.goals.getGoal(goalId).then((goal) => {
        if (goal.status === 'achieved' || goal.status === 'failed') settle(goal.status);
      });
    });
  }
}

// `race.concurrency` from the workspace's goal.config.json, else from the user's config.json (the precedence
// of every setting; a bad file is refused when the first member starts).
async function readConcurrency(workspace: string, env: NodeJS.ProcessEnv): Promise<number> {
  for (const file of [path.join(workspace, CONFIG_FILE_NAME), resolveUserConfigPath(env)]) {
    try {
      const { config } = await loadConfigFile(file);
      if (config?.race?.concurrency !== undefined) return config.race.concurrency;
    } catch {
      // refused with its problem when the first member starts
    }
  }
  return DEFAULT_CONCURRENCY;
}

// The flags and environment a member goal was started with, read back through the start options' table.
function storedStart(request: unknown): { flags: StartFlags; env: Record<string, string> } | null {
  if (typeof request !== 'object' || request === null) return null;
  const flags: unknown = Reflect.get(request, 'flags');
  const env: unknown = Reflect.get(request, 'env');
  if (typeof flags !== 'object' || flags === null || typeof env !== 'object' || env === null) return null;
  const strings = Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  return { flags: readStartFlags({ ...flags }), env: Object.fromEntries(strings) };
}

// The member's branch since its base (worktree goals only).
async function branchPatch(goal: GoalRecord): Promise<string> {
  const worktree = goal.worktree;
  if (worktree === undefined) return '';
  const diff = await runGit(['diff', '--no-color', '--no-ext-diff', worktree.base, `refs/heads/${worktree.branch}`], { cwd: worktree.repo, allowFailure: true });
  return diff.stdout;
}

function countChangedLines(patch: string): number {
  return patch.split('\n').filter((line) => (line.startsWith('+') && !line.startsWith('+++')) || (line.startsWith('-') && !line.startsWith('---'))).length;
}
