import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { GoaldError } from '../../src/errors.js';
import { restoreFromBackup } from '../../state/atomic-file-adapter.js';
import { findSecretInState } from '../../state/secret-guard.js';
import { withStateLock } from '../../state/state-lock.js';
import { openStore } from '../../state/store.js';
import { makeGoal } from './fixtures.js';
import { rejectionOf, tempDirPerTest } from './helpers.js';

let dir: string;
let home: string;
tempDirPerTest((made) => {
  dir = made;
  home = join(dir, 'nested', 'home');
});

describe('openStore', () => {
  it('creates a missing home with mode 0700 and reads an empty state without writing', async () => {
    const store = await openStore(home, { env: {} });
    expect((await stat(home)).mode & 0o777).toBe(0o700);
    expect(await store.read()).toEqual({ version: 1, goals: [], loops: [] });
    expect(await readdir(home)).toEqual([]);
  });

  it('creates goal directories 0700 on demand and refuses ids that are not ids', async () => {
    const store = await openStore(home, { env: {} });
    const goalDir = store.goalDir('gabc123');
    expect(goalDir).toBe(join(home, 'goals', 'gabc123'));
    expect((await stat(goalDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(home, 'goals'))).mode & 0o777).toBe(0o700);
    for (const bad of ['../etc', 'a/b', '', '.hidden']) {
      expect(() => store.goalDir(bad)).toThrow(GoaldError);
    }
  });

  it('removes temp files left by a writer that died, and keeps those of live writers', async () => {
    await mkdir(home, { recursive: true });
    // pid 2^22 + 1 is above Linux's pid_max default ceiling, so no such process exists.
    const orphan = join(home, '.state.json.4194305.abcdef.tmp');
    const live = join(home, `.state.json.${process.pid}.abcdef.tmp`);
    const orphanBak = join(home, '.state.json.bak.4194305.abcdef.tmp');
    await Promise.all([writeFile(orphan, '{'), writeFile(live, '{'), writeFile(orphanBak, '{')]);
    await openStore(home, { env: {} });
    expect((await readdir(home)).sort()).toEqual([`.state.json.${process.pid}.abcdef.tmp`]);
  });
});

