import { describe, expect, test } from 'vitest';
import { agentFactories, createAgent, isAgentName } from '../../src/agents/registry.js';
import type { AdapterName, AgentSpec } from '../../src/config/types.js';
import { GoaldError } from '../../src/errors.js';

function spec(adapter: AdapterName, command = 'my-agent {prompt}'): AgentSpec {
  return { adapter, command, args: [], session: 'fresh', model: null, prices: {} };
}

describe('createAgent', () => {
  test('creates the command adapter', async () => {
    const agent = await createAgent(spec('command'), {});
    expect(agent.name).toBe('command');
    expect(agent.model).toBeNull();
    expect(typeof agent.suspend).toBe('function');
  });

  test.each([
    ['gemini', 'gemini'],
    ['aider', 'aider'],
  ] as const)('creates the %s adapter with its executable, args and model', async (adapter, executable) => {
    const agent = await createAgent({ ...spec(adapter, executable), args: ['--verbose'], model: 'some-model' }, {});
    expect(agent.name).toBe(adapter);
    expect(agent.model).toBe('some-model');
    expect(typeof agent.suspend).toBe('function');
  });

  test.each(['gemini', 'aider'] as const)('%s refuses session resume', async (adapter) => {
    await expect(createAgent({ ...spec(adapter, adapter), session: 'resume' }, {})).rejects.toThrow(GoaldError);
  });

  test.each([
    ['claude-code', 'claude'],
    ['codex', 'codex'],
  ] as const)('creates the %s adapter with its model, for fresh and resumed sessions', async (adapter, executable) => {
    for (const session of ['fresh', 'resume'] as const) {
      const agent = await createAgent({ ...spec(adapter, executable), session, model: 'some-model' }, {});
      expect(agent.name).toBe(adapter);
      expect(agent.model).toBe('some-model');
      expect(typeof agent.suspend).toBe('function');
    }
  });

  test.each([
    ['claude-code', '--continue'],
    ['codex', '--last'],
  ] as const)('%s refuses %s in agent.args (sessions are resumed by id only)', async (adapter, flag) => {
    await expect(createAgent({ ...spec(adapter, ''), args: [flag] }, {})).rejects.toThrow(GoaldError);
  });

  test('an empty command is a config error', async () => {
    await expect(createAgent(spec('command', ''), {})).rejects.toThrow(GoaldError);
  });

  test('adapter names come from the registry', () => {
    expect(Object.keys(agentFactories)).toEqual(expect.arrayContaining(['command', 'claude-code', 'codex', 'gemini', 'aider']));
    expect(isAgentName('command')).toBe(true);
    expect(isAgentName('toString')).toBe(false);
  });
});
