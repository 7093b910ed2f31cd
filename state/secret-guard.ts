// A last line of defence: secrets must never reach state.json. Settings are plain JSON built elsewhere,
// so before each write the serialized state is scanned for (1) keys named like a credential and (2) the
// value of any `*_API_KEY` environment variable. A hit refuses the write (a goald bug), naming the key
// or variable, never the value.

// Key names that only ever hold credentials. Deliberately narrow: `tokens`, `tokenBudget` and
// `turnTokenLimit` are counts, so a bare "token" is not on the list.
const SECRET_KEY_PATTERN = /^(?:.*api[-_]?key|.*secret|password|passwd|authorization|bearer|access[-_]?token)$/i;

// Real API keys are 30+ characters; shorter values (placeholders such as "changeme", "production")
// would match innocent text and refuse legitimate writes.
const MIN_SECRET_LENGTH = 16;

/** Returns the first credential-like key name in `value` (a JSON value), with its dot path, or null. */
function findSecretKey(value: unknown, path: string): string | null {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findSecretKey(item, `${path}.${index}`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const here = path === '' ? key : `${path}.${key}`;
      if (SECRET_KEY_PATTERN.test(key) && item !== null && item !== '') return here;
      const found = findSecretKey(item, here);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * Describes why `data` (about to be written as `serialized`) holds a secret, or returns null; `path`: where
 * `data` sits in the file (its dot path), for the field's name.
 */
export function findSecretInState(data: unknown, serialized: string, env: NodeJS.ProcessEnv, path = ''): string | null {
  const key = findSecretKey(data, path);
  if (key !== null) return `the field ${key} looks like a credential`;
  for (const [name, value] of Object.entries(env)) {
    if (!name.endsWith('_API_KEY') || value === undefined || value.length < MIN_SECRET_LENGTH) continue;
    // Search the JSON-escaped form: that is how the value would appear inside any string of the file.
    if (serialized.includes(JSON.stringify(value).slice(1, -1))) return `it contains the value of ${name}`;
  }
  return null;
}
