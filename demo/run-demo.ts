// `npm run demo`: an offline run of the whole loop. Creates a throwaway git repository whose tests fail,
// then runs the real goald CLI in the foreground with a scripted demo agent and checks-only evaluation,
// so the goal goes from active to achieved with no API key and no network.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const goaldBin = path.join(repoRoot, 'dist', 'bundle', 'bin.js');
const demoAgent = path.join(repoRoot, 'demo', 'demo-agent.mjs');

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore' });
}

// A tiny project with two bugs and a test suite that catches both.
function createDemoProject(dir: string): void {
  writeFileSync(path.join(dir, 'math.mjs'), 'export const add = (a, b) => a - b;\nexport const multiply = (a, b) => a + b;\n');
  writeFileSync(
    path.join(dir, 'math.test.mjs'),
    [
      "import { test } from 'node:test';",
      "import assert from 'node:assert/strict';",
      "import { add, multiply } from './math.mjs';",
      "test('add', () => assert.equal(add(2, 3), 5));",
      "test('multiply', () => assert.equal(multiply(4, 5), 20));",
      '',
    ].join('\n'),
  );
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 'demo@goald.invalid');
  git(dir, 'config', 'user.name', 'goald demo');
  git(dir, 'config', 'commit.gpgsign', 'false');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'demo project with two bugs');
}

async function main(): Promise<number> {
  const work = mkdtempSync(path.join(tmpdir(), 'goald-demo-'));
  const project = path.join(work, 'project');
  const home = path.join(work, 'home');
  execFileSync('mkdir', ['-p', project]);
  createDemoProject(project);
  process.stdout.write(`demo project: ${project} (two bugs, tests failing)\n`);
  process.stdout.write(`$ goald start "all tests pass" --foreground --check "node --test" --evaluator none --agent "node ${demoAgent}"\n\n`);
  const env: NodeJS.ProcessEnv = { ...process.env, GOALD_HOME: home };
  delete env.OPENAI_API_KEY;
  delete env.ANTHROPIC_API_KEY;
  const child = spawn(
    process.execPath,
    [
      goaldBin,
      'start',
      'all tests pass',
      '--foreground',
      '-C',
      project,
      '--check',
      'node --test',
      '--evaluator',
      'none',
      '--agent',
      `node ${demoAgent}`,
      '--cooldown',
      '500ms',
    ],
    { stdio: 'inherit', env },
  );
  const code = await new Promise<number>((resolve) => child.on('exit', (exitCode) => resolve(exitCode ?? 70)));
  process.stdout.write(`\ngoald exited with ${code} (${code === 0 ? 'achieved' : 'not achieved'})\n`);
  if (process.env.GOALD_DEMO_KEEP) process.stdout.write(`kept the demo project and goald's state in ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
  return code;
}

process.exitCode = await main();
