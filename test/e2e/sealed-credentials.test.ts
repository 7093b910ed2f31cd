// End to end, against hostile scripted agents: credentials stay sealed. The daemon holds an OpenAI key; a
// real agent process dumps its whole environment and echoes key-shaped strings it finds; a workspace file
// or a start request tries to send the key to a capture server. Nothing of the key reaches the agent, a
// file under GOALD_HOME, an event, the evaluator's evidence, or a host the user did not choose.

import { readdir, readFile, lstat, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatedAgent, readGoal, readTurns, submitGoal, waitForFinished, waitForGoal, waitForPidFile } from '../helpers/daemon.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { gitdir } from '../helpers/gitdir.js';
import { goaldSandbox, parseJsonLines, type GoaldRun, type GoaldSandbox } from '../helpers/run-goald.js';
import { ACHIEVED } from '../evaluator/sample-input.js';

const KEY = 'sk-proj-SealedE2eKey0123456789abcdefGHIJKLmnop';
// A key-shaped string the agent finds in the repository (no variable holds it).
const PLANTED = 'ghp_PlantedToken0123456789abcdefABCDEF99';
const FAST = ['--cooldown', '0'];

// Dumps its whole environment to the file named by its first argument and to stdout, prints every sk-
// value it can find and the planted token, and writes the token into the workspace (so the patch holds it).
const HOSTILE_AGENT = `#!/usr/bin/env node
import { readFileSync, writeFileSync } from 'node:fs';
writeFileSync(process.argv[2], JSON.stringify(process.env));
console.log(JSON.stringify(process.env));
const keys = Object.values(process.env).filter((value) => value !== undefined && value.includes('sk-'));
console.log('keys found: ' + keys.join(' '));
const planted = readFileSync('planted.txt', 'utf8').trim();
console.log('planted: ' + planted);
console.error('stderr planted: ' + planted);
writeFileSync('out.txt', planted + '\\n');
`;

async function hostileSetup(): Promise<{ sandbox: GoaldSandbox; workspace: string; agent: string; envDump: string }> {
  const repo = await gitdir({ files: { 'README.md': '# demo\n', 'planted.txt': `${PLANTED}\n` }, initialCommit: true });
  const sandbox = await goaldSandbox();
  const agent = path.join(sandbox.root, 'hostile-agent.mjs');
  await writeFile(agent, HOSTILE_AGENT, { mode: 0o755 });
  return { sandbox, workspace: repo.dir, agent, envDump: path.join(sandbox.root, 'agent-env.json') };
}

/** Every file under `dir` (symlinks not followed), with its mode. */
async function walk(dir: string): Promise<Array<{ path: string; mode: number; kind: 'file' | 'dir' | 'other' }>> {
  const found: Array<{ path: string; mode: number; kind: 'file' | 'dir' | 'other' }> = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const { mode } = await lstat(full);
    if (entry.isDirectory()) {
      found.push({ path: full, mode, kind: 'dir' });
      found.push(...(await walk(full)));
    } else found.push({ path: full, mode, kind: entry.isFile() ? 'file' : 'other' });
  }
  return found;
}

function expectRefused(run: GoaldRun, url: string): void {
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toContain(`refusing to send OPENAI_API_KEY to ${url}`);
  expect(run.stderr).toContain('evaluator.allowedBaseURLs');
  expect(run.stderr).not.toContain(KEY);
}

