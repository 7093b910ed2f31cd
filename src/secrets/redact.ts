// Secret redaction: the values of credential-named environment variables, and strings shaped like API
// keys and tokens, are replaced by `[redacted:<name>]` before anything goald writes (transcripts, prompts,
// turn records, events, state, daemon.log) or sends to the evaluator. One plain function, `redactSecrets`,
// that every writer calls; `redactJson` for structured records; `createStreamRedactor` for output that
// arrives in chunks, where a secret may be split across two of them.

/** Variable names whose values are secrets: `*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*` (any case). */
const SECRET_NAME_PATTERN = /(?:_KEY|_TOKEN|_SECRET|PASSWORD|PASSWD)(?:_|$)|^(?:KEY|TOKEN|SECRET)$/i;

// Values shorter than this are placeholders or flags ("true", "dev"), not credentials; between this and
// STRONG_VALUE_CHARS a value must also mix character classes, so `DB_PASSWORD=postgres` does not turn
// every "postgres" in a transcript into a redaction mark.
const MIN_VALUE_CHARS = 8;
const STRONG_VALUE_CHARS = 16;

/** Key and token shapes, by the name shown in their redaction mark. */
const SECRET_SHAPES: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  // OpenAI (sk-, sk-proj-), Anthropic (sk-ant-api03-), and the many services that copied the prefix.
  { name: 'api-key', pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g },
  // GitHub: classic personal, OAuth, user-to-server, server-to-server and refresh tokens; fine-grained PATs.
  { name: 'github-token', pattern: /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}/g },
  { name: 'github-token', pattern: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}/g },
  // Slack bot, user, app and refresh tokens.
  { name: 'slack-token', pattern: /(?<![A-Za-z0-9_-])xox[abeoprs]-[A-Za-z0-9-]{10,}/g },
  // AWS access key ids (long-lived AKIA, temporary ASIA).
  { name: 'aws-key', pattern: /(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/g },
  // Google API keys.
  { name: 'google-key', pattern: /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}/g },
];

// Cheap test before the shapes themselves: most text holds none of their prefixes.
const SHAPE_PREFIX = /sk-|gh[pousr]_|github_pat_|xox[abeoprs]-|AKIA|ASIA|AIza/;

// Every character a key shape can contain: a run of them at the end of a chunk may be a key cut in two.
const SHAPE_CHAR = /[A-Za-z0-9_-]/;
// A run longer than this at a chunk's end is written anyway (a base64 blob, not a key being cut).
const MAX_HELD_RUN_CHARS = 4_096;

interface SecretValue {
  name: string;
  value: string;
}

interface Match {
  start: number;
  end: number;
  name: string;
}

// Names already tested: every write redacts, and a process sees the same few dozen names each time.
const secretNames = new Map<string, boolean>();
const MAX_REMEMBERED_NAMES = 10_000;

/** Whether an environment variable's name says its value is a credential. */
export function isSecretName(name: string): boolean {
  let secret = secretNames.get(name);
  if (secret === undefined) {
    secret = SECRET_NAME_PATTERN.test(name);
    if (secretNames.size >= MAX_REMEMBERED_NAMES) secretNames.clear();
    secretNames.set(name, secret);
  }
  return secret;
}

/**
 * The variables of `env` whose names pass `wanted`, with their values. Names first and values only for
 * those: each value read from process.env is a getenv(3) call, and most variables hold no credential.
 */
export function envEntriesNamed(env: NodeJS.ProcessEnv, wanted: (name: string) => boolean): Array<[name: string, value: string]> {
  const entries: Array<[string, string]> = [];
  for (const name of Object.keys(env)) {
    if (!wanted(name)) continue;
    const value = env[name];
    if (value !== undefined) entries.push([name, value]);
  }
  return entries;
}

/** The credential values of `env` worth redacting, longest first (a value may contain a shorter one). */
function secretValues(env: NodeJS.ProcessEnv): SecretValue[] {
  const values: SecretValue[] = [];
  for (const [name, value] of envEntriesNamed(env, isSecretName)) {
    if (looksLikeSecretValue(value)) values.push({ name, value });
  }
  return values.sort((a, b) => b.value.length - a.value.length);
}

// Long enough, not a path, and (when short) mixing letters with digits or symbols.
function looksLikeSecretValue(value: string): boolean {
  if (value.length < MIN_VALUE_CHARS || /^(?:\/|~\/|\.\.?\/)/.test(value)) return false;
  if (value.length >= STRONG_VALUE_CHARS) return true;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((kind) => kind.test(value)).length;
  return classes >= 2 && !/\s/.test(value);
}

