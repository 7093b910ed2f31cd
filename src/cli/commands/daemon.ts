// `goald daemon [--foreground] | daemon stop | daemon status | daemon install`.

import { mkdir, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { resolveGoaldHome } from '../../../state/paths.js';
import { connectIfRunning, DAEMON_NODE_FLAGS, daemonSocketPath, ensureDaemon } from '../../daemon/auto-start.js';
import { EXIT } from '../../errors.js';
import { goaldEntryPath } from '../goald-entry.js';
import type { CliIO } from '../io.js';

const GOALD_BIN = goaldEntryPath();

/** `goald daemon`: run in the foreground (systemd/launchd), or make sure one runs in the background. */
export async function runDaemonCommand(options: { foreground?: boolean; logFile?: string }, io: CliIO): Promise<number> {
  if (options.foreground) {
    const [{ runDaemon }, { openDaemonLog }] = await Promise.all([import('../../daemon/lifecycle.js'), import('../../daemon/daemon-log.js')]);
    const log = options.logFile === undefined ? (line: string) => io.err(line) : openDaemonLog(path.resolve(io.cwd, options.logFile));
    await runDaemon({ env: io.env, log });
    return EXIT.ok;
  }
  const client = await ensureDaemon(io.env);
  const info = await client.ping();
  io.out(`goald daemon running (pid ${info.pid}) on ${client.socketPath}`);
  return EXIT.ok;
}

/** `goald daemon stop`. */
export async function runDaemonStop(io: CliIO): Promise<number> {
  const client = await connectIfRunning(io.env);
  if (!client) {
    io.out('no goald daemon is running');
    return EXIT.ok;
  }
  const info = await client.ping();
  await client.stopDaemon();
  io.out(`goald daemon (pid ${info.pid}) is stopping; active goals resume when it next starts`);
  return EXIT.ok;
}

/** `goald daemon status [--json]`. */
export async function runDaemonStatus(options: { json?: boolean }, io: CliIO): Promise<number> {
  const client = await connectIfRunning(io.env);
  const info = client ? await client.ping() : null;
  if (options.json) io.out(JSON.stringify({ running: info !== null, socket: daemonSocketPath(io.env), ...(info ?? {}) }));
  else if (info) io.out(`goald daemon ${info.version} running (pid ${info.pid}) since ${info.startedAt} · ${info.goalsRunning} goal(s) running · ${info.home}`);
  else io.out(`goald daemon is not running (socket ${daemonSocketPath(io.env)})`);
  return info ? EXIT.ok : EXIT.daemonUnreachable;
}

function systemdUnit(env: NodeJS.ProcessEnv): string {
  return [
    '[Unit]',
    'Description=goald goal-loop supervisor',
    '',
    '[Service]',
    `ExecStart=${process.execPath} ${DAEMON_NODE_FLAGS.join(' ')} ${GOALD_BIN} daemon --foreground`,
    `Environment=GOALD_HOME=${resolveGoaldHome(env)}`,
    '# API keys: put them in an EnvironmentFile readable only by you, e.g.',
    '# EnvironmentFile=%h/.config/goald/env',
    'Restart=on-failure',
    'KillMode=mixed',
    'TimeoutStopSec=30',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

function launchdPlist(env: NodeJS.ProcessEnv): string {
  const home = resolveGoaldHome(env);
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>dev.goald.daemon</string>
  <key>ProgramArguments</key>
  <array><string>${process.execPath}</string>${DAEMON_NODE_FLAGS.map((flag) => `<string>${flag}</string>`).join('')}<string>${GOALD_BIN}</string><string>daemon</string><string>--foreground</string></array>
  <key>EnvironmentVariables</key><dict><key>GOALD_HOME</key><string>${home}</string></dict>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
  <key>StandardErrorPath</key><string>${path.join(home, 'daemon.log')}</string>
</dict>
</plist>
`;
}

/** `goald daemon install`: writes a systemd user unit (Linux) or a launchd agent (macOS). */
export async function runDaemonInstall(io: CliIO): Promise<number> {
  const userHome = io.env.HOME ?? homedir();
  if (process.platform === 'darwin') {
    const target = path.join(userHome, 'Library', 'LaunchAgents', 'dev.goald.daemon.plist');
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, launchdPlist(io.env), { mode: 0o644 });
    io.out(`wrote ${target}\nenable it with: launchctl load -w ${target}`);
    return EXIT.ok;
  }
  const configHome = io.env.XDG_CONFIG_HOME ?? path.join(userHome, '.config');
  const target = path.join(configHome, 'systemd', 'user', 'goald.service');
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, systemdUnit(io.env), { mode: 0o644 });
  io.out(`wrote ${target}\nenable it with: systemctl --user daemon-reload && systemctl --user enable --now goald`);
  return EXIT.ok;
}
