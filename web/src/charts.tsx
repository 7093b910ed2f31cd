// The goal page's charts, all from the view's per-turn series: tokens per turn with the cumulative line
// against the budget; files changed and checks passing; the evaluator's remaining items; cost.

import type { GoalView } from '../../src/view/goal-view.js';
import { Chart } from './chart.js';

export function Charts(props: { view: GoalView }) {
  const { series, tokens, cost } = props.view;
  const turns = series.map((point) => point.turn);
  const budget = tokens.budget;
  let spent = 0;
  const cumulativeCost = series.map((point) => (spent += point.costUsd ?? 0));
  return (
    <div class="charts">
      <Chart
        testId="chart-tokens"
        title={budget === null ? 'tokens per turn, and in all' : `tokens per turn, and in all against the budget (${budget})`}
        turns={turns}
        series={[
          { label: 'tokens', values: series.map((point) => point.tokens), color: '#3b82f6', bars: true },
          { label: 'cumulative', values: series.map((point) => point.cumulativeTokens), color: '#1e3a8a' },
          ...(budget === null ? [] : [{ label: 'budget', values: turns.map(() => budget), color: '#dc2626', dash: true }]),
        ]}
      />
      <Chart
        testId="chart-files-checks"
        title="files changed and checks passing per turn"
        turns={turns}
        series={[
          { label: 'files changed', values: series.map((point) => point.filesChanged), color: '#8b5cf6', bars: true },
          { label: 'checks passing', values: series.map((point) => point.checksPassing), color: '#16a34a' },
          { label: 'checks', values: series.map((point) => point.checksTotal), color: '#9ca3af', dash: true },
        ]}
      />
      <Chart
        testId="chart-remaining"
        title="evaluator: items remaining per turn"
        turns={turns}
        series={[{ label: 'remaining', values: series.map((point) => point.remaining), color: '#ea580c' }]}
      />
      <Chart
        testId="chart-cost"
        title={cost.budget === null ? 'cost (USD)' : `cost (USD) against the budget ($${cost.budget})`}
        turns={turns}
        series={[
          { label: 'per turn', values: series.map((point) => point.costUsd), color: '#0891b2', bars: true },
          { label: 'in all', values: cumulativeCost, color: '#164e63' },
          ...(cost.budget === null ? [] : [{ label: 'budget', values: turns.map(() => cost.budget), color: '#dc2626', dash: true }]),
        ]}
      />
    </div>
  );
}
