// `goald sandbox check [-C dir] [--adapter name | --agent cmd] [--no-sandbox] [--json]`: whether bwrap works
// here, the mode a goal started in this workspace would run under, and what its turns and checks would see.
// Exits 2 when the mode is `required` and bwrap does not work (as `goald start` would), else 0.

import { homedir } from 'node:os';
import path from 'node:path';
import { z } from '../../zod.js';
import { resolveGoaldHome } from '../../../state/index.js';
import { resolveSandboxSettings } from '../../config/resolve-settings.js';
import { readStartFlags } from '../../config/start-options.js';
import { EXIT } from '../../errors.js';
import { cliOf, openGoalSandbox } from '../../sandbox/goal-sandbox.js';
import type { SandboxView } from '../../sandbox/types.js';
import { resolveWorkspace } from '../../workspace/find-workspace.js';
import type { CliIO } from '../io.js';

const optionsSchema = z.object({ dir: z.string().optional(), json: z.boolean().default(false) }).loose();

/** `goald sandbox check` — prints the report; resolves with the exit code. */
export async function runSandboxCheck(rawOptions: Record<string, unknown>, io: CliIO): Promise<number> {
  const options = optionsSchema.parse(rawOptions);
  const workspace = await resolveWorkspace(path.resolve(io.cwd, options.dir ?? '.'));
  const { sandbox: settings, agent, warnings } = await resolveSandboxSettings({ workspace: workspace.root, flags: readStartFlags(rawOptions), env: io.env });
  const home = resolveGoaldHome(io.env);
  const sandbox = await openGoalSandbox({ settings, workspace, agent, goaldHome: home, env: io.env }, { refuse: false, probeWhenOff: true, freshProbe: true });
  const refused = settings.mode === 'required' && sandbox.problem !== null;
  const report = {
    mode: settings.mode,
    use: sandbox.use,
    bwrap: { works: sandbox.problem === null, executable: sandbox.executable, ...(sandbox.problem ?? {}) },
    workspace: workspace.root,
    agent: { adapter: agent.adapter, profile: cliOf(agent) },
    turn: sandbox.viewForTurn(),
    checks: sandbox.viewForChecks(),
    warnings,
  };
  if (options.json) {
    io.out(JSON.stringify(report));
    return refused ? EXIT.usage : EXIT.ok;
  }
  const tilde = (file: string): string => {
    const userHome = io.env.HOME ?? homedir();
    return file === userHome || file.startsWith(`${userHome}/`) ? `~${file.slice(userHome.length)}` : file;
  };
  const lines = [
    `sandbox: ${settings.mode} → ${describeUse(sandbox.use, refused)}`,
    sandbox.problem === null ? `bwrap: ${sandbox.executable ?? ''} works` : `bwrap: ${sandbox.problem.problem}\n  fix: ${sandbox.problem.fix}`,
    `workspace: ${workspace.root}`,
    `agent: ${agent.adapter}${report.agent.profile === null || report.agent.profile === agent.adapter ? '' : ` (${report.agent.profile} profile)`}`,
    ...describeView('a turn', report.turn, tilde),
    '  (and per turn: its prompt file read-only, its hook state directory writable, under GOALD_HOME)',
    ...describeView('a check', report.checks, tilde),
    ...warnings.map((warning) => `warning: ${warning}`),
  ];
  io.out(lines.join('\n'));
  return refused ? EXIT.usage : EXIT.ok;
}

function describeUse(use: string, refused: boolean): string {
  if (refused) return 'refused: goals cannot start here until bwrap works';
  if (use === 'bwrap') return 'agent turns and checks run in bwrap';
  if (use === 'off') return 'agent turns and checks run unsandboxed (off)';
  return 'agent turns and checks run unsandboxed (bwrap does not work here)';
}

function describeView(who: string, view: SandboxView, tilde: (file: string) => string): string[] {
  const list = (title: string, files: readonly string[]): string[] => (files.length === 0 ? [] : [`  ${title}: ${files.map(tilde).join(', ')}`]);
  return [
    `${who} sees:`,
    ...list('writable', view.writable),
    ...list('read-only over hidden', view.readable),
    ...list('private', view.private),
    ...list('hidden', view.hidden),
    '  everything else: read-only',
    `  network: ${view.network ? "the host's" : 'none (loopback only)'}`,
    ...list('not present here (nothing mounted)', view.absent),
  ];
}
