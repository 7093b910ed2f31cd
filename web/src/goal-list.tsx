// All goals and loops, filtered by status and workspace; refreshed every 2 s.

import { useEffect, useState } from 'preact/hooks';

import type { LoopView } from '../../src/view/loop-view.js';
import type { GoalView } from '../../src/view/goal-view.js';
import { getJson, isGoalList } from './api.js';
import { against, compact, usd } from './format.js';

const REFRESH_MS = 2_000;
const STATUSES = ['all', 'active', 'paused', 'achieved', 'failed'] as const;

export function GoalList() {
  const [goals, setGoals] = useState<GoalView[] | null>(null);
  const [loops, setLoops] = useState<LoopView[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string>('all');
  const [workspace, setWorkspace] = useState<string>('all');

  useEffect(() => {
    let stopped = false;
    const load = async (): Promise<void> => {
      try {
        const list = await getJson('/api/goals', isGoalList);
        if (stopped) return;
        setGoals(list.goals);
        setLoops(list.loops);
        setError(null);
      } catch (caught) {
        if (!stopped) setError(caught instanceof Error ? caught.message : String(caught));
      }
    };
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);

  const workspaces = [...new Set([...(goals ?? []).map((goal) => goal.workspace), ...loops.map((loop) => loop.workspace)])].sort();
  const shown = (goals ?? []).filter((goal) => (status === 'all' || goal.status === status) && (workspace === 'all' || goal.workspace === workspace));
  const shownLoops = loops.filter((loop) => workspace === 'all' || loop.workspace === workspace);

  return (
    <section>
      <div class="filters">
        <label>
          status{' '}
          <select data-testid="status-filter" value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
            {STATUSES.map((name) => (
              <option value={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          workspace{' '}
          <select data-testid="workspace-filter" value={workspace} onChange={(event) => setWorkspace(event.currentTarget.value)}>
            <option value="all">all</option>
            {workspaces.map((name) => (
              <option value={name}>{name}</option>
            ))}
          </select>
        </label>
      </div>
      {error !== null && <p class="error">{error}</p>}
      <h2>Goals</h2>
      {goals === null ? (
        <p>loading…</p>
      ) : shown.length === 0 ? (
        <p class="empty" data-testid="no-goals">
          No goals{status !== 'all' || workspace !== 'all' ? ' match the filters' : ' yet: start one with `goald start "<condition>"`'}.
        </p>
      ) : (
        <table class="goals">
          <thead>
            <tr>
              <th></th>
              <th>goal</th>
              <th>condition</th>
              <th>workspace</th>
              <th>turn</th>
              <th>tokens</th>
              <th>cost</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((goal) => (
              <tr data-testid="goal-row" data-goal={goal.id} data-status={goal.status}>
                <td class={`tone-${goal.tone}`} title={goal.statusText}>
                  {goal.glyph} {goal.statusText}
                </td>
                <td>
                  <a href={`#/goal/${encodeURIComponent(goal.id)}`}>{goal.id.slice(0, 12)}</a>
                </td>
                <td class="condition">{goal.condition}</td>
                <td class="path">{goal.workspace}</td>
                <td>{goal.turnText}</td>
                <td>{against(compact(goal.tokens.used), goal.tokens.budget === null ? null : compact(goal.tokens.budget))}</td>
                <td>{against(usd(goal.cost.usd), goal.cost.budget === null ? null : usd(goal.cost.budget))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Loops</h2>
      {shownLoops.length === 0 ? (
        <p class="empty">No loops.</p>
      ) : (
        <table class="loops">
          <thead>
            <tr>
              <th>loop</th>
              <th>schedule</th>
              <th>state</th>
              <th>workspace</th>
              <th>next run</th>
              <th>runs</th>
              <th>last</th>
            </tr>
          </thead>
          <tbody>
            {shownLoops.map((loop) => (
              <tr data-testid="loop-row" data-loop={loop.id}>
                <td>{loop.name ?? loop.id}</td>
                <td>{loop.scheduleText}</td>
                <td class={`tone-${loop.tone}`}>
                  {loop.glyph} {loop.statusText}
                </td>
                <td class="path">{loop.workspace}</td>
                <td>{loop.nextRunAt ?? '—'}</td>
                <td>{loop.runs}</td>
                <td>
                  {loop.lastRun === null ? '—' : <a href={`#/goal/${encodeURIComponent(loop.lastRun.goalId)}`}>{loop.lastRun.statusText}</a>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
