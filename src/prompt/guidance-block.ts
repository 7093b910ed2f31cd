// The prompt's "# Guidance from the user" block: what the owner said with `goald say` (or the watch view's
// `g` key, or the dashboard) since the last turn started. Guidance is advice for the agent only: it never
// changes the condition, the checks, the evaluator or the limits, and the block says so.

/** The most one piece of guidance may hold (longer is refused: exit 2). */
export const MAX_GUIDANCE_CHARS = 2_000;

/** The block for the guidance queued since the last turn started, or null when there is none. */
export function renderGuidanceBlock(guidance: readonly string[]): string | null {
  if (guidance.length === 0) return null;
  return [
    '# Guidance from the user',
    'The person who set this goal sent this while you worked. Take it into account; the goal and its checks',
    'are unchanged.',
    '',
    ...guidance.map((text) => `> ${text.replace(/\n/g, '\n> ')}`),
  ].join('\n');
}
