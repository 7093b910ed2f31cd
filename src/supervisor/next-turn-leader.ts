// The next turn's agent process, started ahead in the goal's sandbox (process/ready-leader.ts) while the
// turn before is checked and recorded, or the pre-check runs: bwrap's set-up (~5 ms) and the fork are then
// off the turn's path. Only in the sandbox: unsandboxed, the fork alone was worth ~0.5 ms a turn (the
// waiting shell's exec costs back most of it), and a waiting shell outside any PID namespace could be
// reached by what the turn's checks run. bwrap mounts the turn's prompt file and hook state directory, so
// both must exist before it is set up: they are made empty here, and the turn writes its prompt over the
// file in place (a mount follows the file, not its name). Nothing of a turn runs before its spawn claims
// the leader; one never claimed is ended, and what was made for it removed.

import { mkdirSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startReadyLeader, type ReadyLeader } from '../process/ready-leader.js';
import type { GoalSandbox } from '../sandbox/goal-sandbox.js';
import type { SandboxWrap } from '../sandbox/types.js';
import { turnFiles } from './turn-record.js';

interface Held {
  turn: number;
  wrap: SandboxWrap;
  ready: ReadyLeader;
  /** What prepare() made for the sandbox's mounts. */
  made: { promptPath: string; stateDir: string | null };
}

/** A turn's sandbox and the process started ahead in it, for TurnInput. */
export interface ReadiedTurn {
  wrap: SandboxWrap;
  ready: ReadyLeader;
}

export class NextTurnLeader {
  private held: Held | null = null;
  private disabled = false;

  constructor(
    private readonly sandbox: GoalSandbox | undefined,
    private readonly workspace: string,
    private readonly goalDir: string,
    /** The agent's turns keep a state directory (AgentAdapter.keepsTurnState): it is made too. */
    private readonly keepsTurnState: boolean,
    /** The environment the agent's turns start from (AgentAdapter.environment), which the process is given. */
    private readonly environment: NodeJS.ProcessEnv | undefined,
  ) {}

  /** Starts turn `turn`'s agent process in the goal's sandbox, unless one is held for it; a no-op unsandboxed. */
  prepare(turn: number): void {
    const { sandbox } = this;
    if (sandbox === undefined || sandbox.use !== 'bwrap' || this.disabled || this.held?.turn === turn) return;
    this.discard();
    try {
      const files = turnFiles(turn);
      const made = { promptPath: path.join(this.goalDir, files.promptFile), stateDir: this.keepsTurnState ? path.join(this.goalDir, files.stateDir) : null };
      writeFileSync(made.promptPath, '', { flag: 'a', mode: 0o600 });
      if (made.stateDir !== null) mkdirSync(made.stateDir, { recursive: true, mode: 0o700 });
      const wrap = sandbox.forTurn(made);
      if (wrap === null) return;
      this.held = { turn, wrap, ready: startReadyLeader({ cwd: this.workspace, sandbox: wrap, ...(this.environment === undefined ? {} : { env: this.environment }) }), made };
    } catch {
      // Only speed: the turn spawns its process as usual.
    }
  }

  /** From now on nothing is started ahead (a run of one turn only, or the run is over). */
  disable(): void {
    this.disabled = true;
    this.discard();
  }

  /** Turn `turn`'s process started ahead, with the sandbox it runs in; null when none is held for it. */
  take(turn: number): ReadiedTurn | null {
    const held = this.held;
    if (held === null || held.turn !== turn) return null;
    this.held = null;
    return { wrap: held.wrap, ready: held.ready };
  }

  /** Ends a process held for a turn that will not run (the goal ended, paused or was let go). */
  discard(): void {
    const held = this.held;
    this.held = null;
    if (held === null) return;
    held.ready.discard();
    // What prepare() made, while nothing was written to it.
    try {
      if (statSync(held.made.promptPath).size === 0) unlinkSync(held.made.promptPath);
      if (held.made.stateDir !== null) rmdirSync(held.made.stateDir);
    } catch {
      // Written since, or gone: left as it is.
    }
  }
}