describe('Store.update', () => {
  it('writes atomically, leaves no temp or lock files, and keeps the previous content as .bak', async () => {
    const store = await openStore(home, { env: {} });
    const returned = await store.update((state) => {
      state.goals.push(makeGoal('g1'));
      return state.goals.length;
    });
    expect(returned).toBe(1);
    expect((await readdir(home)).sort()).toEqual(['state.json', 'state.json.checked']);
    const first = await readFile(join(home, 'state.json'), 'utf8');
    expect((await stat(join(home, 'state.json'))).mode & 0o777).toBe(0o600);

    await store.update((state) => {
      state.goals.push(makeGoal('g2'));
    });
    expect((await readdir(home)).sort()).toEqual(['state.json', 'state.json.bak', 'state.json.checked']);
    expect(await readFile(join(home, 'state.json.bak'), 'utf8')).toBe(first);
    expect((await store.read()).goals.map((goal) => goal.id)).toEqual(['g1', 'g2']);
  });

  it('refreshes the .bak over its own writes at most once a second, and over any other text at once', async () => {
    const ids = async (file: string): Promise<string[]> =>
      (JSON.parse(await readFile(join(home, file), 'utf8')) as { goals: Array<{ id: string }> }).goals.map((goal) => goal.id);
    const add = async (store: Awaited<ReturnType<typeof openStore>>, id: string): Promise<void> => {
      await store.update((state) => {
        state.goals.push(makeGoal(id));
      });
    };
    const store = await openStore(home, { env: {} });
    await add(store, 'g1');
    await add(store, 'g2');
    expect(await ids('state.json.bak')).toEqual(['g1']);
    // A fast goal's next write, over this store's own text: the .bak stays (a second's history at most).
    await add(store, 'g3');
    expect(await ids('state.json.bak')).toEqual(['g1']);
    expect(await ids('state.json')).toEqual(['g1', 'g2', 'g3']);
    // Another writer (another process) replaces text it did not write: the .bak is that text, at once.
    const other = await openStore(home, { env: {} });
    await add(other, 'g4');
    expect(await ids('state.json.bak')).toEqual(['g1', 'g2', 'g3']);
    // And so does the first store over the other's text; then its own again waits out the second.
    await add(store, 'g5');
    expect(await ids('state.json.bak')).toEqual(['g1', 'g2', 'g3', 'g4']);
    await add(store, 'g6');
    expect(await ids('state.json.bak')).toEqual(['g1', 'g2', 'g3', 'g4']);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await add(store, 'g7');
    expect(await ids('state.json.bak')).toEqual(['g1', 'g2', 'g3', 'g4', 'g5', 'g6']);
  });

  it('replaces state.json only once `after` resolves, and not at all when it rejects', async () => {
    const store = await openStore(home, { env: {} });
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    const before = await readFile(join(home, 'state.json'), 'utf8');
    let flushed!: () => void;
    const after = new Promise<void>((resolve) => (flushed = resolve));
    const writing = store.updateGoal('g1', (goal) => {
      goal.phase = 'checking';
    }, { after });
    // Written and flushed to its temp file, but not renamed in: the file still says what it said.
    await vi.waitFor(async () => expect((await readdir(home)).some((name) => name.startsWith('.state.json.') && name.endsWith('.tmp'))).toBe(true), { timeout: 5_000, interval: 10 });
    expect(await readFile(join(home, 'state.json'), 'utf8')).toBe(before);
    flushed();
    expect(await writing).toBe(true);
    expect((await store.read()).goals[0]?.phase).toBe('checking');

    const notFlushed = Promise.reject(new Error('the turn record could not be flushed'));
    notFlushed.catch(() => undefined); // as the supervisor does: the write awaits it later
    const failed = store.updateGoal('g1', (goal) => {
      goal.phase = 'evaluating';
    }, { after: notFlushed });
    await expect(failed).rejects.toThrow('the turn record could not be flushed');
    expect((await store.read()).goals[0]?.phase).toBe('checking');
    expect((await readdir(home)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('keeps unknown fields written by a newer goald', async () => {
    await mkdir(home, { recursive: true });
    const newer = { version: 1, goals: [{ ...makeGoal('g1'), futureField: { x: 1 } }], loops: [], extra: true };
    await writeFile(join(home, 'state.json'), JSON.stringify(newer));
    const store = await openStore(home, { env: {} });
    await store.update((state) => {
      state.goals.push(makeGoal('g2'));
    });
    const written = JSON.parse(await readFile(join(home, 'state.json'), 'utf8')) as typeof newer;
    expect(written.extra).toBe(true);
    expect(written.goals[0]?.futureField).toEqual({ x: 1 });
  });

  it('writes nothing when mutate throws, and the lock is released for the next update', async () => {
    const store = await openStore(home, { env: {} });
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    const before = await readFile(join(home, 'state.json'), 'utf8');
    await expect(
      store.update(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await readFile(join(home, 'state.json'), 'utf8')).toBe(before);
    await store.update((state) => {
      state.goals.push(makeGoal('g2'));
    });
    expect((await store.read()).goals).toHaveLength(2);
  });

  it('refuses to write a state that would not read back (internal), leaving the file unchanged', async () => {
    const store = await openStore(home, { env: {} });
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    const before = await readFile(join(home, 'state.json'), 'utf8');
    const error = await rejectionOf(
      store.update((state) => {
        const goal = state.goals[0];
        if (goal !== undefined) goal.summary.turns = Number.NaN; // JSON writes NaN as null
      }),
    );
    expect(error.code).toBe('internal');
    expect(error.message).toContain('goals.0.summary.turns');
    expect(await readFile(join(home, 'state.json'), 'utf8')).toBe(before);
  });

  it('fails with state-locked when another holder keeps the lock past the retries', async () => {
    const store = await openStore(home, { env: {}, retries: 1 });
    let releaseHolder!: () => void;
    const holderHasLock = new Promise<void>((resolveHas) => {
      void withStateLock(
        home,
        () =>
          new Promise<void>((resolveHeld) => {
            releaseHolder = resolveHeld;
            resolveHas();
          }),
      );
    });
    await holderHasLock;
    const error = await rejectionOf(store.update(() => undefined));
    expect(error.code).toBe('state-locked');
    expect(error.message).toBe(`${join(home, 'state.json')} is locked by another goald process`);
    expect(error.hint).toContain('state.json.lock');
    releaseHolder();
  });

  it('takes over a lock abandoned by a dead process once it is stale', async () => {
    const lockDir = join(home, 'state.json.lock');
    await mkdir(lockDir, { recursive: true });
    // Staleness is judged by the lock's mtime: a minute old is past the 10 s stale limit.
    const aMinuteAgo = new Date(Date.now() - 60_000);
    await utimes(lockDir, aMinuteAgo, aMinuteAgo);
    const store = await openStore(home, { env: {}, retries: 0 });
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    expect((await store.read()).goals).toHaveLength(1);
  });
});

describe('Store caching of what it read and wrote', () => {
  it('sees every write of another store (another process) and never hands out its cached state', async () => {
    const mine = await openStore(home, { env: {} });
    const theirs = await openStore(home, { env: {} });
    await mine.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    const first = await mine.read();
    first.goals.length = 0; // a caller's mutation must not reach the cache
    expect((await mine.read()).goals.map((goal) => goal.id)).toEqual(['g1']);
    await theirs.update((state) => {
      state.goals.push(makeGoal('g2'));
    });
    expect((await mine.read()).goals.map((goal) => goal.id)).toEqual(['g1', 'g2']);
    await mine.update((state) => {
      state.goals.push(makeGoal('g3'));
    });
    expect((await theirs.read()).goals.map((goal) => goal.id)).toEqual(['g1', 'g2', 'g3']);
  });

  it('readGoals copies out only the goals it keeps, as stored now, never its cached records', async () => {
    const mine = await openStore(home, { env: {} });
    const theirs = await openStore(home, { env: {} });
    expect(await mine.readGoals(() => true)).toEqual([]);
    await mine.update((state) => {
      state.goals.push(makeGoal('g1'), makeGoal('g2', { status: 'achieved' }), makeGoal('g3'));
    });
    const seen: string[] = [];
    const live = await mine.readGoals((goal) => {
      seen.push(goal.id);
      return goal.status === 'active';
    });
    expect(seen).toEqual(['g1', 'g2', 'g3']);
    expect(live.map((goal) => goal.id)).toEqual(['g1', 'g3']);
    live[0]!.condition = 'changed by a caller'; // a caller's copy: the store's records stay as stored
    expect((await mine.readGoals((goal) => goal.id === 'g1'))[0]?.condition).toBe(makeGoal('g1').condition);
    await theirs.updateGoal('g3', (goal) => {
      goal.status = 'paused';
    });
    expect((await mine.readGoals((goal) => goal.status === 'paused')).map((goal) => goal.id)).toEqual(['g3']);
  });

  it('checks a file edited behind its back again, even right after writing it', async () => {
    const store = await openStore(home, { env: {} });
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    const path = join(home, 'state.json');
    const broken = (await readFile(path, 'utf8')).replace('"status": "active"', '"status": "sleeping"');
    await writeFile(path, broken);
    expect((await rejectionOf(store.read())).code).toBe('state-corrupt');
    expect((await rejectionOf(store.update(() => undefined))).code).toBe('state-corrupt');
    expect(await readFile(path, 'utf8')).toBe(broken);
  });

  it('a non-durable update (durable: false) writes the same whole file and keeps the .bak', async () => {
    const store = await openStore(home, { env: {} });
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    const first = await readFile(join(home, 'state.json'), 'utf8');
    await store.update(
      (state) => {
        state.goals.push(makeGoal('g2'));
      },
      { durable: false },
    );
    expect((await readdir(home)).sort()).toEqual(['state.json', 'state.json.bak', 'state.json.checked']);
    expect(await readFile(join(home, 'state.json.bak'), 'utf8')).toBe(first);
    expect((await store.read()).goals.map((goal) => goal.id)).toEqual(['g1', 'g2']);
  });
});

describe('corrupt state', () => {
  const cases: [string, string, RegExp][] = [
    ['truncated JSON', '{"version": 1, "goals": [', /\(invalid JSON: /],
    ['empty file', '', /\(invalid JSON: /],
    ['wrong shape', JSON.stringify({ version: 1, goals: [{ id: 'g1', status: 'sleeping' }], loops: [] }), /\(goals\.0\./],
    ['unknown version', JSON.stringify({ version: 2, goals: [], loops: [] }), /\(version: /],
  ];

  it.each(cases)('%s: reported with its path, one line, and left byte-identical', async (_name, content, problem) => {
    await mkdir(home, { recursive: true });
    const path = join(home, 'state.json');
    await writeFile(path, content);
    const store = await openStore(home, { env: {} });

    const readError = await rejectionOf(store.read());
    expect(readError.code).toBe('state-corrupt');
    expect(readError.message.startsWith(`${path} is not valid goald state (`)).toBe(true);
    expect(readError.message).toMatch(problem);
    expect(readError.message).not.toContain('\n');
    expect(readError.hint).toBe(`inspect it, or run \`goald state restore\` to restore ${path}.bak`);

    const updateError = await rejectionOf(store.update((state) => state.goals.push(makeGoal('g9'))));
    expect(updateError.code).toBe('state-corrupt');
    expect(await readFile(path, 'utf8')).toBe(content);
    expect((await readdir(home)).sort()).toEqual(['state.json']);
  });

  it('restores from .bak only when asked, keeping the replaced file', async () => {
    const store = await openStore(home, { env: {} });
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    await store.update((state) => {
      state.goals.push(makeGoal('g2'));
    });
    const path = join(home, 'state.json');
    await writeFile(path, '{"version": 1, "goa');
    await expect(store.read()).rejects.toThrow(GoaldError);

    const result = await restoreFromBackup(home);
    expect(result.path).toBe(path);
    expect(result.backupPath).toBe(`${path}.bak`);
    expect(result.replacedCopyPath).not.toBeNull();
    expect(await readFile(result.replacedCopyPath ?? '', 'utf8')).toBe('{"version": 1, "goa');
    expect((await store.read()).goals.map((goal) => goal.id)).toEqual(['g1']);
  });

  it('restore without a backup is not-found; a corrupt backup is state-corrupt', async () => {
    await mkdir(home, { recursive: true });
    const path = join(home, 'state.json');
    await writeFile(path, 'garbage');
    expect((await rejectionOf(restoreFromBackup(home))).code).toBe('not-found');
    await writeFile(`${path}.bak`, 'also garbage');
    const error = await rejectionOf(restoreFromBackup(home));
    expect(error.code).toBe('state-corrupt');
    expect(error.message).toContain(`${path}.bak`);
    expect(await readFile(path, 'utf8')).toBe('garbage');
  });
});

describe('secrets', () => {
  const KEY = 'sk-test-0123456789abcdef';

  it('refuses settings with a credential-named field, without writing', async () => {
    const store = await openStore(home, { env: {} });
    const error = await rejectionOf(
      store.update((state) => {
        state.goals.push(makeGoal('g1', { settings: { evaluator: { provider: 'openai', apiKey: 'whatever-it-is' } } }));
      }),
    );
    expect(error.code).toBe('internal');
    expect(error.message).toContain('goals.0.settings.evaluator.apiKey');
    expect(error.message).not.toContain('whatever-it-is');
    expect(await readdir(home)).toEqual([]);
  });

  it('redacts any value of a *_API_KEY variable before writing: state.json and its .bak never hold it', async () => {
    const store = await openStore(home, { env: { OPENAI_API_KEY: KEY, PLACEHOLDER_API_KEY: 'production' } });
    await store.update((state) => {
      state.goals.push(makeGoal('g1', { settings: { agent: { command: `my-agent --key ${KEY}` } } }));
    });
    await store.update((state) => {
      state.goals.push(makeGoal('g2', { settings: { tokens: 5, tokenBudget: 10, env: 'production' } }));
    });
    const text = await readFile(join(home, 'state.json'), 'utf8');
    expect(text).not.toContain(KEY);
    expect(text).toContain('my-agent --key [redacted:OPENAI_API_KEY]');
    expect(await readFile(join(home, 'state.json.bak'), 'utf8')).not.toContain(KEY);
    // Short values are not credentials and are left alone; nor are count fields named like tokens.
    expect(text).toContain('"env": "production"');
  });

  it('the guard still refuses a *_API_KEY value that reached it (the last line of defence), naming the variable only', () => {
    const data = { goals: [{ command: `my-agent --key ${KEY}` }] };
    const found = findSecretInState(data, JSON.stringify(data), { OPENAI_API_KEY: KEY, PLACEHOLDER_API_KEY: 'production' });
    expect(found).toBe('it contains the value of OPENAI_API_KEY');
    const harmless = { goals: [{ tokens: 5, tokenBudget: 10, env: 'production' }] };
    expect(findSecretInState(harmless, JSON.stringify(harmless), { PLACEHOLDER_API_KEY: 'production' })).toBeNull();
  });
});

describe('updateGoal', () => {
  const KEY = 'sk-test-0123456789abcdef';

  it('changes one goal and leaves the rest as stored, the file as a whole update would write it', async () => {
    const store = await openStore(home, { env: { OPENAI_API_KEY: KEY } });
    await store.update((state) => {
      for (let index = 0; index < 20; index += 1) state.goals.push(makeGoal(`g${index}`, { status: 'achieved' }));
      state.goals.push(makeGoal('live'));
    });
    const before = await store.read();
    expect(await store.updateGoal('live', (goal) => {
      goal.phase = 'checking';
      goal.reasonMessage = `ran with ${KEY}`;
    })).toBe(true);
    const after = await store.read();
    expect(after.goals.slice(0, 20)).toEqual(before.goals.slice(0, 20));
    expect(after.goals[20]).toMatchObject({ id: 'live', phase: 'checking', reasonMessage: 'ran with [redacted:OPENAI_API_KEY]' });
    // What a whole-state update of the same content writes, byte for byte; the previous file is the .bak.
    const text = await readFile(join(home, 'state.json'), 'utf8');
    const other = join(dir, 'other-home');
    const otherStore = await openStore(other, { env: { OPENAI_API_KEY: KEY } });
    await otherStore.update((state) => {
      state.goals.push(...after.goals);
    });
    expect(await readFile(join(other, 'state.json'), 'utf8')).toBe(text);
    expect(JSON.parse(await readFile(join(home, 'state.json.bak'), 'utf8'))).toEqual(before);
  });

  it('is false, writing nothing, for a goal that is not stored', async () => {
    const store = await openStore(home, { env: {} });
    expect(await store.updateGoal('gnone', () => undefined)).toBe(false);
    expect(await readdir(home)).toEqual([]);
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    const text = await readFile(join(home, 'state.json'), 'utf8');
    expect(await store.updateGoal('gnone', () => undefined)).toBe(false);
    expect(await readFile(join(home, 'state.json'), 'utf8')).toBe(text);
  });

  it('sees what another process wrote since its own last write: no update is lost', async () => {
    const mine = await openStore(home, { env: {} });
    const theirs = await openStore(home, { env: {} });
    await mine.update((state) => {
      state.goals.push(makeGoal('g1'), makeGoal('g2'));
    });
    await mine.updateGoal('g1', (goal) => {
      goal.phase = 'checking';
    });
    await theirs.updateGoal('g2', (goal) => {
      goal.phase = 'evaluating';
    });
    await theirs.update((state) => {
      state.goals.push(makeGoal('g3'));
    });
    await mine.updateGoal('g1', (goal) => {
      goal.phase = 'coolingDown';
    });
    expect((await theirs.read()).goals.map((goal) => [goal.id, goal.phase])).toEqual([
      ['g1', 'coolingDown'],
      ['g2', 'evaluating'],
      ['g3', 'running'],
    ]);
  });

  it('refuses a goal that would not read back, and writes nothing', async () => {
    const store = await openStore(home, { env: {} });
    await store.update((state) => {
      state.goals.push(makeGoal('g1'));
    });
    const text = await readFile(join(home, 'state.json'), 'utf8');
    const error = await rejectionOf(store.updateGoal('g1', (goal) => {
      goal.summary.tokens = Number.NaN;
    }));
    expect(error.message).toContain('goals.0.summary.tokens');
    expect(await readFile(join(home, 'state.json'), 'utf8')).toBe(text);
    // The store is not left believing the refused record is on disk.
    await store.updateGoal('g1', (goal) => {
      goal.phase = 'checking';
    });
    expect((await store.read()).goals[0]).toMatchObject({ phase: 'checking', summary: { tokens: 0 } });
  });
});

describe('addGoal', () => {
  const KEY = 'sk-test-0123456789abcdef';

  /** A home holding `finished` achieved goals, written by one store, and a second store (another process) on it. */
  async function homeWithHistory(finished: number, env: NodeJS.ProcessEnv = {}): Promise<Awaited<ReturnType<typeof openStore>>> {
    const writer = await openStore(home, { env: {} });
    await writer.update((state) => {
      for (let index = 0; index < finished; index += 1) state.goals.push(makeGoal(`g${index}`, { status: 'achieved' }));
    });
    return openStore(home, { env });
  }

  it('adds the goal after admit has seen those stored; the file as a whole update would write it', async () => {
    const store = await homeWithHistory(20, { OPENAI_API_KEY: KEY });
    const before = await readFile(join(home, 'state.json'), 'utf8');
    let seen: string[] = [];
    const added = makeGoal('gnew', { reasonMessage: `started with ${KEY}` });
    expect(await store.addGoal(added, (stored) => {
      seen = stored.map((goal) => goal.id);
      return 'admitted';
    })).toBe('admitted');
    expect(seen).toHaveLength(20);
    const after = await store.read();
    expect(after.goals.map((goal) => goal.id)).toEqual([...seen, 'gnew']);
    expect(after.goals[20]).toMatchObject({ reasonMessage: 'started with [redacted:OPENAI_API_KEY]' });
    const text = await readFile(join(home, 'state.json'), 'utf8');
    const other = join(dir, 'other-home');
    await (await openStore(other, { env: { OPENAI_API_KEY: KEY } })).update((state) => {
      state.goals.push(...after.goals);
    });
    expect(await readFile(join(other, 'state.json'), 'utf8')).toBe(text);
    expect(await readFile(join(home, 'state.json.bak'), 'utf8')).toBe(before);
    // The next write of the goal (the supervisor's) starts from that file.
    await store.updateGoal('gnew', (goal) => {
      goal.phase = 'checking';
    });
    expect((await store.read()).goals.map((goal) => goal.phase)).toEqual([...seen.map(() => 'running'), 'checking']);
  });

  it('writes nothing when admit refuses (throws) or adds nothing (null)', async () => {
    const store = await homeWithHistory(2);
    const text = await readFile(join(home, 'state.json'), 'utf8');
    const refused = await rejectionOf(store.addGoal(makeGoal('gnew'), () => {
      throw new GoaldError('conflict', 'busy');
    }));
    expect(refused.code).toBe('conflict');
    expect(await store.addGoal(makeGoal('gnew'), () => null)).toBeNull();
    expect(await readFile(join(home, 'state.json'), 'utf8')).toBe(text);
    // Into an empty home too.
    const empty = await openStore(join(dir, 'empty'), { env: {} });
    expect(await empty.addGoal(makeGoal('g1'), () => true)).toBe(true);
    expect((await empty.read()).goals.map((goal) => goal.id)).toEqual(['g1']);
  });

  it('redacts a stored goal that holds a value this environment redacts, as a whole update would', async () => {
    const stranger = 'Zq7-no-known-shape-0123456789abcdef'; // written by a process that did not have it as a key
    const writer = await openStore(home, { env: {} });
    await writer.update((state) => {
      state.goals.push(makeGoal('g1', { status: 'achieved', reasonMessage: `used ${stranger}` }));
    });
    const store = await openStore(home, { env: { OTHER_API_KEY: stranger } });
    await store.addGoal(makeGoal('g2'), () => true);
    const text = await readFile(join(home, 'state.json'), 'utf8');
    expect(text).not.toContain(stranger);
    expect((await store.read()).goals[0]).toMatchObject({ reasonMessage: 'used [redacted:OTHER_API_KEY]' });
  });

  it('takes a file written by hand (another layout) through the whole check, and writes it in its own layout', async () => {
    await mkdir(home, { recursive: true });
    const handWritten = { version: 1, goals: [makeGoal('g1', { status: 'achieved' })], loops: [] };
    await writeFile(join(home, 'state.json'), JSON.stringify(handWritten));
    const store = await openStore(home, { env: {} });
    await store.addGoal(makeGoal('g2'), () => true);
    const text = await readFile(join(home, 'state.json'), 'utf8');
    expect(JSON.parse(text)).toEqual({ ...handWritten, goals: [...handWritten.goals, makeGoal('g2')] });
    expect(text.endsWith('\n}\n')).toBe(true);
  });

  it('refuses a goal that would not read back, and writes nothing', async () => {
    const store = await homeWithHistory(2);
    const text = await readFile(join(home, 'state.json'), 'utf8');
    const bad = makeGoal('gbad');
    bad.summary.tokens = Number.NaN;
    const error = await rejectionOf(store.addGoal(bad, () => true));
    expect(error.message).toContain('goals.2.summary.tokens');
    expect(await readFile(join(home, 'state.json'), 'utf8')).toBe(text);
  });
});
