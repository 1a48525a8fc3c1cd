import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/faults/ restarts its own server: `npm run test:faults` (vitest.faults.config.ts), which .ci/run calls
    exclude: [...configDefaults.exclude, 'test/faults/**'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // the postgres tests need a server: TURNLOG_PG_URL, else a throwaway one (scripts/pg.sh)
    globalSetup: ['test/stores/postgres/global-setup.ts'],
  },
})
