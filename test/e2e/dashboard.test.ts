// End to end: `goald ui` against a real daemon, over real HTTP (raw node:http, so a forged Host is sent as
// is). Every guard rule refuses with a 403 and the error envelope, nothing done; the event stream replays
// from Last-Event-ID; the actions go through the socket's own routes and change the goal (seen by
// `goald status --json`); a hostile agent's and evaluator's words come back as JSON data.

import { existsSync, readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { actionHeaders, httpRequest, login, openDashboard, openEvents } from '../helpers/dashboard.js';
import { submitGoal } from '../helpers/daemon.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { createLoop, ONE_TURN } from '../helpers/loops.js';
import { goaldSandbox, parseJsonLines, type GoaldSandbox } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

export const HOSTILE = '<img src=x onerror=alert(1)><script>alert(2)</script>';

function expectForbidden(reply: { status: number; json: unknown; headers: Record<string, unknown> }, what: string): void {
  expect(reply.status, what).toBe(403);
  expect(reply.json, what).toMatchObject({ error: { code: 'forbidden' } });
  expect(Object.keys(reply.headers).filter((name) => name.startsWith('access-control-')), what).toEqual([]);
  expect(reply.headers['content-security-policy'], what).toContain("frame-ancestors 'none'");
  expect(reply.headers['x-content-type-options'], what).toBe('nosniff');
}

async function goalStatus(sandbox: GoaldSandbox, id: string): Promise<{ status: string; pauseReason?: string | null; reason?: string | null; settings: { limits: { maxTurns: number } } }> {
  const run = await sandbox.run(['status', id, '--json']);
  expect(run.code, run.stderr).toBe(0);
  const [reply] = parseJsonLines(run.stdout) as [{ goals: { status: string; settings: { limits: { maxTurns: number } } }[] }];
  const goal = reply.goals[0];
  if (goal === undefined) throw new Error('goald status --json showed no goal');
  return goal;
}

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

describe('goald ui: the link and the guard', () => {
  it('prints its link first and exits 0; every guard rule refuses with 403 over real HTTP', async () => {
    const sandbox = await goaldSandbox();
    const dashboard = await openDashboard(sandbox);
    const { port, host, origin } = dashboard;

    // Before the token: no cookie, no entry.
    expectForbidden(await httpRequest(port, 'GET', '/api/goals', { Host: host }), 'no cookie');
    expectForbidden(await httpRequest(port, 'GET', '/', { Host: host }), 'the page without a cookie');
    // A rebound DNS name (or another port's name) never reaches the token exchange, and does not burn it.
    expectForbidden(await httpRequest(port, 'GET', `/login?token=${dashboard.token}`, { Host: `evil.example:${port}` }), 'forged Host on login');
    const cookie = await login(dashboard);
    expectForbidden(await httpRequest(port, 'GET', `/login?token=${dashboard.token}`, { Host: host }), 'token reuse');
    expectForbidden(await httpRequest(port, 'GET', '/login?token=made-up', { Host: host }), 'a token never issued');
    expectForbidden(await httpRequest(port, 'GET', '/api/goals', { Host: 'evil.example', Cookie: cookie }), 'forged Host with a session');
    expectForbidden(await httpRequest(port, 'GET', '/api/goals', { Host: host, Cookie: `goald_ui_${port}=made-up` }), 'a made-up session');

    const list = await httpRequest(port, 'GET', '/api/goals', { Host: host, Cookie: cookie });
    expect(list.status).toBe(200);
    expect(list.json).toEqual({ goals: [], loops: [] });
    const page = await httpRequest(port, 'GET', '/', { Host: `localhost:${port}`, Cookie: cookie });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)?.[1] ?? '';
    const asset = await httpRequest(port, 'GET', script, { Host: host, Cookie: cookie });
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toContain('text/javascript');

    // The icon a browser asks for on its own is the page's, not a 404 in its console.
    const icon = await httpRequest(port, 'GET', '/favicon.ico', { Host: host, Cookie: cookie });
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toContain('image/svg+xml');

    // Only the page's own files are served: no path reaches the file system.
    for (const target of ['/../package.json', '/assets/../../package.json', '/assets/%2e%2e/%2e%2e/package.json', '/index.html/..%2f..%2fpackage.json', '/src/main.tsx']) {
      const probe = await httpRequest(port, 'GET', target, { Host: host, Cookie: cookie });
      expect(probe.status, target).toBe(404);
      expect(probe.json, target).toMatchObject({ error: { code: 'not-found' } });
    }

    // State-changing requests: each missing or wrong piece alone is refused.
    const good = actionHeaders(dashboard, cookie);
    const post = (headers: Record<string, string>, body = '{}') => httpRequest(port, 'POST', '/api/goals/nosuchgoal/pause', headers, body);
    const without = (name: string): Record<string, string> => Object.fromEntries(Object.entries(good).filter(([key]) => key !== name));
    expectForbidden(await post(without('Origin')), 'POST without Origin');
    expectForbidden(await post({ ...good, Origin: 'http://evil.example' }), 'POST from a foreign Origin');
    expectForbidden(await post({ ...good, Origin: `http://localhost:${port}` }), 'POST with the other loopback name as Origin');
    expectForbidden(await post({ ...good, 'Content-Type': 'text/plain' }), 'POST as text/plain');
    expectForbidden(await post({ ...good, 'Content-Type': 'application/x-www-form-urlencoded' }, 'now=true'), 'POST as a form');
    expectForbidden(await post(without('X-Goald-UI')), 'POST without X-Goald-UI');
    expectForbidden(await post(without('Cookie')), 'POST without a cookie');
    expectForbidden(await post({ ...good, Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` }), 'POST through a rebound name');
    expectForbidden(await httpRequest(port, 'OPTIONS', '/api/goals/nosuchgoal/pause', { Host: host, Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' }), 'CORS preflight');
    // With everything right, the request reaches the socket's route (which knows no such goal).
    const unknown = await post(good);
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: { code: 'not-found' } });

    // Another `goald ui`: the same server, a fresh token; a different --port is refused.
    const again = await openDashboard(sandbox);
    expect(again.port).toBe(port);
    expect(again.token).not.toBe(dashboard.token);
    const other = await sandbox.run(['ui', '--no-open', '--port', String(port === 65_535 ? port - 1 : port + 1)]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`the dashboard already runs on port ${port}`);
    const json = await sandbox.run(['ui', '--no-open', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout.split('\n')[0] ?? '')).toMatchObject({ type: 'ui.opened', url: expect.stringMatching(`^${origin}/login\\?token=`), browser: false });
    const badPort = await sandbox.run(['ui', '--port', 'http']);
    expect(badPort.code).toBe(2);

    // A loop is listed with its schedule, in the view `goald watch` shows (deriveLoopView).
    const looped = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const loop = await createLoop(sandbox, ['1h', 'nightly tidy', '-C', looped.dir, ...ONE_TURN, '--agent', 'true']);
    const withLoop = await httpRequest(port, 'GET', '/api/goals', { Host: host, Cookie: cookie });
    expect((withLoop.json as { loops: unknown[] }).loops).toEqual([
      expect.objectContaining({ id: loop.id, every: '1h', scheduleText: 'every 1h', statusText: 'scheduled', workspace: looped.dir, condition: 'nightly tidy', stopped: false, lastRun: null }),
    ]);

    // The dashboard stops with the daemon.
    expect((await sandbox.run(['daemon', 'stop'])).code).toBe(0);
    await waitUntil('the dashboard closed', () => httpRequest(port, 'GET', '/', { Host: host }).then(() => false, (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED'));
  });

  it('opens a browser only when one can be shown, and never fails without one', async () => {
    const sandbox = await goaldSandbox();
    const bin = path.join(sandbox.root, 'bin');
    const opened = path.join(sandbox.root, 'opened.txt');
    await import('node:fs/promises').then(({ mkdir }) => mkdir(bin));
    await writeFile(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > ${opened}\n`);
    await chmod(path.join(bin, 'xdg-open'), 0o755);
    const PATH = `${bin}:${process.env.PATH ?? ''}`;

    // --port: the port asked for (one the system just had free).
    const probe = createServer();
    const free = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as AddressInfo).port)));
    await new Promise((resolve) => probe.close(resolve));
    const headless = await sandbox.run(['ui', '--port', String(free)], { env: { PATH, DISPLAY: '', WAYLAND_DISPLAY: '' } });
    expect(headless.code, headless.stderr).toBe(0);
    expect(headless.stdout.split('\n')[0]).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${free}/login\\?token=`));
    expect(existsSync(opened)).toBe(false);

    const noOpen = await sandbox.run(['ui', '--no-open'], { env: { PATH, DISPLAY: ':99' } });
    expect(noOpen.code).toBe(0);
    expect(existsSync(opened)).toBe(false);

    const shown = await sandbox.run(['ui'], { env: { PATH, DISPLAY: ':99' } });
    expect(shown.code, shown.stderr).toBe(0);
    const link = shown.stdout.split('\n')[0] ?? '';
    expect(readFileSync(opened, 'utf8')).toBe(link);
    expect(shown.stdout).toContain('opened in your browser');

    // An opener that fails is "not opened", still exit 0.
    await writeFile(path.join(bin, 'xdg-open'), '#!/bin/sh\nexit 3\n');
    const failing = await sandbox.run(['ui'], { env: { PATH, DISPLAY: ':99' } });
    expect(failing.code).toBe(0);
    expect(failing.stdout).toContain('open it in a browser');
  });
});

describe('goald ui: a goal over the dashboard', () => {
  it('streams events with ids and replays after Last-Event-ID; actions change the goal; hostile words stay data', async () => {
    llm.reset();
    llm.openai.setDefault({ achieved: false, blocked: false, reason: `not yet ${HOSTILE}`, remaining: [`fix ${HOSTILE}`] });
    const workspace = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const sandbox = await goaldSandbox();
    const agent = path.join(sandbox.root, 'agent.sh');
    // Each turn: a file with a hostile name, output with markup, a short wait so the goal stays active.
    await writeFile(agent, `#!/bin/sh\necho "$GOALD_TURN" > '${HOSTILE.replaceAll('/', '_')}.txt'\necho '${HOSTILE}'\nsleep 0.3\n`);
    await chmod(agent, 0o755);
    // The auto-started daemon inherits these: the evaluator is the local fake server.
    Object.assign(sandbox.env, { OPENAI_API_KEY: 'sk-test-not-a-secret', OPENAI_BASE_URL: llm.openaiBaseURL });
    const { id } = await submitGoal(sandbox, [
      `fix it ${HOSTILE}`, '-C', workspace.dir, '--cooldown', '0', '--max-turns', '200', '--no-progress', '1000', '--evaluator', 'openai:judge-model',
      '--check', `echo '${HOSTILE}'`, '--agent', agent,
    ]);
    const dashboard = await openDashboard(sandbox);
    const cookie = await login(dashboard);

    const stream = await openEvents(dashboard, cookie, id);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toContain('text/event-stream');
    await stream.until('two finished turns and a view', (messages) =>
      messages.filter((message) => message.event === 'progress' && (message.data as { type: string }).type === 'turn.finished').length >= 2 &&
      messages.some((message) => message.event === 'view'),
    );
    stream.close();
    const progress = stream.messages.filter((message) => message.event === 'progress');
    expect(progress.map((message) => message.id)).toEqual(progress.map((_, index) => index + 1));
    const view = stream.messages.findLast((message) => message.event === 'view')?.data as { id: string; condition: string; evaluator: { reason: string | null } };
    expect(view.id).toBe(id);
    expect(view.condition).toBe(`fix it ${HOSTILE}`);

    // A reconnect after event 2 gets event 3 onwards, nothing before it.
    const lastSeen = 2;
    const replay = await openEvents(dashboard, cookie, id, lastSeen);
    await replay.until('the replay and the view', (messages) => messages.some((message) => message.event === 'view') && messages.some((message) => message.event === 'progress'));
    const replayed = replay.messages.filter((message) => message.event === 'progress');
    expect(replayed[0]?.id).toBe(lastSeen + 1);
    expect(replayed[0]?.data).toEqual(progress[lastSeen]?.data);

    // Refused requests on this live goal do nothing: a foreign Origin, a form post, a rebound name.
    const headers = actionHeaders(dashboard, cookie);
    for (const [what, refused] of [
      ['a foreign Origin', { ...headers, Origin: 'http://evil.example' }],
      ['a form post', { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' }],
      ['a rebound name', { ...headers, Host: `evil.example:${dashboard.port}`, Origin: `http://evil.example:${dashboard.port}` }],
    ] as const) {
      expectForbidden(await httpRequest(dashboard.port, 'POST', `/api/goals/${id}/stop`, refused, '{}'), what);
    }
    expect((await goalStatus(sandbox, id)).status).toBe('active');

    // Pause through the dashboard: `goald status --json` sees it, and so does the open stream.
    const paused = await httpRequest(dashboard.port, 'POST', `/api/goals/${id}/pause`, headers, JSON.stringify({ now: true }));
    expect(paused.status, paused.body).toBe(200);
    expect((await goalStatus(sandbox, id)).status).toBe('paused');
    await replay.until('goal.paused on the stream', (messages) => messages.some((message) => message.event === 'progress' && (message.data as { type: string }).type === 'goal.paused'));
    await replay.until('a paused view', (messages) => messages.some((message) => message.event === 'view' && (message.data as { status: string }).status === 'paused'));

    // The socket's own validation and rules answer: a bad body is the route's bad-request.
    const badBody = await httpRequest(dashboard.port, 'POST', `/api/goals/${id}/pause`, headers, JSON.stringify({ now: 'yes' }));
    expect(badBody.status).toBe(400);
    // Limits only: checks and the evaluator are not the dashboard's to change.
    const checkEdit = await httpRequest(dashboard.port, 'POST', `/api/goals/${id}/edit`, headers, JSON.stringify({ flags: { check: ['true'] } }));
    expectForbidden(checkEdit, 'edit of the checks');
    const applyConfig = await httpRequest(dashboard.port, 'POST', `/api/goals/${id}/edit`, headers, JSON.stringify({ applyConfig: true }));
    expectForbidden(applyConfig, 'applying a held goal.config.json edit');
    const edit = await httpRequest(dashboard.port, 'POST', `/api/goals/${id}/edit`, headers, JSON.stringify({ flags: { maxTurns: '150' } }));
    expect(edit.status, edit.body).toBe(200);
    expect((await goalStatus(sandbox, id)).settings.limits.maxTurns).toBe(150);
    const said = await httpRequest(dashboard.port, 'POST', `/api/goals/${id}/say`, headers, JSON.stringify({ text: 'look at README.md' }));
    expect(said.status, said.body).toBe(200);
    expect(said.json).toMatchObject({ pending: 1 });
    const resumed = await httpRequest(dashboard.port, 'POST', `/api/goals/${id}/resume`, headers, '{}');
    expect(resumed.status, resumed.body).toBe(200);
    expect((await goalStatus(sandbox, id)).status).toBe('active');

    // The goal page's data and a turn's detail: hostile words are plain JSON strings.
    const page = await httpRequest(dashboard.port, 'GET', `/api/goals/${id.slice(0, 8)}`, { Host: dashboard.host, Cookie: cookie });
    expect(page.status).toBe(200);
    const { turns } = page.json as { turns: { turn: number }[] };
    expect(turns.length).toBeGreaterThanOrEqual(2);
    const turn = await httpRequest(dashboard.port, 'GET', `/api/goals/${id}/turns/1`, { Host: dashboard.host, Cookie: cookie });
    expect(turn.status).toBe(200);
    expect(turn.headers['content-type']).toContain('application/json');
    const detail = turn.json as { files: { path: string }[]; checks: { outputTail: string }[]; evaluation: { reason: string }; prompt: string };
    expect(detail.files.map((file) => file.path)).toContain(`${HOSTILE.replaceAll('/', '_')}.txt`);
    expect(detail.checks[0]?.outputTail).toContain(HOSTILE);
    expect(detail.evaluation.reason).toBe(`not yet ${HOSTILE}`);
    expect(detail.prompt).toContain(`fix it ${HOSTILE}`);
    expect((await httpRequest(dashboard.port, 'GET', `/api/goals/${id}/turns/999`, { Host: dashboard.host, Cookie: cookie })).status).toBe(404);

    // Stop through the dashboard ends the goal.
    const stopped = await httpRequest(dashboard.port, 'POST', `/api/goals/${id}/stop`, headers, '{}');
    expect(stopped.status, stopped.body).toBe(200);
    await waitUntil('the goal stopped', async () => (await goalStatus(sandbox, id)).status === 'failed');
    await replay.until('goal.finished on the stream', (messages) => messages.some((message) => message.event === 'progress' && (message.data as { type: string }).type === 'goal.finished'));
    replay.close();
  });
});
