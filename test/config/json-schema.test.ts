import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildConfigJsonSchema,
  findRepoRoot,
  JSON_SCHEMA_RELATIVE_PATH,
  renderConfigJsonSchema,
} from '../../src/config/json-schema.js';
import { writeConfigJsonSchema } from '../../src/config/write-json-schema.js';

const ROOT = findRepoRoot(import.meta.url);

describe('schema/goal.config.schema.json', () => {
  it('is up to date with the zod schema', async () => {
    // Regenerate with: UPDATE_SCHEMA=1 npx vitest run test/config/json-schema.test.ts (or npm run schema).
    if (process.env.UPDATE_SCHEMA === '1') await writeConfigJsonSchema(ROOT);
    const committed = await readFile(join(ROOT, JSON_SCHEMA_RELATIVE_PATH), 'utf8');
    expect(committed, 'run `npm run schema` and commit schema/goal.config.schema.json').toBe(renderConfigJsonSchema());
  });

  it('is a strict draft 2020-12 schema with descriptions and duration patterns', () => {
    const schema = buildConfigJsonSchema() as {
      $schema: string;
      additionalProperties: boolean;
      properties: Record<string, unknown>;
      $defs: Record<string, unknown>;
    };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['$schema', 'goal', 'checks', 'agent', 'evaluator', 'limits', 'noisePaths', 'loops']),
    );
    expect(schema.properties.limits).toEqual({ $ref: '#/$defs/Limits' });
    const limits = JSON.stringify(schema.$defs.Limits);
    expect(limits).toContain('"additionalProperties":false');
    expect(limits).toContain('Default: 20.');
    expect(limits).toContain('Default: \\"30m\\".');
    expect(limits).toContain('(ms|s|m|h|d)');
  });

  it('writes the file into <root>/schema, creating the directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'goald-schema-'));
    try {
      const path = await writeConfigJsonSchema(dir);
      expect(path).toBe(join(dir, 'schema', 'goal.config.schema.json'));
      expect(await readFile(path, 'utf8')).toBe(renderConfigJsonSchema());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('finds the repository root from any file below it', () => {
    expect(findRepoRoot(new URL('../../src/config/json-schema.ts', import.meta.url).href)).toBe(ROOT);
  });
});
