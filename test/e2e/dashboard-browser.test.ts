// The dashboard in a real browser: Debian's chromium driven by playwright-core against a real daemon and
// a real goal whose agent, checks and evaluator all speak markup (`<img onerror>`, `<script>`). The list
// shows the goal, the goal page's charts grow as turns land, a turn opens its detail, the pause button
// pauses the goal (seen in the page and by `goald status --json`), and every hostile word shows as literal
// text: no element is created from it and no dialog fires. Screenshots are kept in dist/test-artifacts/.
// CI installs chromium (.ci/run); without it the test is skipped with a message saying so.

import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openDashboard } from '../helpers/dashboard.js';
import { createLoop, ONE_TURN } from '../helpers/loops.js';
import { submitGoal } from '../helpers/daemon.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, repoRoot } from '../helpers/run-goald.js';

const CHROMIUM = process.env.GOALD_TEST_CHROMIUM ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const ARTIFACTS = path.join(repoRoot, 'dist', 'test-artifacts');
const HOSTILE = '<img src=x onerror=alert(1)><script>alert(2)</script>';
const HOSTILE_FILE = `${HOSTILE.replaceAll('/', '_')}.txt`;

if (!HAVE_CHROMIUM) {
  process.stderr.write(`dashboard browser test skipped: no chromium at ${CHROMIUM} (apt-get install chromium; .ci/run does)\n`);
}

