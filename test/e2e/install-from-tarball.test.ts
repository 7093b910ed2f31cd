// The package as users install it: `npm pack`, then `npm install -g` of the tarball into a temporary
// prefix, then the installed `goald` runs --version and a one-turn goal (and one more, from the start-up
// snapshot the first had built, through npm's link to bin/goald). The tarball must carry the whole
// program (the bundle needs no dependency installed), its schema and the dashboard's page. Uses the bundle `npm test` built
// (packed with --ignore-scripts; a real `npm pack` rebuilds it first through the prepack script).

import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { expect, onTestFinished, test } from 'vitest';

import { GOALD_VERSION } from '../../src/version.js';
import { httpRequest, login, openDashboard } from '../helpers/dashboard.js';
import { runProcess, type ProcessRun } from '../helpers/processes.js';
import { goaldBin, repoRoot } from '../helpers/run-goald.js';
import { waitUntil } from '../helpers/wait.js';

// The npm that runs this test (npm test, npx vitest), else the one installed beside this node.
const npmCli = process.env.npm_execpath?.endsWith('npm-cli.js') === true ? process.env.npm_execpath : path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');

test('npm pack, npm install -g of the tarball, and the installed goald runs a goal', { timeout: 120_000 }, async () => {
  if (!existsSync(goaldBin)) throw new Error(`${goaldBin} is missing: run \`npm run build\` first (npm test does)`);
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gdi-')));
  // maxRetries: the installed daemon, stopped at the end, may still write its code cache as it exits.
  onTestFinished(() => rm(root, { recursive: true, force: true, maxRetries: 5 }));
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
  for (const name of Object.keys(env)) if (name.startsWith('GOALD_') || name.startsWith('GIT_') || name.startsWith('npm_config_prefix')) delete env[name];
  const npm = (args: string[], cwd: string): Promise<ProcessRun> => runProcess(process.execPath, [npmCli, ...args], { cwd, env });

  const packed = await npm(['pack', '--ignore-scripts', '--pack-destination', root], repoRoot);
  expect(packed.code, packed.stderr).toBe(0);
  const tarball = (await readdir(root)).find((name) => name.endsWith('.tgz'));
  expect(tarball).toMatch(/^goald-\d+\.\d+\.\d+\.tgz$/);

  // --offline: installing the tarball must need nothing from a registry.
  const prefix = path.join(root, 'prefix');
  const installed = await npm(['install', '--global', '--offline', '--prefix', prefix, path.join(root, tarball ?? '')], root);
  expect(installed.code, installed.stderr).toBe(0);
  const installDir = path.join(prefix, 'lib', 'node_modules', 'goald');
  expect(existsSync(path.join(installDir, 'schema', 'goal.config.schema.json'))).toBe(true);
  expect(existsSync(path.join(installDir, 'node_modules'))).toBe(false);

  const goald = path.join(prefix, 'bin', 'goald');
  const version = await runProcess(goald, ['--version'], { cwd: root, env });
  expect(version).toEqual({ code: 0, stdout: `${GOALD_VERSION}\n`, stderr: '' });

  const repo = path.join(root, 'repo');
  await mkdir(repo);
  for (const args of [['init', '--quiet'], ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '--quiet', '--allow-empty', '-m', 'initial']]) {
    expect((await runProcess('git', args, { cwd: repo, env })).code).toBe(0);
  }
  const goalEnv = { ...env, GOALD_HOME: path.join(root, 'h'), XDG_CONFIG_HOME: path.join(root, 'config'), NODE_OPTIONS: '' };
  const goal = await runProcess(goald, ['start', 'f.txt exists', '--foreground', '--agent', 'touch f.txt', '--check', 'test -f f.txt', '--evaluator', 'none', '--cooldown', '0'], { cwd: repo, env: goalEnv });
  expect(goal.code, goal.stderr).toBe(0);
  expect(goal.stdout).toContain('Goal Achieved');
  // That start had the installed goald's start-up snapshot built at its end; the next starts from it.
  const startup = path.join(goalEnv.GOALD_HOME, 'cache', 'startup');
  await waitUntil('the start-up snapshot to be built', () => readdirSync(startup).some((dir) => existsSync(path.join(startup, dir, 'identity'))), 60_000);
  await writeFile(path.join(repo, '.git', 'info', 'exclude'), 'started-by\n');
  const fromSnapshot = await runProcess(goald, ['start', 'started-by exists', '--foreground', '--no-sandbox', '--agent', "tr '\\0' ' ' < /proc/$PPID/cmdline > started-by", '--check', 'test -f started-by', '--evaluator', 'none', '--cooldown', '0'], { cwd: repo, env: goalEnv });
  expect(fromSnapshot.code, fromSnapshot.stderr).toBe(0);
  expect(await readFile(path.join(repo, 'started-by'), 'utf8')).toContain('--snapshot-blob');

  // The dashboard ships prebuilt in the package: the installed daemon serves its page and the page's script.
  const installedGoald = { run: (args: string[]) => runProcess(goald, args, { cwd: root, env: goalEnv }) };
  const dashboard = await openDashboard(installedGoald);
  onTestFinished(async () => {
    await installedGoald.run(['daemon', 'stop']);
  });
  const cookie = await login(dashboard);
  const page = await httpRequest(dashboard.port, 'GET', '/', { Host: dashboard.host, Cookie: cookie });
  expect(page.status).toBe(200);
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)?.[1];
  expect(script, page.body).toBeDefined();
  const asset = await httpRequest(dashboard.port, 'GET', script ?? '', { Host: dashboard.host, Cookie: cookie });
  expect(asset.status).toBe(200);
  // And goald watch's terminal view (its own ES module bundle beside the rest).
  expect(existsSync(path.join(installDir, 'dist', 'bundle', 'watch-ui.mjs'))).toBe(true);
});
