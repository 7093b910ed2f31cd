import { describe, expect, it } from 'vitest';
import { checkRunners, checkRuns } from '../../src/guard/check-runners.js';

const WS = '/work/app';

describe('checkRunners', () => {
  it('reads programs named by path and the scripts interpreters are given, inside the workspace only', () => {
    const runners = checkRunners(
      [
        './scripts/ci.sh --fast',
        'CI=1 env FOO=bar bash -eu scripts/lint.sh && node tools/check.mjs',
        "python3 -m pytest; sh -c 'exit 0'; node -e 'x'",
        '/usr/bin/make test | tee out.log',
        '"./quoted run.sh"',
        '../outside.sh; /elsewhere/run.sh',
      ],
      WS,
      '/usr/bin',
    );
    expect([...runners.files].sort()).toEqual(['quoted', 'scripts/ci.sh', 'scripts/lint.sh', 'tools/check.mjs']);
    expect([...runners.programs].sort()).toEqual(['bash', 'node', 'python3', 'sh', 'tee']);
    expect(runners.pathDirs.size).toBe(0);
  });

  it('takes the PATH entries inside the workspace, relative ones from it, as where a bare program may be found', () => {
    const runners = checkRunners(['npm test', 'vitest run'], WS, `${WS}/bin:node_modules/.bin::/usr/bin:${WS}-other/bin`);
    expect([...runners.pathDirs].sort()).toEqual(['', 'bin', 'node_modules/.bin']);
    expect(checkRuns(runners, 'bin/npm')).toBe(true);
    expect(checkRuns(runners, 'node_modules/.bin/vitest')).toBe(true);
    expect(checkRuns(runners, 'npm')).toBe(true);
    expect(checkRuns(runners, 'bin/yarn')).toBe(false);
    expect(checkRuns(runners, 'src/bin/npm')).toBe(false);
  });
});
