// The per-turn progress lines of `start --foreground` / `--wait` and `logs`.

import type { ProgressEvent } from '../supervisor/types.js';
import { clip } from '../cut-text.js';
import { formatCount } from './format.js';
import { formatDuration } from '../config/duration.js';
import { toTerminalText } from './terminal-text.js';

function checksText(checks: { name: string; passed: boolean }[]): string {
  if (checks.length === 0) return 'no checks';
  const passed = checks.filter((check) => check.passed).length;
  const failing = checks.filter((check) => !check.passed).map((check) => check.name);
  return failing.length === 0 ? `checks ${passed}/${checks.length} ✓` : `checks ${passed}/${checks.length} (failing: ${failing.join(', ')})`;
}

/** The tamper guard's findings in one line: `deleted-test test/a.test.js; skip-marker test/b.test.js`. */
export function describeTamper(findings: readonly { path: string; kind: string }[]): string {
  return findings.map((finding) => `${finding.kind} ${finding.path}`).join('; ');
}

/** One human line per event (control characters escaped), or null for events that print nothing. */
export function renderProgressLine(event: ProgressEvent): string | null {
  const line = progressLineOf(event);
  return line === null ? null : toTerminalText(line);
}

function progressLineOf(event: ProgressEvent): string | null {
  switch (event.type) {
    case 'goal.started':
      return `goald ${event.id} · ${clip(event.condition, 80)} · ${event.workspace}`;
    case 'precheck.finished':
      return event.achieved
        ? `turn 0 · ${checksText(event.checks)} · already met, no agent turn needed`
        : `turn 0 · ${checksText(event.checks)} · starting the agent`;
    case 'turn.started':
      return null;
    case 'turn.finished': {
      const parts = [
        `turn ${event.turn}/${event.maxTurns}`,
        formatDuration(event.durationMs),
        `${event.tokensEstimated ? '~' : ''}${formatCount(event.tokens)} tokens`,
        `${event.filesChanged} file${event.filesChanged === 1 ? '' : 's'} changed`,
        checksText(event.checks),
      ];
      if (event.agentError) parts.push(`agent: ${clip(event.agentError, 80)}`);
      if (event.verdict) parts.push(`${event.verdict.achieved ? 'met' : 'not yet'}: ${clip(event.verdict.reason, 100)}`);
      else if (event.evaluatorError) parts.push(`evaluator error: ${clip(event.evaluatorError, 80)}`);
      if (event.tamper.length > 0) parts.push(`TAMPER: ${clip(describeTamper(event.tamper), 160)}`);
      return parts.join(' · ');
    }
    case 'goal.paused':
      return `paused (${event.reason})`;
    case 'goal.resumed':
      return 'resumed';
    case 'config.held':
      return `goal.config.json edited ${event.turn === null ? 'while a turn ran' : `during turn ${event.turn}`}: held, not applied (${event.settings.join(', ') || 'no setting'}); apply it with goald edit ${event.id} --apply-config`;
    case 'goal.edited':
      return `${event.resumed ? 'reopened' : 'edited'} by ${event.by}: ${event.settings.join(', ') || 'nothing changed'}; applies from the next turn`;
    case 'goal.finished':
      return null;
  }
}
