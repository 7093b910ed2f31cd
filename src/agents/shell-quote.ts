// Putting the prompt into a `sh -c` command line as one literal word, whatever it contains.

/** The placeholder a command agent's command line may contain; replaced by the shell-quoted prompt. */
export const PROMPT_PLACEHOLDER = '{prompt}';

/** Where a placeholder sits in the command line, as the shell will read it. */
export type PlaceholderContext = 'bare' | 'single-quoted' | 'double-quoted' | 'backquoted';

/** Quotes `value` as one literal word for a POSIX shell: single quotes, each `'` written as `'\''`. */
export function quoteForShell(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

// Words a POSIX shell reads literally without quotes.
const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Quotes `word` as one literal shell word only when it needs it: plain words stay bare, for readability. */
export function quoteShellWord(word: string): string {
  return PLAIN_WORD.test(word) ? word : quoteForShell(word);
}

/**
 * The context of each `{prompt}` in `command`. Only `bare` and `single-quoted` can take a quoted word
 * safely: inside double quotes the word's `'` are plain characters (and a `$(...)` around the placeholder
 * would start a new quoting level this scan does not follow), and inside backquotes the shell looks for
 * the closing backquote before it honours any quote, so a backquote in the prompt would end it early.
 */
export function findPlaceholders(command: string): Array<{ index: number; context: PlaceholderContext }> {
  const found: Array<{ index: number; context: PlaceholderContext }> = [];
  let quote: 'none' | 'single' | 'double' = 'none';
  let backquoted = false;
  for (let index = 0; index < command.length; index += 1) {
    const char = command[index];
    if (command.startsWith(PROMPT_PLACEHOLDER, index)) {
      const context: PlaceholderContext = backquoted
        ? 'backquoted'
        : quote === 'single'
          ? 'single-quoted'
          : quote === 'double'
            ? 'double-quoted'
            : 'bare';
      found.push({ index, context });
      index += PROMPT_PLACEHOLDER.length - 1;
    } else if (quote === 'single') {
      if (char === "'") quote = 'none';
    } else if (char === '\\') {
      index += 1;
    } else if (char === '`') {
      backquoted = !backquoted;
    } else if (quote === 'double') {
      if (char === '"') quote = 'none';
    } else if (char === "'") {
      quote = 'single';
    } else if (char === '"') {
      quote = 'double';
    }
  }
  return found;
}

/**
 * Replaces every `{prompt}` in `command` with `word` (a complete shell word, e.g. from quoteForShell).
 * Inside single quotes the user's quote is closed before the word and reopened after it, so the result
 * is the same single word. Callers refuse double-quoted and backquoted placeholders first.
 */
export function substitutePlaceholders(command: string, word: string): string {
  let result = '';
  let from = 0;
  for (const { index, context } of findPlaceholders(command)) {
    if (context !== 'bare' && context !== 'single-quoted') {
      throw new Error(`substitutePlaceholders: a ${context} placeholder cannot hold a quoted word`);
    }
    result += command.slice(from, index) + (context === 'single-quoted' ? `'${word}'` : word);
    from = index + PROMPT_PLACEHOLDER.length;
  }
  return result + command.slice(from);
}