let llm: FakeLlm;
let browser: Browser | null = null;
beforeAll(async () => {
  llm = await startFakeLlm();
  if (HAVE_CHROMIUM) {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // As root chromium needs --no-sandbox; the rest keep it off this machine's closed network.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await llm.close();
});

describe.skipIf(!HAVE_CHROMIUM)('goald ui in chromium', () => {
  it('lists the goal, charts its turns live, opens a turn, pauses it; hostile words stay text', async () => {
    if (browser === null) throw new Error('chromium did not start');
    llm.reset();
    llm.openai.setDefault({ achieved: false, blocked: false, reason: `not yet ${HOSTILE}`, remaining: [`fix ${HOSTILE}`] });
    const workspace = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const sandbox = await goaldSandbox();
    Object.assign(sandbox.env, { OPENAI_API_KEY: 'sk-test-not-a-secret', OPENAI_BASE_URL: llm.openaiBaseURL });
    const agent = path.join(sandbox.root, 'agent.sh');
    await writeFile(agent, `#!/bin/sh\necho "$GOALD_TURN" > '${HOSTILE_FILE}'\necho '${HOSTILE}' >&2\nsleep 0.4\n`);
    await chmod(agent, 0o755);
    const { id } = await submitGoal(sandbox, [
      `fix it ${HOSTILE}`, '-C', workspace.dir, '--cooldown', '0', '--max-turns', '200', '--no-progress', '1000', '--token-budget', '1000000',
      '--evaluator', 'openai:judge-model', '--check', `echo '${HOSTILE}'`, '--agent', agent,
    ]);
    const dashboard = await openDashboard(sandbox);

    const context = await browser.newContext({ viewport: { width: 1200, height: 1400 } });
    const page = await context.newPage();
    const dialogs: string[] = [];
    const pageErrors: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`${message.text()} (${message.location().url})`);
    });

    await page.goto(dashboard.link);
    const row = page.locator(`[data-testid="goal-row"][data-goal="${id}"]`);
    await row.waitFor({ timeout: 15_000 });
    expect(new URL(page.url()).pathname).toBe('/'); // the token left the address bar
    expect(await row.locator('.condition').textContent()).toBe(`fix it ${HOSTILE}`);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-list.png') });
    // The filters: no achieved goal yet; the active one under `active` and under its workspace.
    await page.getByTestId('status-filter').selectOption('achieved');
    await page.getByTestId('no-goals').waitFor();
    await page.getByTestId('status-filter').selectOption('active');
    await row.waitFor();
    await page.getByTestId('workspace-filter').selectOption(workspace.dir);
    await row.waitFor();

    await row.locator('a').click();
    const goalPage = page.locator(`[data-testid="goal-page"][data-goal="${id}"]`);
    await goalPage.waitFor();
    expect(await page.getByTestId('goal-condition').textContent()).toBe(`fix it ${HOSTILE}`);
    // The charts grow as turns land, through the event stream (no reload).
    const tokens = page.getByTestId('chart-tokens');
    const before = Number(await tokens.getAttribute('data-points'));
    // (Read through the locator: the page's CSP refuses the eval a string waitForFunction needs.)
    await expect.poll(async () => Number(await tokens.getAttribute('data-points')), { timeout: 20_000 }).toBeGreaterThanOrEqual(before + 2);
    expect(await page.locator('[data-testid="chart-tokens"] canvas').count()).toBe(1);
    await page.getByTestId('evaluator-reason').filter({ hasText: HOSTILE }).waitFor();
    expect(await page.getByTestId('evaluator-reason').textContent()).toBe(`not yet ${HOSTILE}`);

    // A turn's detail: diff stat, check output tail, verdict, prompt; all as text.
    await page.locator('[data-testid="turn-row"][data-turn="1"]').click();
    const detail = page.getByTestId('turn-detail');
    await detail.waitFor();
    expect(await detail.getByTestId('check-output').first().textContent()).toContain(HOSTILE);
    expect(await detail.getByTestId('turn-verdict').textContent()).toBe(`not met: not yet ${HOSTILE}`);
    expect(await detail.getByTestId('turn-prompt').textContent()).toContain(`fix it ${HOSTILE}`);
    expect(await detail.textContent()).toContain(HOSTILE_FILE);

    // The timeline's filters: every agent turn changed a file and passed its check; turn 0 changed nothing.
    await page.getByTestId('turn-filter').selectOption('no change');
    const shownTurns = async (): Promise<(string | null)[]> => Promise.all((await page.getByTestId('turn-row').all()).map((turnRow) => turnRow.getAttribute('data-turn')));
    await expect.poll(shownTurns, { timeout: 5_000 }).toEqual(['0']);
    await page.getByTestId('turn-filter').selectOption('failed checks');
    await expect.poll(() => page.getByTestId('turn-row').count(), { timeout: 5_000 }).toBe(0);
    await page.getByTestId('turn-filter').selectOption('all');
    await expect.poll(() => page.getByTestId('turn-row').count(), { timeout: 5_000 }).toBeGreaterThan(2);

    // Pause from the page: the goal pauses (the daemon says so) and the page shows it.
    await page.getByTestId('action-pause-now').click();
    await page.locator(`[data-testid="goal-page"][data-status="paused"]`).waitFor({ timeout: 15_000 });
    const status = await sandbox.run(['status', id, '--json']);
    expect((parseJsonLines(status.stdout)[0] as { goals: { status: string }[] }).goals[0]?.status).toBe('paused');
    expect(await page.getByTestId('goal-status').textContent()).toContain('paused');
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-goal.png'), fullPage: true });

    // Guidance, then resume; stop asks for a second click.
    await page.getByTestId('guidance-text').fill(`mind ${HOSTILE}`);
    await page.getByTestId('action-say').click();
    await page.getByTestId('action-message').filter({ hasText: 'guidance queued' }).waitFor();
    await page.getByTestId('action-resume').click();
    await page.locator(`[data-testid="goal-page"][data-status="active"]`).waitFor({ timeout: 15_000 });
    await page.getByTestId('action-stop').click();
    expect(await page.getByTestId('action-stop').textContent()).toBe('stop: click again');
    expect((parseJsonLines((await sandbox.run(['status', id, '--json'])).stdout)[0] as { goals: { status: string }[] }).goals[0]?.status).toBe('active');
    await page.getByTestId('action-stop').click();
    await page.locator(`[data-testid="goal-page"][data-status="failed"]`).waitFor({ timeout: 15_000 });
    await page.getByTestId('goal-stop').waitFor();

    // Nothing the goal said became markup or ran.
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('[onerror]').count()).toBe(0);
    const scripts = page.locator('script');
    expect(await scripts.count()).toBe(1);
    expect(await scripts.first().getAttribute('src')).toMatch(/^\/assets\/index-[\w-]+\.js$/);
    expect(dialogs).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  }, 90_000);

  it('with no goals yet, says so and how to start one', async () => {
    if (browser === null) throw new Error('chromium did not start');
    const sandbox = await goaldSandbox();
    const dashboard = await openDashboard(sandbox);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(dashboard.link);
    const empty = page.getByTestId('no-goals');
    await empty.waitFor({ timeout: 15_000 });
    expect(await empty.textContent()).toContain('No goals yet: start one with `goald start "<condition>"`');
    expect(await page.locator('[data-testid="goal-row"]').count()).toBe(0);

    // A loop shows up (the list refreshes) with the schedule and state `goald watch` shows for it.
    const looped = await gitdir({ files: { 'README.md': '# demo\n' }, initialCommit: true });
    const loop = await createLoop(sandbox, ['1h', 'nightly tidy', '-C', looped.dir, ...ONE_TURN, '--agent', 'true']);
    const row = page.locator(`[data-testid="loop-row"][data-loop="${loop.id}"]`);
    await row.waitFor({ timeout: 15_000 });
    expect(await row.locator('td').allTextContents()).toEqual([loop.id, 'every 1h', '↻ scheduled', looped.dir, expect.stringMatching(/^\d{4}-\d\d-\d\dT/), '0', '—']);
    await context.close();
  }, 60_000);
});
