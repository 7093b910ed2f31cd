// The dashboard's costs (`goald ui`): the shipped page's size on first load (every file in dist/ui,
// gzipped; target ≤ 100 kB) and an event's way from the daemon to a dashboard client (target ≤ 250 ms):
// a real daemon runs a goal whose agent sleeps, an SSE client holds its event stream open, and each sample
// is `pause --now` (then `resume`) sent over the socket until the client reads `goal.paused` (`goal.resumed`).
// The figure is an upper bound on emit → client: it includes the action's own round trip. When Debian's
// chromium is there, the same is measured to the open goal page (playwright-core; until the page has
// counted the event), as the user sees it.
// Run alone with `node dist/bench/dashboard.bench.js [--runs N]` after `npm run build`.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';

import { chromium } from 'playwright-core';

import { createDaemonClient, waitForDaemon } from '../src/daemon/client.js';
import { runGit } from '../src/workspace/git.js';
import { GOALD_BIN, median, numberFlag, round, runWhenMain } from './bench-runner.js';

export const ASSETS_TARGET_KB = 100;
export const EVENT_LATENCY_TARGET_MS = 250;

const ASSETS_DIR = path.resolve(path.dirname(GOALD_BIN), '..', 'ui');
const DAEMON_START_TIMEOUT_MS = 15_000;
const EVENT_TIMEOUT_MS = 10_000;
const CHROMIUM = process.env.GOALD_BENCH_CHROMIUM ?? '/usr/bin/chromium';

export interface DashboardBenchResult {
  files: number;
  /** Every file of dist/ui, gzipped one by one (kB = 1000 bytes). */
  assetsGzipKb: number;
  assetsRawKb: number;
  runs: number;
  /** Median time from sending an action to the SSE client reading its event. */
  eventMs: number;
  eventP95Ms: number;
  /** The same to the goal page in chromium; null without chromium. */
  pageEventMs: number | null;
  pageRuns: number;
}

/** The page's files and their gzipped size. */
async function measureAssets(): Promise<{ files: number; rawKb: number; gzipKb: number }> {
  const entries = await readdir(ASSETS_DIR, { recursive: true, withFileTypes: true });
  let raw = 0;
  let gzip = 0;
  let files = 0;
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const bytes = await readFile(path.join(entry.parentPath, entry.name));
    raw += bytes.length;
    gzip += gzipSync(bytes).length;
    files += 1;
  }
  if (files === 0) throw new Error(`${ASSETS_DIR} is empty: run npm run build`);
  return { files, rawKb: raw / 1000, gzipKb: gzip / 1000 };
}

/** An SSE client that resolves waiters when an event of a type arrives. */
function openStream(port: number, cookie: string, goalId: string): Promise<{ next(type: string): Promise<number>; close(): void }> {
  return new Promise((resolve, reject) => {
    const waiters: { type: string; resolve(at: number): void }[] = [];
    const req = request({ host: '127.0.0.1', port, path: `/api/goals/${goalId}/events`, headers: { Cookie: cookie, Accept: 'text/event-stream' }, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!block.includes('event: progress')) continue;
          const type = /"type":"([^"]+)"/.exec(block)?.[1];
          const index = waiters.findIndex((waiter) => waiter.type === type);
          if (index >= 0) waiters.splice(index, 1)[0]?.resolve(at);
        }
      });
      resolve({
        next: (type) =>
          new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`no ${type} event within ${EVENT_TIMEOUT_MS} ms`)), EVENT_TIMEOUT_MS);
            waiters.push({ type, resolve: (at) => (clearTimeout(timer), done(at)) });
          }),
        close: () => req.destroy(),
      });
    });
    req.end();
  });
}