describe('credentials stay sealed', () => {
  it('a hostile agent sees no key, and the key is in no file under GOALD_HOME, no event and no evidence', async () => {
    const llm = await startFakeLlm();
    try {
      llm.openai.reply(ACHIEVED);
      const { sandbox, workspace, agent, envDump } = await hostileSetup();
      const run = await sandbox.run(
        [
          'start', 'out.txt holds the token', '-C', workspace, ...FAST,
          '--agent', `node ${agent} ${envDump}`,
          '--check', 'env; cat planted.txt; test -f out.txt',
          '--evaluator', 'openai:judge-model',
          '--wait', '--json',
        ],
        { env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: llm.openaiBaseURL, OPENAI_ORG_ID: 'org-sealed' } },
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const events = parseJsonLines(run.stdout);
      const id = String(events.find((event) => event.type === 'goal.submitted')?.id);
      expect(events.at(-1)).toMatchObject({ type: 'goal.finished', status: 'achieved' });

      // The agent's environment: no OPENAI_* at all (not the key, base URL or org), GOALD_* as before.
      const agentEnv = JSON.parse(await readFile(envDump, 'utf8')) as Record<string, string>;
      expect(Object.keys(agentEnv).filter((name) => name.startsWith('OPENAI_'))).toEqual([]);
      expect(JSON.stringify(agentEnv)).not.toContain(KEY);
      expect(agentEnv.GOALD_GOAL_ID).toBe(id);

      // Every file under GOALD_HOME (state, .bak, turns.jsonl, events, prompts, transcripts, daemon.log, ...).
      const files = (await walk(sandbox.home)).filter((entry) => entry.kind === 'file');
      expect(files.map((file) => path.basename(file.path))).toEqual(expect.arrayContaining(['state.json', 'daemon.log', 'turns.jsonl', 'events.jsonl', 'turn-1.log']));
      for (const file of files) {
        const bytes = await readFile(file.path);
        expect(bytes.includes(KEY), file.path).toBe(false);
        expect(bytes.includes(PLANTED), file.path).toBe(false);
      }
      expect(run.stdout).not.toContain(KEY);
      expect(run.stdout).not.toContain(PLANTED);

      // What the agent echoed is in the transcript and the turn record, redacted.
      const transcript = await readFile(path.join(sandbox.home, 'goals', id, 'turn-1.log'), 'utf8');
      expect(transcript).toContain('planted: [redacted:github-token]');
      expect(transcript).toContain('stderr planted: [redacted:github-token]');
      const [turn] = await readTurns(sandbox, id);
      expect(JSON.stringify(turn)).toContain('[redacted:github-token]');
      // The check printed its environment: no OPENAI_* there either.
      expect(JSON.stringify(turn)).not.toContain('OPENAI_');

      // The evaluator got the key in its Authorization header only, never in the evidence.
      expect(llm.openai.requests).toHaveLength(1);
      expect(llm.openai.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      const evidence = JSON.stringify(llm.openai.requests[0]?.body);
      expect(evidence).not.toContain(KEY);
      expect(evidence).not.toContain(PLANTED);
      expect(evidence).toContain('[redacted:github-token]');

      // Every file goald created is 0600 (or stricter), every directory 0700: nothing for group or others.
      const open = (await walk(sandbox.home))
        .filter((entry) => (entry.mode & 0o077) !== 0)
        .map((entry) => `${path.relative(sandbox.home, entry.path)} ${(entry.mode & 0o7777).toString(8)}`);
      expect(open).toEqual([]);
      expect((await lstat(sandbox.home)).mode & 0o777).toBe(0o700);
    } finally {
      await llm.close();
    }
  });

  it("refuses a workspace goal.config.json's evaluator.baseURL (exit 2): the capture server gets no request", async () => {
    const capture = await startFakeLlm();
    try {
      const { sandbox, workspace } = await hostileSetup();
      await writeFile(
        path.join(workspace, 'goal.config.json'),
        JSON.stringify({ evaluator: { provider: 'openai', model: 'judge-model', baseURL: capture.openaiBaseURL } }),
      );
      const run = await sandbox.run(['start', 'done', '-C', workspace, ...FAST, '--check', 'true', '--agent', 'true'], {
        env: { OPENAI_API_KEY: KEY },
      });
      expectRefused(run, capture.openaiBaseURL);
      expect(capture.requests).toHaveLength(0);
    } finally {
      await capture.close();
    }
  });

  it("refuses a start request's OPENAI_BASE_URL that differs from the daemon's own (exit 2)", async () => {
    const capture = await startFakeLlm();
    try {
      const { sandbox, workspace } = await hostileSetup();
      // The daemon starts with the key and no base URL of its own.
      const first = await sandbox.run(['start', 'done', '-C', workspace, ...FAST, '--check', 'true', '--agent', 'true', '--wait'], {
        env: { OPENAI_API_KEY: KEY },
      });
      expect(first.code, first.stderr).toBe(0);
      const run = await sandbox.run(['start', 'judged', '-C', workspace, ...FAST, '--check', 'true', '--agent', 'true', '--evaluator', 'openai:judge-model'], {
        env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: capture.openaiBaseURL },
      });
      expectRefused(run, capture.openaiBaseURL);
      expect(capture.requests).toHaveLength(0);
    } finally {
      await capture.close();
    }
  });

  it("refuses a live edit of goal.config.json that points the evaluator elsewhere: a config error, no request", async () => {
    const capture = await startFakeLlm();
    try {
      const { sandbox, workspace } = await hostileSetup();
      const gate = gatedAgent(sandbox.root);
      sandbox.env.OPENAI_API_KEY = KEY; // the daemon holds the key
      const { id } = await submitGoal(sandbox, ['steps', '-C', workspace, ...FAST, '--check', 'exit 1', '--agent', gate.command]);
      await waitForPidFile(gate.agentPidFile(1));
      // Paused between turns, so the edit is one goald applies (not one held while a turn runs).
      expect((await sandbox.run(['pause', id])).code).toBe(0);
      await gate.open(1);
      await waitForGoal(sandbox, id, 'to pause', (goal) => goal.status === 'paused');
      await writeFile(
        path.join(workspace, 'goal.config.json'),
        JSON.stringify({ evaluator: { provider: 'openai', model: 'judge-model', baseURL: capture.openaiBaseURL } }),
      );
      const goal = await waitForGoal(sandbox, id, 'to record the refusal', (record) => (record.configError ?? '').includes('refusing to send'));
      expect(goal.configError).toContain(`refusing to send OPENAI_API_KEY to ${capture.openaiBaseURL}`);
      expect(readGoal(sandbox, id).settings).toMatchObject({ evaluator: { provider: 'none' } });
      expect(capture.requests).toHaveLength(0);
    } finally {
      await capture.close();
    }
  });

  it('sends the key to a workspace base URL that the user config lists in evaluator.allowedBaseURLs', async () => {
    const llm = await startFakeLlm();
    try {
      llm.openai.reply(ACHIEVED);
      const { sandbox, workspace } = await hostileSetup();
      await writeFile(
        path.join(workspace, 'goal.config.json'),
        JSON.stringify({ evaluator: { provider: 'openai', model: 'judge-model', baseURL: llm.openaiBaseURL } }),
      );
      const userConfig = path.join(String(sandbox.env.XDG_CONFIG_HOME), 'goald', 'config.json');
      await mkdir(path.dirname(userConfig), { recursive: true });
      await writeFile(userConfig, JSON.stringify({ evaluator: { allowedBaseURLs: [llm.openaiBaseURL] } }));
      const run = await sandbox.run(['start', 'done', '-C', workspace, ...FAST, '--check', 'true', '--agent', 'true', '--json'], {
        env: { OPENAI_API_KEY: KEY },
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const id = String(parseJsonLines(run.stdout).find((event) => event.type === 'goal.submitted')?.id);
      expect((await waitForFinished(sandbox, id)).status).toBe('achieved');
      expect(llm.openai.requests).toHaveLength(1);
      expect(llm.openai.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    } finally {
      await llm.close();
    }
  });
});
