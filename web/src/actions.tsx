// The levers: pause, pause now, resume, stop (asks twice), guidance (`goald say`) and limits
// (`goald edit`), each a JSON POST through the daemon's own route for it.

import { useState } from 'preact/hooks';

import type { GoalView } from '../../src/view/goal-view.js';
import { postAction } from './api.js';

const LIMITS = [
  { key: 'maxTurns', label: 'max turns', placeholder: '20' },
  { key: 'tokenBudget', label: 'token budget', placeholder: '2000000' },
  { key: 'costBudget', label: 'cost budget (USD)', placeholder: '5' },
  { key: 'wallClock', label: 'wall clock', placeholder: '2h' },
  { key: 'turnTimeout', label: 'turn timeout', placeholder: '20m' },
] as const;

export function Actions(props: { view: GoalView }) {
  const { view } = props;
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [confirmStop, setConfirmStop] = useState(false);
  const [guidance, setGuidance] = useState('');
  const [limits, setLimits] = useState<Record<string, string>>({});
  const [resume, setResume] = useState(false);

  const live = view.status === 'active' || view.status === 'paused';
  const act = async (action: string, body: Record<string, unknown>, done: string): Promise<void> => {
    setBusy(true);
    try {
      await postAction(view.id, action, body);
      setMessage(done);
    } catch (caught) {
      setMessage(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setBusy(false);
    }
  };
  const flags = Object.fromEntries(Object.entries(limits).filter(([, value]) => value.trim() !== ''));

  return (
    <div class="actions" data-testid="actions">
      <div class="buttons">
        <button data-testid="action-pause" disabled={busy || view.status !== 'active'} onClick={() => void act('pause', { now: false }, 'pausing at the end of this turn')}>
          pause
        </button>
        <button data-testid="action-pause-now" disabled={busy || view.status !== 'active'} onClick={() => void act('pause', { now: true }, 'paused now')}>
          pause now
        </button>
        <button data-testid="action-resume" disabled={busy || view.status !== 'paused'} onClick={() => void act('resume', {}, 'resumed')}>
          resume
        </button>
        <button
          data-testid="action-stop"
          class={confirmStop ? 'danger' : ''}
          disabled={busy || !live}
          onClick={() => {
            if (!confirmStop) {
              setConfirmStop(true);
              return;
            }
            setConfirmStop(false);
            void act('stop', {}, 'stopped');
          }}
        >
          {confirmStop ? 'stop: click again' : 'stop'}
        </button>
      </div>
      <form
        class="guidance"
        onSubmit={(event) => {
          event.preventDefault();
          void act('say', { text: guidance }, 'guidance queued for the next turn').then(() => setGuidance(''));
        }}
      >
        <textarea data-testid="guidance-text" maxLength={2000} placeholder="guidance for the next turn" value={guidance} onInput={(event) => setGuidance(event.currentTarget.value)} />
        <button data-testid="action-say" type="submit" disabled={busy || !live || guidance.trim() === ''}>
          send guidance
        </button>
      </form>
      <form
        class="limits"
        onSubmit={(event) => {
          event.preventDefault();
          void act('edit', { flags, applyConfig: false, resume }, 'limits changed');
        }}
      >
        {LIMITS.map((limit) => (
          <label>
            {limit.label}{' '}
            <input
              data-testid={`limit-${limit.key}`}
              size={9}
              placeholder={limit.placeholder}
              value={limits[limit.key] ?? ''}
              onInput={(event) => setLimits({ ...limits, [limit.key]: event.currentTarget.value })}
            />
          </label>
        ))}
        <label>
          <input type="checkbox" checked={resume} onChange={(event) => setResume(event.currentTarget.checked)} /> reopen (budget failure)
        </label>
        <button data-testid="action-edit" type="submit" disabled={busy || Object.keys(flags).length === 0}>
          change limits
        </button>
      </form>
      {message !== null && (
        <p class="message" data-testid="action-message">
          {message}
        </p>
      )}
    </div>
  );
}
