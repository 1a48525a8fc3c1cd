import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // the postgres tests need a server: TURNLOG_PG_URL, else a throwaway one (scripts/pg.sh)
    globalSetup: ['test/stores/postgres/global-setup.ts'],
  },
})
