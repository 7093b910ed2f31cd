// The turn timeline, filtered (failed checks, no change, tamper); a row opens the turn: its diff stat,
// checks with their output tail, the verdict and the prompt it was given.

import { useState } from 'preact/hooks';

import type { TurnDetail, TurnRow } from '../../src/ui/dashboard-types.js';
import { getTurn } from './api.js';
import { compact } from './format.js';

const FILTERS = {
  all: () => true,
  'failed checks': (turn: TurnRow) => turn.checksPassing < turn.checksTotal,
  'no change': (turn: TurnRow) => turn.filesChanged === 0,
  tamper: (turn: TurnRow) => turn.tamper > 0,
} as const;

type FilterName = keyof typeof FILTERS;

function isFilterName(name: string): name is FilterName {
  return name in FILTERS;
}

export function Timeline(props: { goalId: string; turns: TurnRow[] }) {
  const [filter, setFilter] = useState<FilterName>('all');
  const [open, setOpen] = useState<TurnDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const shown = props.turns.filter(FILTERS[filter]);

  const openTurn = async (turn: number): Promise<void> => {
    try {
      setOpen(await getTurn(props.goalId, turn));
      setError(null);
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught));
    }
  };

  return (
    <div class="timeline">
      <label>
        show{' '}
        <select
          data-testid="turn-filter"
          value={filter}
          onChange={(event) => {
            const name = event.currentTarget.value;
            if (isFilterName(name)) setFilter(name);
          }}
        >
          {Object.keys(FILTERS).map((name) => (
            <option value={name}>{name}</option>
          ))}
        </select>
      </label>
      {error !== null && <p class="error">{error}</p>}
      <table class="turns">
        <thead>
          <tr>
            <th>turn</th>
            <th>outcome</th>
            <th>files</th>
            <th>checks</th>
            <th>verdict</th>
            <th>tokens</th>
            <th>tamper</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((turn) => (
            <tr data-testid="turn-row" data-turn={turn.turn} class="clickable" onClick={() => void openTurn(turn.turn)}>
              <td>{turn.turn}</td>
              <td>{turn.outcome}</td>
              <td>{turn.filesChanged}</td>
              <td>
                {turn.checksPassing}/{turn.checksTotal}
              </td>
              <td>{turn.achieved === null ? '—' : turn.achieved ? 'met' : 'not met'}</td>
              <td>{compact(turn.tokens)}</td>
              <td>{turn.tamper > 0 ? turn.tamper : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {open !== null && <TurnPanel detail={open} onClose={() => setOpen(null)} />}
    </div>
  );
}

function TurnPanel(props: { detail: TurnDetail; onClose: () => void }) {
  const { detail } = props;
  return (
    <div class="turn-detail" data-testid="turn-detail" data-turn={detail.turn}>
      <h3>
        Turn {detail.turn}: {detail.outcome} <button onClick={props.onClose}>close</button>
      </h3>
      {detail.agentError !== null && <p class="error">{detail.agentError}</p>}
      <h4>Files</h4>
      <table class="diffstat">
        <tbody>
          {detail.files.map((file) => (
            <tr>
              <td>{file.status}</td>
              <td class="path">{file.path}</td>
              <td class="added">{file.added === null ? 'bin' : `+${file.added}`}</td>
              <td class="deleted">{file.deleted === null ? '' : `-${file.deleted}`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h4>Checks</h4>
      {detail.checks.map((check) => (
        <details open={!check.passed}>
          <summary>
            {check.passed ? '✔' : '✖'} {check.name} ({check.command}){check.timedOut ? ', timed out' : ''}
          </summary>
          <pre data-testid="check-output">{check.outputTail}</pre>
        </details>
      ))}
      <h4>Verdict</h4>
      <p data-testid="turn-verdict">
        {detail.evaluation.achieved === null ? detail.evaluation.kind : detail.evaluation.achieved ? 'met' : 'not met'}
        {detail.evaluation.reason === null ? '' : `: ${detail.evaluation.reason}`}
      </p>
      {detail.evaluation.remaining.length > 0 && (
        <ul>
          {detail.evaluation.remaining.map((item) => (
            <li>{item}</li>
          ))}
        </ul>
      )}
      {detail.tamper.length > 0 && (
        <>
          <h4>Tamper</h4>
          <ul>
            {detail.tamper.map((finding) => (
              <li>
                {finding.kind} {finding.path}: {finding.detail}
              </li>
            ))}
          </ul>
        </>
      )}
      {detail.guidance.length > 0 && (
        <>
          <h4>Guidance</h4>
          <ul>
            {detail.guidance.map((text) => (
              <li>{text}</li>
            ))}
          </ul>
        </>
      )}
      <h4>Prompt</h4>
      <pre class="prompt" data-testid="turn-prompt">
        {detail.prompt ?? '(no prompt recorded)'}
      </pre>
    </div>
  );
}
