// The task layer: the supervisor's turn prompt (condition, "Why you're here", recitation, the evaluator's
// last assessment, failing checks), sent as the first user message and never elided. Over budget, the
// sections between the first (the condition) and the last (the recitation) are cut, each with a visible
// marker, so the objective and the recitation always arrive whole.

import { cutHead } from '../../cut-text.js';

/** The task layer's budget in characters (~6k tokens): the prompt is bounded upstream too. */
const MAX_TASK_CHARS = 24_000;

/** The turn prompt, its middle sections cut with a marker when the whole is over `maxChars`. */
export function buildTaskLayer(prompt: string, maxChars = MAX_TASK_CHARS): string {
  if (prompt.length <= maxChars) return prompt;
  const sections = prompt.split(/(?=^# )/m);
  if (sections.length < 3) return cutHead(prompt, maxChars);
  const first = sections[0] ?? '';
  const last = sections.at(-1) ?? '';
  const middle = sections.slice(1, -1);
  const share = Math.max(200, Math.floor((maxChars - first.length - last.length) / middle.length));
  return [first, ...middle.map((section) => (section.length > share ? `${cutHead(section, share)}\n\n` : section)), last].join('');
}
