// Writes schema/goal.config.schema.json from the zod schema. Run after a build:
//   node dist/src/config/write-json-schema.js        (npm run schema)
// or without building: UPDATE_SCHEMA=1 npx vitest run test/config/json-schema.test.ts

import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { findRepoRoot, JSON_SCHEMA_RELATIVE_PATH, renderConfigJsonSchema } from './json-schema.js';

/** Writes the JSON Schema into `<root>/schema/goal.config.schema.json`; returns the path written. */
export async function writeConfigJsonSchema(root: string): Promise<string> {
  const path = join(root, JSON_SCHEMA_RELATIVE_PATH);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, renderConfigJsonSchema());
  return path;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const path = await writeConfigJsonSchema(findRepoRoot(import.meta.url));
  process.stdout.write(`wrote ${path}\n`);
}
