// End to end: the real daemon and the real `start --foreground` notify through the user's config.json
// `notify` (a local HTTP server as the webhook), once per event; and a hostile agent that writes a
// `notify` section into the workspace's goal.config.json makes goald run and post nothing of its own.

import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, sandboxDaemonPid, writeUserConfig } from '../helpers/run-goald.js';
import { expectToHold, submitGoal, waitForGoal } from '../helpers/daemon.js';
import { waitUntilGone } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';

const FAST = ['--cooldown', '0', '--evaluator', 'none'];
let servers: Server[] = [];
let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

afterEach(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  servers = [];
});

/** A webhook receiver on loopback; `bodies` fills as POSTs arrive. */
async function webhook(): Promise<{ url: string; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      response.writeHead(204).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

describe('notifications', () => {
  it('the daemon posts one notification when a goal is achieved, and one when another fails', async () => {
    const hook = await webhook();
    const sandbox = await goaldSandbox();
    await writeUserConfig(sandbox, { notify: { webhook: hook.url } });
    const [good, bad] = await Promise.all([gitdir({ initialCommit: true }), gitdir({ initialCommit: true })]);
    const achieved = await sandbox.run(['start', 'n has a line', '-C', good.dir, ...FAST, '--agent', 'echo x >> n', '--check', 'test -s n', '--wait', '--json']);
    expect(achieved.code, achieved.stderr).toBe(0);
    const failed = await sandbox.run(['start', 'impossible', '-C', bad.dir, ...FAST, '--agent', 'echo y >> m', '--check', 'exit 1', '--max-turns', '2', '--wait', '--json']);
    expect(failed.code, failed.stderr).toBe(1);
    const ids = [achieved, failed].map((run) => parseJsonLines(run.stdout)[0]?.id);
    // The daemon sends after it announced the end; --wait may return a moment before the POST lands.
    await waitUntil('both notifications posted', () => hook.bodies.length >= 2);
    await expectToHold('no third notification', 500, () => hook.bodies.length <= 2);
    expect(hook.bodies.map((body) => [body.kind, (body.goal as { id: string }).id])).toEqual([
      ['achieved', ids[0]],
      ['failed', ids[1]],
    ]);
    expect(hook.bodies[1]).toMatchObject({ reason: 'max-turns', next: `goald show ${String(ids[1])}` });
    expect(String(hook.bodies[1]?.text)).toContain('✗ failed (max-turns) "impossible" after 2 turns');
  });

  it('a goal paused for a blocked verdict notifies once (webhook, and a fake notify-send on the daemon\'s PATH), not again after kill -9 and a restart', async () => {
    llm.reset();
    llm.openai.setDefault({ achieved: false, blocked: true, reason: 'needs a human: <b>no key</b>', remaining: ['an API key'] });
    const hook = await webhook();
    const sandbox = await goaldSandbox();
    const bin = path.join(sandbox.root, 'bin');
    const shown = path.join(sandbox.root, 'notify-send.argv');
    await mkdir(bin);
    await writeFile(path.join(bin, 'notify-send'), `#!/bin/sh\nfor arg in "$@"; do printf '%s\\n' "$arg"; done >> '${shown}'\necho --- >> '${shown}'\n`);
    await chmod(path.join(bin, 'notify-send'), 0o755);
    // The auto-started daemon inherits these: notify-send is found on its PATH, the evaluator is the fake server.
    Object.assign(sandbox.env, { PATH: `${bin}:${sandbox.env.PATH ?? ''}`, OPENAI_API_KEY: 'sk-test-not-a-secret', OPENAI_BASE_URL: llm.openaiBaseURL });
    await writeUserConfig(sandbox, { notify: { webhook: hook.url, desktop: true }, limits: { blockedVerdicts: 1 } });
    const git = await gitdir({ initialCommit: true });
    const { id } = await submitGoal(sandbox, ['needs a key', '-C', git.dir, '--cooldown', '0', '--evaluator', 'openai:judge-model', '--agent', 'echo "$GOALD_TURN" >> n', '--check', 'true']);
    const paused = await waitForGoal(sandbox, id, 'to pause or end', (goal) => goal.status !== 'active');
    expect([paused.status, paused.pauseReason, paused.reasonMessage]).toEqual(['paused', 'blocked', null]);
    // The fake notify-send writes its arguments one by one, then `---`: the file exists before it is whole.
    await waitUntil('the webhook and notify-send to be called', () => hook.bodies.length >= 1 && existsSync(shown) && readFileSync(shown, 'utf8').includes('---\n'));
    expect(hook.bodies[0]).toMatchObject({ kind: 'paused', reason: 'blocked', next: `goald resume ${id}, or goald say / goald stop ${id}` });
    // notify-send got the title and the text as arguments, the verdict's markup escaped.
    expect(readFileSync(shown, 'utf8')).toContain('--app-name=goald\ngoald: goal paused (blocked)\n⏸ paused (blocked) "needs a key" after 1 turn');
    expect(readFileSync(shown, 'utf8')).toContain('needs a human: &lt;b&gt;no key&lt;/b&gt;');

    const daemon = sandboxDaemonPid(sandbox);
    expect(daemon).not.toBeNull();
    process.kill(daemon ?? 0, 'SIGKILL');
    await waitUntilGone(daemon ?? 0);
    const restarted = await sandbox.run(['daemon']);
    expect(restarted.code, restarted.stderr).toBe(0);
    expect((await sandbox.run(['status', id])).code).toBe(0);
    await expectToHold('no second notification after the restart', 1_000, () => hook.bodies.length === 1 && readFileSync(shown, 'utf8').split('---\n').length === 2);
    await sandbox.run(['stop', id]);
  });

  it('--foreground notifies before it exits', async () => {
    const hook = await webhook();
    const sandbox = await goaldSandbox();
    await writeUserConfig(sandbox, { notify: { webhook: hook.url, events: ['achieved'] } });
    const repo = await gitdir({ initialCommit: true });
    const run = await sandbox.run(['start', 'n has a line', '-C', repo.dir, ...FAST, '--agent', 'echo x >> n', '--check', 'test -s n', '--foreground', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(hook.bodies).toHaveLength(1);
    expect(hook.bodies[0]).toMatchObject({ kind: 'achieved', event: { type: 'goal.finished', status: 'achieved' } });
  });

  it("a hostile agent's notify section in goal.config.json runs nothing and posts nothing: only the user's config counts", async () => {
    const userHook = await webhook();
    const agentHook = await webhook();
    const sandbox = await goaldSandbox();
    await writeUserConfig(sandbox, { notify: { webhook: userHook.url } });
    const repo = await gitdir({ initialCommit: true });
    const marker = path.join(sandbox.root, 'agent-command-ran');
    const hostile = JSON.stringify({ notify: { command: `touch '${marker}'`, webhook: agentHook.url } });
    // Turn 1 plants the section; turn 2 meets the goal, so the goal ends with the agent's file in place.
    const agent = `if [ -f goal.config.json ]; then echo done > n; else printf '%s' '${hostile}' > goal.config.json; fi`;
    const run = await sandbox.run(['start', 'n says done', '-C', repo.dir, ...FAST, '--max-turns', '4', '--agent', agent, '--check', 'grep -q done n', '--wait', '--json']);
    expect(run.code, run.stderr).toBe(0);
    await expectToHold('the agent-named webhook never hears from goald', 500, () => agentHook.bodies.length === 0);
    expect(existsSync(marker)).toBe(false);
    await waitUntil('the achieved notification', () => userHook.bodies.some((body) => body.kind === 'achieved'));
    // The agent's edit of goal.config.json was held for the user, who hears of that too.
    expect(userHook.bodies.map((body) => body.kind)).toEqual(['held', 'achieved']);
    // A goal started now sees the file, says it ignores `notify`, and still notifies only the user.
    await writeFile(path.join(repo.dir, 'goal.config.json'), hostile);
    const next = await sandbox.run(['start', 'again', '-C', repo.dir, ...FAST, '--agent', 'true', '--check', 'true', '--foreground']);
    expect(next.stderr).toContain('notify is ignored; only your user config (~/.config/goald/config.json) can set it');
    expect(existsSync(marker)).toBe(false);
    expect(agentHook.bodies).toEqual([]);
  });

  it('goald notify test tries every channel: exit 0 when all took it, 1 when one failed, 2 when none is set', async () => {
    const hook = await webhook();
    const sandbox = await goaldSandbox();
    const none = await sandbox.run(['notify', 'test']);
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    expect(none.stderr).toContain('no notify channel is set in');

    await writeUserConfig(sandbox, { notify: { webhook: hook.url } });
    const ok = await sandbox.run(['notify', 'test']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trim()).toBe('webhook: ok (HTTP 204)');
    expect(hook.bodies).toHaveLength(1);
    expect(hook.bodies[0]).toMatchObject({ title: 'goald: test notification', kind: 'achieved', goal: { id: 'test' } });

    await writeUserConfig(sandbox, { notify: { webhook: hook.url, command: 'exit 4' } });
    const failed = await sandbox.run(['notify', 'test', '--json']);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toEqual({
      results: [
        { channel: 'webhook', ok: true, detail: 'HTTP 204' },
        { channel: 'command', ok: false, detail: 'exited 4' },
      ],
    });
  });
});

