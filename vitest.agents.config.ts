import { defineConfig } from 'vitest/config';

// The real-CLI suite (npm run test:agents): the pinned Claude Code and Codex, installed by
// scripts/install-agent-clis.sh outside the lockfile, driven offline by fake model servers. Kept apart from
// `npm test` (vitest.config.ts includes only test/): each CLI is a ~400 MB native binary.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test-agents/**/*.test.ts'],
    // Says which CLIs are missing (their tests skip) and how to install them.
    globalSetup: ['test-agents/helpers/report-missing-clis.ts'],
    // Each CLI starts in about a second and uses a core while it does; two files at a time on 2 cores.
    maxWorkers: 2,
    testTimeout: 90_000,
    // goald runs the real CLIs inside its bubblewrap sandbox here (test/helpers/run-goald.ts reads it).
    env: { GOALD_TEST_SANDBOX: 'required' },
    hookTimeout: 30_000,
  },
});
