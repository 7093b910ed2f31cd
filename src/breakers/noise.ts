// Noise paths: files whose changes alone are not progress (lockfiles, logs, caches). A turn that only
// touches them counts toward stagnation.

// The defaults live with the other configuration defaults; re-exported for the breakers' callers.
export { DEFAULT_NOISE_PATHS } from '../config/defaults.js';

const compiled = new Map<string, RegExp>();

/** Whether a repository-relative path (`/`-separated) matches any of the noise patterns. */
export function isNoisePath(path: string, patterns: readonly string[]): boolean {
  return matchesPathPattern(path, patterns);
}

/** Whether a repository-relative path matches any of the glob-ish patterns (toPathRegExp's syntax). */
export function matchesPathPattern(path: string, patterns: readonly string[]): boolean {
  const normalized = path.replace(/^\.\//, '');
  return patterns.some((pattern) => toPathRegExp(pattern).test(normalized));
}

/**
 * Compiles a simple glob: `*` and `?` stay inside one path segment, `**` crosses segments (`a/**`,
 * `**` + `/b`, `a/**` + `/b`). A pattern with a leading `/` is anchored at the repository root; any other
 * pattern matches at any depth, so `*.log` and `node_modules/**` also catch `pkg/a.log` and
 * `pkg/node_modules/x`.
 */
function toPathRegExp(pattern: string): RegExp {
  const cached = compiled.get(pattern);
  if (cached) return cached;
  const anchored = pattern.startsWith('/');
  const body = anchored ? pattern.slice(1) : pattern;
  let source = '';
  for (let i = 0; i < body.length; i++) {
    const char = body.charAt(i);
    if (char === '*' && body.charAt(i + 1) === '*') {
      const slashAfter = body.charAt(i + 2) === '/';
      // `**/` may match no directory at all; a trailing or inner `**` matches anything.
      source += slashAfter ? '(?:.*/)?' : '.*';
      i += slashAfter ? 2 : 1;
    } else if (char === '*') {
      source += '[^/]*';
    } else if (char === '?') {
      source += '[^/]';
    } else {
      source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  const regExp = new RegExp(anchored ? `^${source}$` : `^(?:.*/)?${source}$`);
  compiled.set(pattern, regExp);
  return regExp;
}
