import { defineConfig } from 'vitest/config';

// Forks, not threads: tests spawn real processes and signal process groups.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
