// A start the launcher ran without a snapshot because none was current (bin/startup-snapshot.sh exports
// GOALD_STARTUP_SNAPSHOT=missing): it asks for one, at its exit, so that the build takes nothing from the
// goal's own start or turns. The request is a detached `goald startup-snapshot` (build-snapshot.ts).

import { SNAPSHOT_WANTED_ENV, SNAPSHOT_WANTED_VALUE } from './snapshot-files.js';

/** When the launcher asks for a snapshot: takes its note out of the environment (no agent sees it), builds at exit. */
export function requestSnapshotIfWanted(bundleDir: string, env: NodeJS.ProcessEnv = process.env): void {
  if (env[SNAPSHOT_WANTED_ENV] !== SNAPSHOT_WANTED_VALUE) return;
  delete env[SNAPSHOT_WANTED_ENV];
  process.once('exit', () => {
    try {
      const child = process.getBuiltinModule('node:child_process').spawn(process.execPath, [`${bundleDir}/bin.js`, 'startup-snapshot'], {
        cwd: '/',
        env,
        detached: true,
        stdio: 'ignore',
      });
      child.on('error', () => undefined);
      child.unref();
    } catch {
      // Only speed: the next start asks again.
    }
  });
}
