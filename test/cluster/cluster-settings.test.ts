// Where a daemon or worker finds its cluster: its environment first, then the user config's `cluster`.

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

import { resolveClusterSettings } from '../../src/cluster/cluster-settings.js';

let env: NodeJS.ProcessEnv;
let configPath: string;

beforeEach(async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'goald-cluster-settings-'));
  env = { XDG_CONFIG_HOME: root };
  configPath = path.join(root, 'goald', 'config.json');
  await mkdir(path.dirname(configPath), { recursive: true });
});

describe('resolveClusterSettings', () => {
  it('is null without GOALD_REDIS_URL or cluster.redis: the embedded daemon', async () => {
    expect(await resolveClusterSettings(env)).toEqual({ settings: null, warnings: [] });
    await writeFile(configPath, JSON.stringify({ cluster: { maxConcurrentTurns: 4 } }));
    expect((await resolveClusterSettings(env)).settings).toBeNull();
  });

  it("reads the user config's cluster section", async () => {
    await writeFile(configPath, JSON.stringify({ cluster: { redis: 'redis://10.0.0.5:6379/1', remote: 'git@example.com:repo.git', maxConcurrentTurns: 4 } }));
    expect((await resolveClusterSettings(env)).settings).toEqual({
      url: 'redis://10.0.0.5:6379/1',
      urlSource: `cluster.redis in ${configPath}`,
      remote: 'git@example.com:repo.git',
      maxConcurrentTurns: 4,
    });
  });

  it('lets GOALD_REDIS_URL and GOALD_CLUSTER_REMOTE win over the file; a null cap lifts the cluster\'s', async () => {
    await writeFile(configPath, JSON.stringify({ cluster: { redis: 'redis://10.0.0.5:6379/1', remote: 'git@example.com:repo.git', maxConcurrentTurns: null } }));
    const { settings } = await resolveClusterSettings({ ...env, GOALD_REDIS_URL: 'redis://127.0.0.1:7000', GOALD_CLUSTER_REMOTE: '/srv/repo.git' });
    expect(settings).toEqual({ url: 'redis://127.0.0.1:7000', urlSource: 'GOALD_REDIS_URL', remote: '/srv/repo.git', maxConcurrentTurns: null });
  });

  it('refuses what is not a Redis URL in the file, and a broken file names no cluster but still lets the environment', async () => {
    await writeFile(configPath, JSON.stringify({ cluster: { redis: 'http://10.0.0.5:6379' } }));
    const broken = await resolveClusterSettings(env);
    expect(broken.settings).toBeNull();
    expect(broken.warnings).toEqual([expect.stringContaining('expected a redis:// or rediss:// URL')]);
    const fromEnv = await resolveClusterSettings({ ...env, GOALD_REDIS_URL: 'redis://127.0.0.1:7000' });
    expect(fromEnv.settings).toMatchObject({ url: 'redis://127.0.0.1:7000', remote: null });
    expect(fromEnv.settings).not.toHaveProperty('maxConcurrentTurns');
  });
});
