import { homedir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { newGoalId, newLoopId, resolveGoaldHome, resolveSocketPath } from '../../state/paths.js';

describe('resolveGoaldHome', () => {
  const cases: [string, NodeJS.ProcessEnv, string][] = [
    ['GOALD_HOME wins', { GOALD_HOME: '/srv/goald', XDG_STATE_HOME: '/x', HOME: '/h' }, '/srv/goald'],
    ['XDG_STATE_HOME next', { XDG_STATE_HOME: '/x/state', HOME: '/h' }, '/x/state/goald'],
    ['then ~/.local/state', { HOME: '/h' }, '/h/.local/state/goald'],
    ['empty values are unset', { GOALD_HOME: '', XDG_STATE_HOME: '', HOME: '/h' }, '/h/.local/state/goald'],
    ['a relative XDG_STATE_HOME is ignored (XDG spec)', { XDG_STATE_HOME: 'rel', HOME: '/h' }, '/h/.local/state/goald'],
    ['without HOME, the OS home directory', {}, `${homedir()}/.local/state/goald`],
  ];
  it.each(cases)('%s', (_name, env, expected) => {
    expect(resolveGoaldHome(env)).toBe(expected);
  });

  it('makes a relative GOALD_HOME absolute', () => {
    expect(resolveGoaldHome({ GOALD_HOME: 'rel/home' })).toBe(`${process.cwd()}/rel/home`);
  });
});

describe('resolveSocketPath', () => {
  it('uses GOALD_SOCKET, else goald.sock in the home', () => {
    expect(resolveSocketPath({ GOALD_SOCKET: '/run/g.sock' }, '/h')).toBe('/run/g.sock');
    expect(resolveSocketPath({ GOALD_SOCKET: '' }, '/h')).toBe('/h/goald.sock');
    expect(resolveSocketPath({}, '/h')).toBe('/h/goald.sock');
  });
});

describe('newGoalId', () => {
  it('is short, lowercase, unique and sorts in creation order', () => {
    const ids = Array.from({ length: 5_000 }, () => newGoalId());
    for (const id of ids) expect(id).toMatch(/^g[0-9a-z]{11}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('loop ids share the scheme with their own prefix', () => {
    expect(newLoopId()).toMatch(/^l[0-9a-z]{11}$/);
  });
});
