// The sandbox settings across layers: the owner (flags, GOALD_SANDBOX, the user's file) decides; a
// workspace file (which the agent can edit) may only make the sandbox stricter.

import { describe, expect, it } from 'vitest';
import { mergeSandbox, sandboxLayerFromConfig, sandboxLayerFromEnv, type SandboxLayer } from '../../src/config/sandbox-settings.js';
import { GoaldError } from '../../src/errors.js';

const owner = (layer: Partial<SandboxLayer>): SandboxLayer => ({ owner: true, ...layer });
const workspace = (layer: Partial<SandboxLayer>): SandboxLayer => ({ owner: false, ...layer });

describe('mergeSandbox', () => {
  it.each([
    // [flags/env, workspace, user, expected mode, the workspace's mode ignored with a warning]
    [undefined, undefined, undefined, 'auto', false],
    [undefined, 'required', undefined, 'required', false],
    [undefined, 'off', undefined, 'auto', true],
    [undefined, 'auto', 'required', 'required', true],
    [undefined, 'off', 'required', 'required', true],
    [undefined, 'required', 'off', 'required', false],
    [undefined, undefined, 'off', 'off', false],
    ['off', 'required', 'required', 'off', false],
    ['required', 'off', 'off', 'required', false],
  ] as const)('flags %s, workspace %s, user %s → %s', (flag, file, user, expected, warns) => {
    const warnings: string[] = [];
    const merged = mergeSandbox(
      [flag === undefined ? undefined : owner({ mode: flag }), file === undefined ? undefined : workspace({ mode: file }), user === undefined ? undefined : owner({ mode: user })],
      warnings,
    );
    expect(merged.mode).toBe(expected);
    expect(warnings).toHaveLength(warns ? 1 : 0);
  });

  it('network: any layer saying false wins; a workspace cannot turn it back on', () => {
    expect(mergeSandbox([workspace({ network: false }), owner({ network: true })], []).network).toBe(false);
    expect(mergeSandbox([workspace({ network: true }), owner({ network: false })], []).network).toBe(false);
    expect(mergeSandbox([], []).network).toBe(true);
  });

  it('hidden paths add up across layers; writable, readable and bwrap come from owner layers only', () => {
    const merged = mergeSandbox(
      [workspace({ hidden: ['~/.a'], writable: ['~/w'], readable: ['~/r'], bwrap: '/tmp/evil' }), owner({ hidden: ['~/.b'], writable: ['~/mine'], bwrap: '/opt/bwrap' })],
      [],
    );
    expect(merged).toEqual({ mode: 'auto', network: true, hidden: ['~/.a', '~/.b'], writable: ['~/mine'], readable: [], bwrap: '/opt/bwrap' });
  });
});

describe('sandboxLayerFromConfig', () => {
  it("drops a workspace file's writable, readable and bwrap with a warning each, keeps its mode and hidden paths", () => {
    const warnings: string[] = [];
    const layer = sandboxLayerFromConfig({ mode: 'required', writable: ['~/x'], readable: ['~/.ssh'], bwrap: '/tmp/b', hidden: ['~/.y'] }, 'ws/goal.config.json', false, warnings);
    expect(layer).toEqual({ owner: false, mode: 'required', hidden: ['~/.y'] });
    expect(warnings).toEqual([
      'ws/goal.config.json: sandbox.writable is ignored; only your user config (~/.config/goald/config.json) can set it',
      'ws/goal.config.json: sandbox.readable is ignored; only your user config (~/.config/goald/config.json) can set it',
      'ws/goal.config.json: sandbox.bwrap is ignored; only your user config (~/.config/goald/config.json) can set it',
    ]);
  });

  it("keeps all of the user's file, and reads the string shorthand as the mode", () => {
    expect(sandboxLayerFromConfig({ writable: ['~/x'], bwrap: '/opt/b' }, 'user.json', true, [])).toEqual({ owner: true, writable: ['~/x'], bwrap: '/opt/b' });
    expect(sandboxLayerFromConfig('off', 'user.json', true, [])).toEqual({ owner: true, mode: 'off' });
  });
});

describe('sandboxLayerFromEnv', () => {
  it('reads GOALD_SANDBOX; empty is unset; anything else is a config error naming it', () => {
    expect(sandboxLayerFromEnv({ GOALD_SANDBOX: 'off' })).toEqual({ owner: true, mode: 'off' });
    expect(sandboxLayerFromEnv({ GOALD_SANDBOX: '' })).toBeUndefined();
    expect(() => sandboxLayerFromEnv({ GOALD_SANDBOX: 'no' })).toThrow(GoaldError);
    expect(() => sandboxLayerFromEnv({ GOALD_SANDBOX: 'no' })).toThrow(/^GOALD_SANDBOX: expected one of auto, required, off/);
  });
});