/** GET /login with the token; the session cookie. */
function login(link: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(link, { agent: false }, (res) => {
      res.resume();
      const cookie = res.headers['set-cookie']?.[0]?.split(';')[0];
      if (res.statusCode !== 200 || cookie === undefined) reject(new Error(`login answered ${res.statusCode}`));
      else resolve(cookie);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Measures the page's size and the event latency against a real daemon. */
export async function benchDashboard(opts: { runs?: number } = {}): Promise<DashboardBenchResult> {
  const runs = opts.runs ?? 20;
  const assets = await measureAssets();
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gdu-')));
  const env: NodeJS.ProcessEnv = { ...process.env, GOALD_HOME: path.join(root, 'h'), HOME: root, XDG_CONFIG_HOME: path.join(root, 'config'), GOALD_SANDBOX: 'off' };
  delete env.GOALD_SOCKET;
  const socketPath = path.join(root, 'h', 'goald.sock');
  await runNode([GOALD_BIN, 'daemon'], env);
  await waitForDaemon(socketPath, { timeoutMs: DAEMON_START_TIMEOUT_MS });
  const client = createDaemonClient(socketPath);
  try {
    const repo = path.join(root, 'repo');
    await mkdir(repo);
    await runGit(['init', '--quiet', '--initial-branch=main'], { cwd: repo });
    await runGit(['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '--quiet', '--allow-empty', '-m', 'initial'], { cwd: repo });
    const { goal } = await client.startGoal({ condition: 'never', dir: repo, flags: { agent: 'sleep 600', check: ['exit 1'], evaluator: 'none', cooldown: '0' }, env: {}, queue: true });
    const { url } = await client.openDashboard();
    const cookie = await login(url);
    const port = Number(new URL(url).port);
    const stream = await openStream(port, cookie, goal.id);
    // The agent must be running for `pause --now` to stop it.
    for (let attempt = 0; (await client.getGoal(goal.id)).phase !== 'running'; attempt++) {
      if (attempt > 200) throw new Error('the goal never reached its first turn');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      for (const [type, act] of [
        ['goal.paused', () => client.pauseGoal(goal.id, true)],
        ['goal.resumed', () => client.resumeGoal(goal.id)],
      ] as const) {
        const received = stream.next(type);
        const sent = performance.now();
        await act();
        samples.push((await received) - sent);
      }
    }
    stream.close();
    const page = await measurePage(url.replace(/\/login\?.*$/, ''), client, goal.id, (await client.openDashboard()).url, runs);
    await client.stopGoal(goal.id);
    const sorted = [...samples].sort((a, b) => a - b);
    return {
      files: assets.files,
      assetsGzipKb: round(assets.gzipKb),
      assetsRawKb: round(assets.rawKb),
      runs: samples.length,
      eventMs: round(median(samples)),
      eventP95Ms: round(sorted[Math.floor(sorted.length * 0.95)] ?? 0),
      pageEventMs: page === null ? null : round(median(page)),
      pageRuns: page?.length ?? 0,
    };
  } finally {
    await client.stopDaemon().catch(() => undefined);
    await rm(root, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** Action sent → the goal page in chromium has counted the event; null when there is no chromium. */
async function measurePage(origin: string, client: ReturnType<typeof createDaemonClient>, goalId: string, link: string, runs: number): Promise<number[] | null> {
  if (!existsSync(CHROMIUM)) return null;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    await page.goto(link);
    await page.waitForURL(`${origin}/`);
    await page.goto(`${origin}/#/goal/${goalId}`);
    const section = page.locator('[data-testid="goal-page"][data-live="yes"]');
    await section.waitFor({ timeout: EVENT_TIMEOUT_MS });
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      for (const act of [() => client.pauseGoal(goalId, true), () => client.resumeGoal(goalId)]) {
        const seen = Number(await section.getAttribute('data-events'));
        const sent = performance.now();
        await act();
        await page.locator(`[data-testid="goal-page"][data-events="${seen + 1}"]`).waitFor({ timeout: EVENT_TIMEOUT_MS });
        samples.push(performance.now() - sent);
      }
    }
    return samples;
  } finally {
    await browser.close();
  }
}

function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`node ${args.join(' ')} exited ${code}`))));
  });
}

runWhenMain(import.meta.url, async (argv) => {
  const runs = numberFlag(argv, '--runs');
  process.stdout.write(`${JSON.stringify(await benchDashboard(runs === undefined ? {} : { runs }), null, 2)}\n`);
});
