// The note beside state.json (state-seal.ts): it vouches for the very file goald wrote last, so a new
// process reads that file without the schema pass; anything else at that path is checked as always.

import { createHash } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { GoaldError } from '../../src/errors.js';
import { z } from '../../src/zod.js';
import { stateFileSchema } from '../../state/state-schema.js';
import { fileIdentity, isSealed, sealPathFor, STATE_SCHEMA_REVISION, writeSeal } from '../../state/state-seal.js';
import { openStore } from '../../state/store.js';
import { makeGoal } from './fixtures.js';
import { rejectionOf, tempDirPerTest } from './helpers.js';

let home: string;
tempDirPerTest((dir) => (home = join(dir, 'home')));

async function identityOf(path: string): Promise<string> {
  return fileIdentity(await stat(path, { bigint: true }));
}

// What a new process's first read of the home fails with.
async function readError(): Promise<GoaldError> {
  return rejectionOf((await openStore(home, { env: {} })).read());
}

// A state.json no schema passes, and a note naming it; its path.
async function sealedOddFile(): Promise<{ path: string; odd: unknown }> {
  const path = join(home, 'state.json');
  await openStore(home, { env: {} });
  const odd = { version: 1, goals: [{ ...makeGoal('g1'), status: 'sideways' }], loops: [] };
  await writeFile(path, `${JSON.stringify(odd, null, 2)}\n`);
  writeSeal(path, await identityOf(path));
  return { path, odd };
}

describe('the note beside state.json', () => {
  it('vouches for the file goald just wrote, and is rewritten with each write', async () => {
    const store = await openStore(home, { env: {} });
    const path = join(home, 'state.json');
    await store.update((state) => void state.goals.push(makeGoal('g1')));
    expect(isSealed(path, await identityOf(path))).toBe(true);
    await store.updateGoal('g1', (goal) => {
      goal.phase = 'checking';
    });
    expect(isSealed(path, await identityOf(path))).toBe(true);
    expect((await stat(sealPathFor(path))).mode & 0o777).toBe(0o600);
  });

  it("spares a new process the schema pass for the file it names, and for that file only", async () => {
    // A file no schema passes, with a note naming it: read as it is (what goald writes is checked as written).
    const { path, odd } = await sealedOddFile();
    expect((await (await openStore(home, { env: {} })).read()).goals[0]?.status).toBe('sideways');
    // Changed by anything but goald (an editor, in place): checked, and refused, as before.
    await writeFile(path, `${JSON.stringify(odd, null, 2)} \n`);
    expect((await readError()).code).toBe('state-corrupt');
    // A note from a goald that checked against another schema vouches for nothing.
    writeSeal(path, (await identityOf(path)).replace(/^\d+ /, `${STATE_SCHEMA_REVISION + 1} `));
    expect((await readError()).code).toBe('state-corrupt');
  });

  it('a torn note vouches for nothing', async () => {
    const { path } = await sealedOddFile();
    const note = await readFile(sealPathFor(path), 'utf8');
    await writeFile(sealPathFor(path), note.slice(0, note.indexOf('\n') + 1)); // its line, without the rest
    expect((await readError()).code).toBe('state-corrupt');
  });

  it('a file edited by hand after goald wrote it is checked again', async () => {
    const store = await openStore(home, { env: {} });
    const path = join(home, 'state.json');
    await store.update((state) => void state.goals.push(makeGoal('g1')));
    const text = await readFile(path, 'utf8');
    // (Its size changes: an edit in place of the same size within the same clock tick as goald's write
    // would keep the file's identity, the one case the note cannot tell; see state-seal.ts.)
    await writeFile(path, text.replace('"status": "active"', '"status": "sideways"'));
    expect((await readError()).message).toContain('goals.0.status');
  });

  it('a registration takes the records of a file it vouches for as they stand; a key in the environment still has them checked', async () => {
    const path = join(home, 'state.json');
    await openStore(home, { env: {} });
    // Written in goald's layout, but for one record's spacing: a file the note vouches for is goald's own, so
    // a registration keeps each record's text without stringifying the whole state to compare it first.
    const state = { version: 1, goals: [makeGoal('g1')], loops: [] };
    const odd = `${JSON.stringify(state, null, 2)}\n`.replace('"status": "active"', '"status":  "active"');
    await writeFile(path, odd);
    writeSeal(path, await identityOf(path));
    await (await openStore(home, { env: {} })).addGoal(makeGoal('g2'), () => true);
    const kept = await readFile(path, 'utf8');
    expect(kept).toContain('"status":  "active"');
    expect(JSON.parse(kept)).toEqual({ ...state, goals: [makeGoal('g1'), makeGoal('g2')] });
    // Unvouched (the same text, its note gone): checked record by record, to the same file (a record's text is
    // kept when it reads back as the record).
    await writeFile(path, odd);
    await writeFile(sealPathFor(path), '');
    await (await openStore(home, { env: {} })).addGoal(makeGoal('g2'), () => true);
    expect(await readFile(path, 'utf8')).toBe(kept);
    // Vouched, but holding a key this environment knows: checked record by record (redacted) all the same.
    const key = 'sk-test-0123456789abcdefghijklmnop';
    const holding = { version: 1, goals: [{ ...makeGoal('g1'), condition: `uses ${key}` }], loops: [] };
    await writeFile(path, `${JSON.stringify(holding, null, 2)}\n`);
    writeSeal(path, await identityOf(path));
    await (await openStore(home, { env: { OPENAI_API_KEY: key } })).addGoal(makeGoal('g2'), () => true);
    expect(await readFile(path, 'utf8')).not.toContain(key);
  });

  // STATE_SCHEMA_REVISION must change with the schema: a note written under another one vouches for nothing.
  it('the schema is the one its revision names (bump STATE_SCHEMA_REVISION and this digest together)', () => {
    const schema = JSON.stringify(z.toJSONSchema(stateFileSchema, { unrepresentable: 'any' }));
    expect({ revision: STATE_SCHEMA_REVISION, digest: createHash('sha256').update(schema).digest('hex').slice(0, 16) }).toEqual({ revision: 5, digest: '0a35d8adf40401bf' });
  });
});
