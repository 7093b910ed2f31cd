// The page's side of the dashboard's JSON API: GETs, and actions as JSON POSTs with the custom header the
// server's guard requires (the browser adds the Origin). Replies get light shape checks (the server is
// goald's own code, as for the CLI's client): anything off is reported, never rendered.

import { arrayOf, isRecord, isString, objectOf, withStringFields, type Check } from '../../src/daemon/reply-checks.js';
import type { TurnDetail, TurnRow } from '../../src/ui/dashboard-types.js';
import type { GoalView } from '../../src/view/goal-view.js';
import type { LoopView } from '../../src/view/loop-view.js';

export const isGoalView = withStringFields<GoalView>('id', 'status', 'statusText', 'turnText', 'condition', 'workspace');
const isLoopView = withStringFields<LoopView>('id', 'workspace', 'every', 'scheduleText', 'statusText', 'condition');
const isTurnRow: Check<TurnRow> = (value): value is TurnRow => isRecord(value) && typeof value.turn === 'number' && typeof value.outcome === 'string';
const isTurnDetail: Check<TurnDetail> = (value): value is TurnDetail => isRecord(value) && typeof value.turn === 'number' && Array.isArray(value.checks);

export const isGoalList = objectOf({ goals: arrayOf(isGoalView), loops: arrayOf(isLoopView) });
export const isGoalPage = objectOf({ view: isGoalView, turns: arrayOf(isTurnRow) });
const isErrorReply = objectOf({ error: objectOf({ code: isString, message: isString }) });

function messageOf(body: unknown, status: number): string {
  return isErrorReply(body) ? body.error.message : `the dashboard answered ${status}`;
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** GETs a JSON resource and checks its shape. */
export async function getJson<T>(path: string, check: Check<T>): Promise<T> {
  const response = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  const body = await readJson(response);
  if (!response.ok) throw new Error(messageOf(body, response.status));
  if (!check(body)) throw new Error(`unexpected reply from ${path}`);
  return body;
}

/** One turn of a goal in full. */
export function getTurn(goalId: string, turn: number): Promise<TurnDetail> {
  return getJson(`/api/goals/${encodeURIComponent(goalId)}/turns/${turn}`, isTurnDetail);
}

/** An action on a goal (pause, resume, stop, say, edit): resolves, or rejects with the daemon's message. */
export async function postAction(goalId: string, action: string, body: Record<string, unknown>): Promise<void> {
  const response = await fetch(`/api/goals/${encodeURIComponent(goalId)}/${action}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Goald-UI': '1', Accept: 'application/json' },
    credentials: 'same-origin',
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(messageOf(await readJson(response), response.status));
}
