// Where the pinned agent CLIs live (installed by scripts/install-agent-clis.sh into a cache folder outside
// the lockfile), and the isolated environments they run in: a temp HOME, a temp git workspace, a temp
// CODEX_HOME whose config.toml points Codex at the fake server. Nothing reaches the network or the user's
// own ~/.claude or ~/.codex.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { onTestFinished } from 'vitest';
import type { TurnInput } from '../../src/agents/types.js';

const run = promisify(execFile);

/** The cache folder of scripts/install-agent-clis.sh. */
const CLI_CACHE = process.env.GOALD_AGENT_CLI_CACHE ?? join(homedir(), '.cache', 'goald-agent-clis');
export const CLAUDE_BIN = join(CLI_CACHE, 'node_modules', '.bin', 'claude');
export const CODEX_BIN = join(CLI_CACHE, 'node_modules', '.bin', 'codex');

/** Why a CLI's tests are skipped, or null when the CLI is installed. */
export function missingCli(bin: string): string | null {
  return existsSync(bin) ? null : `skipped: ${bin} is not installed — run scripts/install-agent-clis.sh first`;
}

/** The built goald (npm run test:agents builds it first), for Claude Code's hook command. */
export const GOALD_BIN = fileURLToPath(new URL('../../dist/bundle/bin.js', import.meta.url));

/** A fresh temp directory (realpath: the CLIs report resolved paths), removed when the test finishes. */
export async function makeTempDir(prefix = 'goald-real-'): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A scratch directory outside the system's temporary directory, for a CLI home that must not live in it:
 * Codex refuses to create its helper aliases (codex-linux-sandbox) under the temporary directory, and with
 * a system bubblewrap installed its sandboxed commands then fail (`bwrap: execvp codex-linux-sandbox`).
 */
async function makeDirOutsideTmp(prefix: string): Promise<string> {
  const base = join(homedir(), '.cache', 'goald-test-homes');
  await mkdir(base, { recursive: true, mode: 0o700 });
  const dir = await realpath(await mkdtemp(join(base, prefix)));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A git work tree with one commit, as goald requires of a workspace. */
export async function makeWorkspace(): Promise<string> {
  const dir = await makeTempDir('goald-real-ws-');
  const git = (...args: string[]) => run('git', args, { cwd: dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
  await git('init', '-q', '-b', 'main');
  await git('config', 'user.email', 'test@example.com');
  await git('config', 'user.name', 'goald test');
  await git('config', 'commit.gpgsign', 'false');
  await writeFile(join(dir, 'README.md'), '# scratch\n');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'initial');
  return dir;
}

// Only what the CLIs need from the outer environment: no real API keys, no CLAUDECODE, no user config.
function baseEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    // Set on purpose: the adapters must remove it (a nested Claude Code refuses to run with it).
    CLAUDECODE: '1',
  };
}

/** Claude Code against the fake Anthropic server, with telemetry, updates and retries off. */
export async function claudeEnv(baseUrl: string, auth: { apiKey: string } | { authToken: string } = { apiKey: 'sk-ant-test-not-a-key' }): Promise<NodeJS.ProcessEnv> {
  const home = await makeTempDir('goald-real-home-');
  return {
    ...baseEnv(home),
    ANTHROPIC_BASE_URL: baseUrl,
    ...('apiKey' in auth ? { ANTHROPIC_API_KEY: auth.apiKey } : { ANTHROPIC_AUTH_TOKEN: auth.authToken }),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
}

/**
 * An unsigned JWT whose audience is `claude-gateway`: with it as ANTHROPIC_AUTH_TOKEN and a non-Anthropic
 * base URL, Claude Code treats the server as a gateway that enforces plan limits, and reads the unified
 * rate-limit headers of a 429 (`rate_limit_event`, "resets …") as it does for a subscription.
 */
export function gatewayToken(): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ aud: 'claude-gateway', sub: 'goald-test', exp: 4_102_444_800 })}.test`;
}

const CODEX_KEY_ENV = 'GOALD_FAKE_OPENAI_KEY';

/** Codex against the fake Responses server: a temp CODEX_HOME with a custom provider, no retries. */
export async function codexEnv(baseUrl: string, model: string): Promise<NodeJS.ProcessEnv> {
  const home = await makeDirOutsideTmp('goald-real-home-');
  const codexHome = join(home, '.codex');
  await mkdir(codexHome, { recursive: true });
  await writeFile(
    join(codexHome, 'config.toml'),
    [
      `model = ${JSON.stringify(model)}`,
      'model_provider = "goald-fake"',
      '',
      '[model_providers.goald-fake]',
      'name = "goald fake"',
      `base_url = ${JSON.stringify(baseUrl)}`,
      `env_key = "${CODEX_KEY_ENV}"`,
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
      '[features]',
      'plugins = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
    ].join('\n'),
  );
  return { ...baseEnv(home), CODEX_HOME: codexHome, [CODEX_KEY_ENV]: 'sk-fake-not-a-key' };
}

let codexModels: Promise<string[]> | null = null;

/** The model slugs the pinned Codex knows (`codex debug models`, offline: bundled metadata). */
export function listCodexModels(): Promise<string[]> {
  codexModels ??= (async () => {
    const home = await realpath(await mkdtemp(join(tmpdir(), 'goald-real-models-')));
    try {
      const { stdout } = await run(CODEX_BIN, ['debug', 'models'], {
        env: { ...baseEnv(home), CODEX_HOME: home },
        maxBuffer: 64 * 1024 * 1024,
      });
      const parsed = JSON.parse(stdout) as { models?: Array<{ slug?: unknown }> };
      return (parsed.models ?? []).map((model) => String(model.slug));
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  })();
  return codexModels;
}

/** A turn's input in `workspace`. */
export async function makeTurnInput(workspace: string, overrides: Partial<TurnInput> = {}): Promise<TurnInput> {
  const goalDir = await makeTempDir('goald-real-goal-');
  return {
    goalId: 'g-real',
    turn: 1,
    condition: 'hello.txt says hello',
    prompt: 'Create hello.txt containing the word hello.',
    workspace,
    promptPath: join(goalDir, 'turn-1.prompt.txt'),
    transcriptPath: join(goalDir, 'turn-1.log'),
    timeoutMs: 60_000,
    turnTokenLimit: 0,
    ...overrides,
  };
}
