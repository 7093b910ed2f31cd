// The next turn, readied while the turn before is checked and recorded, or the pre-check runs: its files
// are made (the prompt, the transcript, the hook state directory), each a new inode whose creation would
// otherwise wait out the journal commit of the turn record's fsync on the way to the agent (~0.2–0.5 ms
// each); and in the goal's sandbox its agent process is started ahead (process/ready-leader.ts), so bwrap's
// set-up (~5 ms) and the fork are off the turn's path too. The process only in the sandbox: unsandboxed, the
// fork alone was worth ~0.5 ms a turn (the waiting shell's exec costs back most of it), and a waiting shell
// outside any PID namespace could be reached by what the turn's checks run. bwrap mounts the prompt file
// and the state directory, so both must exist before it is set up; the turn writes its prompt over the
// file in place (a mount follows the file, not its name). Nothing of a turn runs before its spawn claims
// the leader; one never claimed is ended, and what was made for it and is still empty is removed.

import { mkdirSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startReadyLeader, type ReadyLeader } from '../process/ready-leader.js';
import type { GoalSandbox } from '../sandbox/goal-sandbox.js';
import type { SandboxWrap } from '../sandbox/types.js';
import { turnFiles } from './turn-record.js';

interface Held {
  turn: number;
  /** The sandboxed turn's view and the process started ahead in it; null unsandboxed. */
  started: ReadiedTurn | null;
  /** What prepare() made. */
  made: { promptPath: string; transcriptPath: string; stateDir: string | null };
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

  /** Makes turn `turn`'s files and, in the goal's sandbox, starts its agent process, unless it is held already. */
  prepare(turn: number): void {
    if (this.disabled || this.held?.turn === turn) return;
    this.discard();
    const { sandbox } = this;
    try {
      const files = turnFiles(turn);
      const made = {
        promptPath: path.join(this.goalDir, files.promptFile),
        transcriptPath: path.join(this.goalDir, files.transcriptFile),
        stateDir: this.keepsTurnState ? path.join(this.goalDir, files.stateDir) : null,
      };
      writeFileSync(made.promptPath, '', { flag: 'a', mode: 0o600 });
      writeFileSync(made.transcriptPath, '', { flag: 'a', mode: 0o600 });
      if (made.stateDir !== null) mkdirSync(made.stateDir, { recursive: true, mode: 0o700 });
      this.held = { turn, started: null, made };
      const wrap = sandbox?.use === 'bwrap' ? sandbox.forTurn(made) : null;
      if (wrap === null) return;
      const ready = startReadyLeader({ cwd: this.workspace, sandbox: wrap, ...(this.environment === undefined ? {} : { env: this.environment }) });
      this.held.started = { wrap, ready };
    } catch {
      // Only speed: the turn makes its files and spawns its process as usual.
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
    return held.started;
  }

  /** Ends a process held for a turn that will not run (the goal ended, paused or was let go). */
  discard(): void {
    const held = this.held;
    this.held = null;
    if (held === null) return;
    held.started?.ready.discard();
    // What prepare() made, while nothing was written to it.
    const { promptPath, transcriptPath, stateDir } = held.made;
    for (const file of [promptPath, transcriptPath]) {
      try {
        if (statSync(file).size === 0) unlinkSync(file);
      } catch {
        // Written since, or gone: left as it is.
      }
    }
    try {
      if (stateDir !== null) rmdirSync(stateDir);
    } catch {
      // Written to since, or gone.
    }
  }
}
