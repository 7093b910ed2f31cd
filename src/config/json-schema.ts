// The JSON Schema of goal.config.json, generated from the zod schema so editors, docs and the loader
// can never disagree. Committed as schema/goal.config.schema.json; a test keeps the two in sync.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from '../zod.js';
import { configFileSchema } from './schema.js';

export const JSON_SCHEMA_RELATIVE_PATH = join('schema', 'goal.config.schema.json');

/** The JSON Schema (draft 2020-12) of a goald config file, as an object. */
export function buildConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configFileSchema, { target: 'draft-2020-12' });
}

/** The JSON Schema as the committed file's text: 2-space JSON with a final newline. */
export function renderConfigJsonSchema(): string {
  return `${JSON.stringify(buildConfigJsonSchema(), null, 2)}\n`;
}

/**
 * The repository root: the nearest ancestor of `fromUrl` holding goald's package.json. Found by walking
 * up rather than a fixed `../..`, because this runs both from src/config (tests) and dist/src/config.
 */
export function findRepoRoot(fromUrl: string): string {
  let dir = dirname(fileURLToPath(fromUrl));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown };
      if (parsed.name === 'goald') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no goald package.json above ${fileURLToPath(fromUrl)}`);
    dir = parent;
  }
}
