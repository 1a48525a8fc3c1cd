/**
 * The suite's vitest configuration (`npm test`, through scripts/test.mjs). Every `*.test.ts` under
 * test/ except test/faults/ (its own server restarts: `npm run test:faults`,
 * vitest.faults.config.ts), in two projects made by test/support/projects.ts from what each file
 * does (test/support/test-kinds.ts): `shared` (one module graph per worker) and `isolated` (a fresh
 * one per file, for files that mock, spy, fake timers or write process-wide state).
 */
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { projectsFor, suiteOptions } from './test/support/projects.js'
import { testKinds } from './test/support/test-kinds.js'

const files = testKinds(fileURLToPath(new URL('.', import.meta.url)).replace(/\/$/, '')).filter((k) => !k.file.startsWith('test/faults/'))

export default defineConfig({
  test: {
    ...suiteOptions,
    // the postgres tests need a server: TURNLOG_PG_URL, else a throwaway one (scripts/pg.sh)
    globalSetup: ['test/stores/postgres/global-setup.ts'],
    projects: projectsFor(files),
  },
})