// Every secret in `text`, leftmost first, without overlaps (at one start, the longest wins).
function findSecrets(text: string, values: readonly SecretValue[]): Match[] {
  const found: Match[] = [];
  for (const { name, value } of values) {
    for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + value.length)) {
      found.push({ start: at, end: at + value.length, name });
    }
  }
  for (const { name, pattern } of SHAPE_PREFIX.test(text) ? SECRET_SHAPES : []) {
    for (const match of text.matchAll(pattern)) {
      // A key is random: one without a digit is a long slug ("sk-learn-…"), not a key.
      if (/[0-9]/.test(match[0])) found.push({ start: match.index, end: match.index + match[0].length, name });
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Match[] = [];
  for (const match of found) {
    const last = kept.at(-1);
    if (last !== undefined && match.start < last.end) continue;
    kept.push(match);
  }
  return kept;
}

function replaceMatches(text: string, matches: readonly Match[], from = 0, to = text.length): string {
  let out = '';
  let at = from;
  for (const match of matches) {
    if (match.start < from || match.start >= to) continue;
    out += `${text.slice(at, match.start)}[redacted:${match.name}]`;
    at = match.end;
  }
  return out + text.slice(at, Math.max(at, to));
}

/** `text` with every secret (credential-named variables of `env`, key-shaped strings) replaced by a mark. */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  if (text === '') return text;
  const matches = findSecrets(text, secretValues(env));
  return matches.length === 0 ? text : replaceMatches(text, matches);
}

/**
 * A JSON-like value with every string (keys included) passed through redactSecrets: a copy when it held a
 * secret, the value itself when it held none (found in one scan of its JSON text, the common case).
 */
export function redactJson<T>(value: T, env: NodeJS.ProcessEnv = process.env): T {
  const values = secretValues(env);
  if (!mayHoldSecret(value, values)) return value;
  const redactText = (text: string): string => {
    const matches = findSecrets(text, values);
    return matches.length === 0 ? text : replaceMatches(text, matches);
  };
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return redactText(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === 'object' && Object.getPrototypeOf(item) === Object.prototype) {
      return Object.fromEntries(Object.entries(item).map(([key, entry]) => [redactText(key), walk(entry)]));
    }
    return item;
  };
  // walk keeps the shape: strings stay strings, arrays arrays, plain objects plain objects with the same keys
  // (a key holding a secret is renamed, which no record type declares).
  return walk(value) as T;
}

// Whether any string in `value` may hold a secret: its JSON text holds a key prefix or a value (raw, or as
// JSON escapes it). False positives only cost the walk.
function mayHoldSecret(value: unknown, values: readonly SecretValue[]): boolean {
  const text = JSON.stringify(value);
  return text !== undefined && jsonTextMayHoldSecret(text, values);
}

function jsonTextMayHoldSecret(text: string, values: readonly SecretValue[]): boolean {
  if (SHAPE_PREFIX.test(text)) return true;
  return values.some(({ value: secret }) => text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1)));
}

/**
 * A test for many JSON texts against `env`'s secrets (looked up once): false proves that `redactJson` leaves
 * the value whose `JSON.stringify` is the text as it is.
 */
export function jsonSecretTest(env: NodeJS.ProcessEnv = process.env): (jsonText: string) => boolean {
  const values = secretValues(env);
  return (jsonText) => jsonTextMayHoldSecret(jsonText, values);
}

export interface StreamRedactor {
  /** Takes the next chunk; returns the text that is safe to write now (a possible secret's start is held). */
  push(text: string): string;
  /** The held text, redacted: call at the end of the stream. */
  flush(): string;
}

/**
 * Redacts a stream of text chunks. A chunk's end that could be the start of a secret (the last
 * longest-value − 1 characters, and a trailing run of key characters) is held until the next chunk
 * shows how it continues, so a key split across chunks is still caught.
 */
export function createStreamRedactor(env: NodeJS.ProcessEnv = process.env): StreamRedactor {
  const values = secretValues(env);
  const longestValue = values[0]?.value.length ?? 0;
  let held = '';
  return {
    push(chunk) {
      const text = held + chunk;
      let cut = Math.max(0, text.length - Math.max(0, longestValue - 1));
      let runStart = text.length;
      while (runStart > 0 && text.length - runStart < MAX_HELD_RUN_CHARS && SHAPE_CHAR.test(text[runStart - 1] ?? '')) {
        runStart -= 1;
      }
      if (text.length - runStart < MAX_HELD_RUN_CHARS) cut = Math.min(cut, runStart);
      const matches = findSecrets(text, values);
      // A secret that starts before the cut is whole in `text` (the held part is long enough for any
      // value, and a key ends where its run of key characters ends): write it, redacted, in full.
      for (const match of matches) if (match.start < cut && match.end > cut) cut = match.end;
      held = text.slice(cut);
      return replaceMatches(text, matches, 0, cut);
    },
    flush() {
      const rest = held;
      held = '';
      return rest === '' ? '' : replaceMatches(rest, findSecrets(rest, values));
    },
  };
}
