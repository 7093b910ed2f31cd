// Resolving the `sandbox` settings across layers. The sandbox keeps the judge out of the agent's reach, so
// a workspace's goal.config.json (which the agent can edit) may only make it stricter: a stricter mode, the
// network off, more hidden paths. Loosening — `off`, paths a turn may write or read, another bwrap — is the
// owner's: flags, GOALD_SANDBOX, or the user's own config file.

import { GoaldError } from '../errors.js';
import { DEFAULT_SANDBOX } from './defaults.js';
import type { ConfigSandbox } from './sandbox-schema.js';
import type { SandboxMode, SandboxSettings } from './types.js';

/** One layer's sandbox settings; `owner` is false for a workspace (or config-declared loop) file. */
export interface SandboxLayer extends Partial<SandboxSettings> {
  owner: boolean;
}

const STRICTNESS: Readonly<Record<SandboxMode, number>> = { off: 0, auto: 1, required: 2 };
const MODES: readonly SandboxMode[] = ['auto', 'required', 'off'];

function isSandboxMode(text: string): text is SandboxMode {
  return Object.hasOwn(STRICTNESS, text);
}

/** A config file's `sandbox`; the settings only the owner may set are dropped, with a warning, from a workspace file. */
export function sandboxLayerFromConfig(sandbox: ConfigSandbox, path: string, owner: boolean, warnings: string[]): SandboxLayer {
  if (typeof sandbox === 'string') return { owner, mode: sandbox };
  const layer: SandboxLayer = { owner };
  if (sandbox.mode !== undefined) layer.mode = sandbox.mode;
  if (sandbox.network !== undefined) layer.network = sandbox.network;
  if (sandbox.hidden !== undefined) layer.hidden = [...sandbox.hidden];
  for (const key of ['writable', 'readable', 'bwrap'] as const) {
    const value = sandbox[key];
    if (value === undefined) continue;
    if (!owner) {
      warnings.push(`${path}: sandbox.${key} is ignored; only your user config (~/.config/goald/config.json) can set it`);
      continue;
    }
    if (key === 'bwrap') layer.bwrap = sandbox.bwrap ?? null;
    else layer[key] = [...(sandbox[key] ?? [])];
  }
  return layer;
}

/** GOALD_SANDBOX (`auto`, `required` or `off`); undefined when unset or empty. */
export function sandboxLayerFromEnv(env: NodeJS.ProcessEnv): SandboxLayer | undefined {
  const text = env.GOALD_SANDBOX?.trim() ?? '';
  if (text === '') return undefined;
  if (!isSandboxMode(text)) {
    throw new GoaldError('config', `GOALD_SANDBOX: expected one of ${MODES.join(', ')}, got "${text}"`, 'unset it, or set it to auto, required or off');
  }
  return { owner: true, mode: text };
}

/**
 * Merges the layers, highest precedence first (flags, environment, workspace/loop files, user file). A
 * workspace layer's mode counts only when no flag or variable chose one and it is stricter than the
 * user's (or the default); its `network: true` cannot undo the user's `false`.
 */
export function mergeSandbox(layers: ReadonlyArray<SandboxLayer | undefined>, warnings: string[]): SandboxSettings {
  const present = layers.filter((layer): layer is SandboxLayer => layer !== undefined);
  const firstOwner = <K extends keyof SandboxSettings>(key: K): SandboxLayer[K] =>
    present.find((layer) => layer.owner && layer[key] !== undefined)?.[key];
  const ownerMode = firstOwner('mode') ?? DEFAULT_SANDBOX.mode;
  // Flags and GOALD_SANDBOX come before any file in `layers`: an owner layer before the first file layer.
  const firstFile = present.findIndex((layer) => !layer.owner);
  const chosenAboveFiles = present.slice(0, firstFile === -1 ? present.length : firstFile).some((layer) => layer.mode !== undefined);
  let mode = ownerMode;
  if (!chosenAboveFiles) {
    for (const layer of present.filter((candidate) => !candidate.owner && candidate.mode !== undefined)) {
      const wanted = layer.mode ?? ownerMode;
      if (STRICTNESS[wanted] > STRICTNESS[mode]) mode = wanted;
      else if (STRICTNESS[wanted] < STRICTNESS[mode]) warnings.push(`the workspace's sandbox "${wanted}" is ignored: a workspace file can only make the sandbox stricter than "${mode}"`);
    }
  }
  const ownerNetwork = firstOwner('network') ?? DEFAULT_SANDBOX.network;
  const network = ownerNetwork && present.every((layer) => layer.network !== false);
  return {
    mode,
    network,
    writable: [...(firstOwner('writable') ?? [])],
    readable: [...(firstOwner('readable') ?? [])],
    hidden: [...new Set(present.flatMap((layer) => layer.hidden ?? []))],
    bwrap: firstOwner('bwrap') ?? null,
  };
}
