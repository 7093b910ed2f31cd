// Reads one config file: a missing file is "no config", anything else that is wrong is a GoaldError
// whose one-line message names the file, where in it, and what; the hint names the fix.

import { readFile } from 'node:fs/promises';
import { errnoCodeOf } from '../errno.js';
import { GoaldError } from '../errors.js';
import { describeConfigIssue } from './describe-config-issue.js';
import { findJsonError, lineAndColumn } from './json-error-position.js';
import type { ConfigFile } from './schema.js';

export const CONFIG_FILE_NAME = 'goal.config.json';
const JSON_SCHEMA_HINT = 'see schema/goal.config.schema.json';

/** Loads and validates a config file; `config` is null when the file does not exist. */
export async function loadConfigFile(path: string): Promise<{ config: ConfigFile | null; path: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = errnoCodeOf(error);
    if (code === 'ENOENT') return { config: null, path };
    throw new GoaldError(
      'config',
      `${path}: cannot be read (${code ?? String(error)})`,
      'check the file and its permissions, or remove it',
      { cause: error },
    );
  }
  return { config: await parseConfigText(text, path), path };
}

/** Parses and validates config text; `path` is only used in messages. */
export async function parseConfigText(text: string, path: string): Promise<ConfigFile> {
  // Editors on Windows may save a byte-order mark, which JSON.parse rejects.
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (error) {
    const located = findJsonError(body);
    const { line, column } = located ?? lineAndColumn(body, body.length);
    const message = located?.message ?? (error instanceof Error ? error.message : String(error));
    throw new GoaldError(
      'config',
      `${path}: invalid JSON at line ${line} column ${column}: ${message}`.replace(/\s+/g, ' '),
      'fix the file or remove it',
      { cause: error },
    );
  }
  // The schema (a few hundred zod schemas, ~10 ms to build) loads with the first file there is to check:
  // a start with neither a goal.config.json nor a user config never builds it.
  const { configFileSchema } = await import('./schema.js');
  const parsed = configFileSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const [first] = parsed.error.issues;
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : '';
  const description = first === undefined ? 'invalid' : describeConfigIssue(first, configFileSchema);
  throw new GoaldError('config', `${path}: ${description}${more}`, JSON_SCHEMA_HINT);
}
