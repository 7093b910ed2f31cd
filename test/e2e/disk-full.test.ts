// End to end: GOALD_HOME on a 2 MB tmpfs, the workspace elsewhere, and an agent whose second turn prints
// 4 MB (its transcript fills the disk). The goal ends failed / `storage`, `goal.finished` reaches
// `start --foreground --json` and `start --wait` (which used to wait forever), the earlier turns' records
// are still readable, state.json still parses, and the daemon stores the ending once space is freed.

import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDaemonClient } from '../../src/daemon/client.js';
import { readTurnLog } from '../../state/turn-log.js';
import { readGoal } from '../helpers/daemon.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, type GoaldSandbox } from '../helpers/run-goald.js';
import { mountTinyHome, tmpfsUnavailable } from '../helpers/tiny-disk.js';

const TINY_DISK_BYTES = 2 * 1024 * 1024;

// Turn 1 is an ordinary small turn; from turn 2 on the agent prints 4 MB, twice what the disk holds.
const DISK_FILLING_AGENT = `
const turn = Number(process.env.GOALD_TURN);
if (turn < 2) console.log('turn ' + turn + ': a small step');
else {
  const chunk = 'x'.repeat(64 * 1024) + '\\n';
  for (let i = 0; i < 64; i += 1) process.stdout.write(chunk);
}
`;

const skipReason = tmpfsUnavailable();
if (skipReason !== null) console.warn(`disk-full tests skipped: cannot mount a tmpfs here (${skipReason})`);

async function setUp(): Promise<{ sandbox: GoaldSandbox; args: string[] }> {
  const sandbox = await goaldSandbox();
  mountTinyHome(sandbox, TINY_DISK_BYTES);
  const repo = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
  const agent = path.join(sandbox.root, 'fill-disk.mjs'); // outside the tiny disk
  await writeFile(agent, DISK_FILLING_AGENT);
  const args = ['start', 'a goal never met', '-C', repo.dir, '--cooldown', '0', '--check', 'test -f never', '--agent', `node ${agent}`, '--max-turns', '5', '--turn-token-limit', '100000000', '--token-budget', '1000000000', '--json'];
  return { sandbox, args };
}

function lastEvent(stdout: string): Record<string, unknown> | undefined {
  return parseJsonLines(stdout).at(-1);
}

// Everything written before the disk filled is still there: state.json parses, turns 0 and 1 read back.
async function expectEarlierRecordsIntact(sandbox: GoaldSandbox, id: string): Promise<void> {
  const state = JSON.parse(readFileSync(path.join(sandbox.home, 'state.json'), 'utf8')) as { goals: Array<{ id: string }> };
  expect(state.goals.map((goal) => goal.id)).toContain(id);
  const log = await readTurnLog(path.join(sandbox.home, 'goals', id));
  expect(log.records.map((record) => record.turn).slice(0, 2)).toEqual([0, 1]);
  expect(log.skipped.filter((line) => line.kind === 'invalid')).toEqual([]);
}

describe.skipIf(skipReason !== null)('a full disk under GOALD_HOME (tmpfs)', () => {
  it('--foreground --json ends with goal.finished failed/storage and exit 1, keeping earlier records', async () => {
    const { sandbox, args } = await setUp();
    const run = await sandbox.run([...args, '--foreground']);
    expect(run.code, run.stderr).toBe(1);
    const finished = lastEvent(run.stdout);
    expect(finished).toMatchObject({ type: 'goal.finished', status: 'failed', reason: 'storage', breaker: null });
    const id = String(finished?.id);
    expect(parseJsonLines(run.stdout).some((event) => event.type === 'turn.finished' && event.turn === 1)).toBe(true);
    await expectEarlierRecordsIntact(sandbox, id);
  });

  it('start --wait returns exit 1 with goal.finished; status, show and logs tell the end; it is stored once space is freed', async () => {
    const { sandbox, args } = await setUp();
    const run = await sandbox.run([...args, '--wait']);
    expect(run.code, run.stderr).toBe(1);
    const finished = lastEvent(run.stdout);
    expect(finished).toMatchObject({ type: 'goal.finished', status: 'failed', reason: 'storage', breaker: null });
    const id = String(finished?.id);
    await expectEarlierRecordsIntact(sandbox, id);

    // While the disk is full the daemon shows the end (stored, or held until the store takes it).
    const status = await sandbox.run(['status', id, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ goals: [{ id, status: 'failed', reason: 'storage' }] });
    // Listed by the status it shows, whether the store took the end or still holds it back.
    const client = createDaemonClient(sandbox.socket);
    expect((await client.listGoals({ status: ['failed'] })).map((goal) => goal.id)).toEqual([id]);
    expect(await client.listGoals({ status: ['active', 'paused'] })).toEqual([]);
    const logs = await sandbox.run(['logs', id, '-f', '--json']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(lastEvent(logs.stdout)).toMatchObject({ type: 'goal.finished', status: 'failed', reason: 'storage' });
    const ping = await sandbox.run(['daemon', 'status', '--json']);
    expect(ping.code).toBe(0); // the daemon survived the full disk

    // Space freed (the runaway transcript removed): the next look through the daemon stores the end.
    await rm(path.join(sandbox.home, 'goals', id, 'turn-2.log'), { force: true });
    expect((await sandbox.run(['status', id])).code).toBe(0);
    expect(readGoal(sandbox, id)).toMatchObject({ status: 'failed', reason: 'storage', runningAgent: null });
    expect(readGoal(sandbox, id).reasonMessage).toMatch(/no space left on device/i);
  });
});
