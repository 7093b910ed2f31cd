import { describe, expect, it } from 'vitest';
import type { AgentSpec } from '../../src/config/types.js';
import { buildAgentEnv, buildCheckEnv, vendorsOfAgent } from '../../src/secrets/child-env.js';

const BASE: NodeJS.ProcessEnv = {
  PATH: '/usr/bin',
  HOME: '/home/me',
  GITHUB_TOKEN: 'ghp_x',
  OPENAI_API_KEY: 'sk-openai',
  OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
  OPENAI_ORG_ID: 'org-1',
  AZURE_OPENAI_API_KEY: 'az',
  ANTHROPIC_API_KEY: 'sk-ant',
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:2',
  CLAUDE_CODE_OAUTH_TOKEN: 'oauth',
  GEMINI_API_KEY: 'gem',
  GOOGLE_API_KEY: 'goog',
};

function agent(overrides: Partial<AgentSpec>): AgentSpec {
  return { adapter: 'command', command: './agent.sh', args: [], session: 'fresh', model: null, prices: {}, ...overrides };
}

function vendorNames(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env).filter((name) => !['PATH', 'HOME', 'GITHUB_TOKEN'].includes(name)).sort();
}

describe('buildAgentEnv', () => {
  it("never gives an agent or a check the cluster's Redis URL, even when agent.passEnv names it", () => {
    const withRedis = { ...BASE, GOALD_REDIS_URL: 'redis://:hunter2@10.0.0.5:6379/0' };
    for (const passEnv of [[], ['GOALD_REDIS_URL'], ['GOALD_*'], ['*']]) {
      expect(buildAgentEnv(withRedis, agent({ passEnv }))).not.toHaveProperty('GOALD_REDIS_URL');
      expect(buildAgentEnv(withRedis, agent({ passEnv }), withRedis)).not.toHaveProperty('GOALD_REDIS_URL');
      expect(buildCheckEnv(withRedis, passEnv)).not.toHaveProperty('GOALD_REDIS_URL');
    }
  });

  it('gives a command agent no vendor credentials, and keeps everything else', () => {
    const env = buildAgentEnv(BASE, agent({}));
    expect(vendorNames(env)).toEqual([]);
    expect(env).toMatchObject({ PATH: '/usr/bin', HOME: '/home/me', GITHUB_TOKEN: 'ghp_x' });
  });

  const own: Array<[Partial<AgentSpec>, string[]]> = [
    [{ adapter: 'claude-code', command: 'claude' }, ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_OAUTH_TOKEN']],
    [{ adapter: 'codex', command: 'codex' }, ['AZURE_OPENAI_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID']],
    [{ adapter: 'gemini', command: 'gemini' }, ['GEMINI_API_KEY', 'GOOGLE_API_KEY']],
    [{ command: 'claude -p {prompt}' }, ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_OAUTH_TOKEN']],
    [{ command: 'FOO=1 /usr/local/bin/codex exec {prompt}' }, ['AZURE_OPENAI_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID']],
    [{ adapter: 'aider', command: 'aider', model: 'sonnet' }, ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_OAUTH_TOKEN']],
    [{ adapter: 'aider', command: 'aider', args: ['--model', 'gpt-4.1'] }, ['AZURE_OPENAI_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID']],
  ];
  for (const [spec, kept] of own) {
    it(`keeps only its own vendor's variables for ${spec.adapter ?? 'command'} ${spec.command ?? ''} ${spec.model ?? spec.args?.join(' ') ?? ''}`, () => {
      expect(vendorNames(buildAgentEnv(BASE, agent(spec)))).toEqual(kept);
    });
  }

  it('keeps every vendor for aider without a model (it picks one by the keys it finds)', () => {
    expect(vendorsOfAgent(agent({ adapter: 'aider', command: 'aider' }))).toEqual(['openai', 'anthropic', 'google']);
  });

  it('keeps what agent.passEnv names, by name or glob', () => {
    const env = buildAgentEnv(BASE, agent({ passEnv: ['OPENAI_API_KEY', 'GEMINI_*'] }));
    expect(vendorNames(env)).toEqual(['GEMINI_API_KEY', 'OPENAI_API_KEY']);
  });
});

describe('buildAgentEnv with the daemon\'s own environment', () => {
  it("takes its vendor's variables from the daemon's env, never a request's base URL", () => {
    const request = { ...BASE, ANTHROPIC_BASE_URL: 'http://capture.example', GOALD_MAX_TURNS: '3' };
    const env = buildAgentEnv(request, agent({ adapter: 'claude-code', command: 'claude' }), BASE);
    expect(env.ANTHROPIC_BASE_URL).toBe('http://127.0.0.1:2');
    expect(env.ANTHROPIC_API_KEY).toBe('sk-ant');
    expect(env.GOALD_MAX_TURNS).toBe('3');
    const { ANTHROPIC_BASE_URL: _dropped, ...daemonWithout } = BASE;
    expect(buildAgentEnv(request, agent({ adapter: 'claude-code', command: 'claude' }), daemonWithout).ANTHROPIC_BASE_URL).toBeUndefined();
  });
});

describe('buildCheckEnv', () => {
  it('gives checks no vendor credentials unless passEnv names them', () => {
    expect(vendorNames(buildCheckEnv(BASE))).toEqual([]);
    expect(vendorNames(buildCheckEnv(BASE, ['ANTHROPIC_API_KEY']))).toEqual(['ANTHROPIC_API_KEY']);
  });
});
