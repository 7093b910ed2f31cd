// Where an API key may be sent. A base URL from the daemon's own environment, the user's config file or
// the provider's default is trusted; one chosen by a workspace file (which the agent can write) or by a
// socket request is refused unless the user's config lists it in `evaluator.allowedBaseURLs`.

import type { BaseURLSource } from '../config/types.js';
import { GoaldError } from '../errors.js';

export interface BaseURLChoice {
  provider: 'openai' | 'anthropic';
  /** The environment variable holding the key, for messages. */
  keyVariable: string;
  baseURL: string;
  /** Where it came from; null: the daemon's environment or the provider's default. Absent: unknown. */
  from: BaseURLSource | null | undefined;
  allowed: readonly string[];
}

const SOURCE_NAMES: Readonly<Record<BaseURLSource, string>> = {
  'user-config': 'your user config',
  'workspace-config': "the workspace's goal.config.json",
  request: 'the start request (the client\'s *_BASE_URL differs from the daemon\'s)',
};

/** Throws a `config` GoaldError (exit 2) when the key must not go to `choice.baseURL`. */
export function assertTrustedBaseURL(choice: BaseURLChoice): void {
  if (choice.from === null || choice.from === 'user-config') return;
  if (choice.allowed.some((allowed) => isAllowedBy(choice.baseURL, allowed))) return;
  const shown = withoutCredentials(choice.baseURL);
  const where = choice.from === undefined ? 'a source goald cannot vouch for' : SOURCE_NAMES[choice.from];
  throw new GoaldError(
    'config',
    `refusing to send ${choice.keyVariable} to ${shown}: that ${choice.provider} base URL comes from ${where}, ` +
      "and a key goes only to a base URL from the daemon's environment, your user config or the provider's default",
    `if you trust it, add ${JSON.stringify(shown)} to evaluator.allowedBaseURLs in ~/.config/goald/config.json`,
  );
}

// Whether `allowed` admits `url`: the same URL (trailing slashes aside), or its origin when `allowed` has no path.
function isAllowedBy(url: string, allowed: string): boolean {
  const target = parseURL(url);
  const entry = parseURL(allowed);
  if (target === null || entry === null || target.origin !== entry.origin) return false;
  const entryPath = trimSlashes(entry.pathname);
  return entryPath === '' || entryPath === trimSlashes(target.pathname);
}

function parseURL(text: string): URL | null {
  try {
    return new URL(text.trim());
  } catch {
    return null;
  }
}

function trimSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}

// A URL as shown in a message: user:password@ left out.
function withoutCredentials(url: string): string {
  const parsed = parseURL(url);
  if (parsed === null) return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
}
