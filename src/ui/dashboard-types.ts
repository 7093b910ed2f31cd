// The shapes of the dashboard's JSON (besides GoalView and LoopView, src/view/): shared by the server
// (dashboard-data.ts) and the page (web/), which imports types only.

/** One row of a goal's turn timeline. */
export interface TurnRow {
  turn: number;
  finishedAt: string;
  outcome: string;
  filesChanged: number;
  checksPassing: number;
  checksTotal: number;
  /** met / not met / null (no verdict). */
  achieved: boolean | null;
  tokens: number;
  tamper: number;
}

/** One turn in full: diff stat, checks with their output tail, the verdict, the prompt. */
export interface TurnDetail {
  turn: number;
  outcome: string;
  agentError: string | null;
  files: { path: string; status: string; added: number | null; deleted: number | null }[];
  checks: { name: string; command: string; passed: boolean; exitCode: number | null; timedOut: boolean; outputTail: string }[];
  evaluation: { kind: string; achieved: boolean | null; reason: string | null; remaining: string[] };
  tamper: { path: string; kind: string; detail: string }[];
  guidance: string[];
  prompt: string | null;
}

