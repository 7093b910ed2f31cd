// The kernel's random bytes without a crypto module: the length asked for, never the same twice, and no
// crypto module loaded by a process that only takes them (the point of reading /dev/urandom).

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

import { osRandomBytes } from '../src/os-random.js';
import { repoRoot } from './helpers/run-goald.js';

describe('osRandomBytes', () => {
  it('gives the bytes asked for, different each time', () => {
    const seen = new Set<string>();
    for (const count of [1, 4, 16, 64]) {
      const bytes = osRandomBytes(count);
      expect(bytes).toHaveLength(count);
      seen.add(bytes.toString('hex'));
    }
    const tokens = Array.from({ length: 200 }, () => osRandomBytes(16).toString('hex'));
    expect(new Set(tokens).size).toBe(200);
    expect(seen.size).toBe(4);
  });

  it('loads no crypto module (the built module, in a process of its own)', () => {
    const script = [
      "const { osRandomBytes } = await import('./dist/src/os-random.js');",
      'osRandomBytes(16);',
      "console.log(process.moduleLoadList.filter((name) => /crypto/.test(name)).length);",
    ].join('\n');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('0');
  });
});
