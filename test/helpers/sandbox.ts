// A `required` bwrap sandbox for tests that run real processes in it: a workspace and a goald home in a
// temp dir (removed when the test ends), with HOME and the config directory inside it too.

import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { DEFAULT_SANDBOX } from '../../src/config/defaults.js';
import { openGoalSandbox, type GoalSandbox } from '../../src/sandbox/goal-sandbox.js';

export interface RequiredSandbox {
  workspace: string;
  home: string;
  env: NodeJS.ProcessEnv;
  sandbox: GoalSandbox;
}

export async function requiredSandbox(): Promise<RequiredSandbox> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'gsb-')));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  const workspace = path.join(root, 'ws');
  const home = path.join(root, 'home');
  await mkdir(workspace);
  await mkdir(home, { mode: 0o700 });
  const env = { ...process.env, HOME: root, XDG_CONFIG_HOME: path.join(root, 'config') };
  const sandbox = await openGoalSandbox({
    settings: { ...DEFAULT_SANDBOX, mode: 'required' },
    workspace: { root: workspace, gitDir: path.join(workspace, '.git'), commonDir: path.join(workspace, '.git') },
    agent: { adapter: 'command', command: 'sh' },
    goaldHome: home,
    env,
  });
  return { workspace, home, env, sandbox };
}
