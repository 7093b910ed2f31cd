// One goal: its state (the view sent over Server-Sent Events, replayed from Last-Event-ID after a
// reconnect), charts, breaker gauges, the turn timeline and the actions.

import { useEffect, useState } from 'preact/hooks';

import type { TurnRow } from '../../src/ui/dashboard-types.js';
import type { GoalView } from '../../src/view/goal-view.js';
import { Actions } from './actions.js';
import { getJson, isGoalPage, isGoalView } from './api.js';
import { Charts } from './charts.js';
import { against, compact, duration, usd } from './format.js';
import { Timeline } from './timeline.js';

function parseView(data: string): GoalView | null {
  try {
    const value: unknown = JSON.parse(data);
    return isGoalView(value) ? value : null;
  } catch {
    return null;
  }
}

export function GoalPage(props: { id: string }) {
  const [view, setView] = useState<GoalView | null>(null);
  const [turns, setTurns] = useState<TurnRow[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [events, setEvents] = useState(0);
  const [connected, setConnected] = useState(false);

  useEffect(() => {
    let stopped = false;
    const loadTurns = async (): Promise<void> => {
      try {
        const page = await getJson(`/api/goals/${encodeURIComponent(props.id)}`, isGoalPage);
        if (stopped) return;
        setTurns(page.turns);
        setView((current) => current ?? page.view);
      } catch (caught) {
        if (!stopped) setError(caught instanceof Error ? caught.message : String(caught));
      }
    };
    void loadTurns();
    const source = new EventSource(`/api/goals/${encodeURIComponent(props.id)}/events`);
    source.addEventListener('open', () => setConnected(true));
    source.addEventListener('error', () => setConnected(false));
    source.addEventListener('view', (message: MessageEvent<string>) => {
      const next = parseView(message.data);
      if (next !== null) setView(next);
    });
    source.addEventListener('progress', (message: MessageEvent<string>) => {
      setEvents((count) => count + 1);
      // A finished turn has a new row in the timeline.
      if (message.data.includes('"turn.finished"') || message.data.includes('"precheck.finished"')) void loadTurns();
    });
    return () => {
      stopped = true;
      source.close();
    };
  }, [props.id]);

  if (view === null) return error === null ? <p>loading…</p> : <p class="error">{error}</p>;
  return (
    <section data-testid="goal-page" data-goal={view.id} data-status={view.status} data-events={events} data-live={connected ? 'yes' : 'no'}>
      <h1 class={`tone-${view.tone}`}>
        <span data-testid="goal-status">
          {view.glyph} {view.statusText}
        </span>
      </h1>
      <p class="condition" data-testid="goal-condition">
        {view.condition}
      </p>
      <p class="path">{view.workspace}</p>
      {error !== null && <p class="error">{error}</p>}
      <dl class="facts">
        <dt>turn</dt>
        <dd data-testid="goal-turn">{view.turnText}</dd>
        <dt>active</dt>
        <dd>{duration(view.activeMs)}</dd>
        <dt>tokens</dt>
        <dd>{against(compact(view.tokens.used), view.tokens.budget === null ? null : compact(view.tokens.budget))}</dd>
        <dt>cost</dt>
        <dd>{against(usd(view.cost.usd), view.cost.budget === null ? null : usd(view.cost.budget))}</dd>
        {view.nextLoopRun !== null && (
          <>
            <dt>next loop run</dt>
            <dd>{view.nextLoopRun}</dd>
          </>
        )}
      </dl>
      {view.stop !== null && (
        <div class="stop" data-testid="goal-stop">
          <p>
            stopped: {view.stop.reason}
            {view.stop.message === null ? '' : ` — ${view.stop.message}`}
          </p>
          <p>
            next: <code>{view.stop.nextAction}</code>
          </p>
        </div>
      )}
      <Actions view={view} />
      <h2>Breakers</h2>
      {view.breakers.length === 0 ? (
        <p class="empty">No breaker has counted anything yet.</p>
      ) : (
        <ul class="gauges">
          {view.breakers.map((gauge) => (
            <li data-testid="breaker">
              <meter min={0} max={gauge.limit} value={gauge.value} low={gauge.limit * 0.5} high={gauge.limit * 0.8} optimum={0} /> {gauge.text}
            </li>
          ))}
        </ul>
      )}
      <h2>Evaluator</h2>
      <p data-testid="evaluator-reason">{view.evaluator.reason ?? 'no verdict yet'}</p>
      {view.evaluator.remaining.length > 0 && (
        <ul data-testid="evaluator-remaining">
          {view.evaluator.remaining.map((item) => (
            <li>{item}</li>
          ))}
        </ul>
      )}
      {view.lastTurnFiles !== null && (
        <>
          <h2>Files changed in turn {view.lastTurnFiles.turn}</h2>
          <p>{view.lastTurnFiles.count} files</p>
          <ul class="files">
            {view.lastTurnFiles.paths.map((file) => (
              <li class="path">{file}</li>
            ))}
          </ul>
        </>
      )}
      {view.providerErrors.length > 0 && (
        <>
          <h2>Errors</h2>
          <ul class="errors">
            {view.providerErrors.map((problem) => (
              <li>
                turn {problem.turn}, {problem.source}: {problem.message}
              </li>
            ))}
          </ul>
        </>
      )}
      <h2>Charts</h2>
      <Charts view={view} />
      <h2>Turns</h2>
      <Timeline goalId={view.id} turns={turns} />
    </section>
  );
}
