/**
 * `npm run test:lib`: the library's own tests, .ci/run's Node 24 lane (decision record "node-lines" (docs/decisions/ in the repository)).
 * "The library's own tests" are every test file that needs nothing outside its Node process: no
 * child process, no PostgreSQL server, no browser (test/support/test-kinds.ts reads that from the
 * file and the test helpers it imports, so a new file is placed by what it does). Same projects,
 * timeouts and set-up as the suite (vitest.config.ts), without the PostgreSQL server.
 */
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { projectsFor, suiteOptions } from './test/support/projects.js'
import { testKinds } from './test/support/test-kinds.js'

const lib = testKinds(fileURLToPath(new URL('.', import.meta.url)).replace(/\/$/, '')).filter((k) => !k.external)

export default defineConfig({
  test: {
    ...suiteOptions,
    projects: projectsFor(lib),
  },
})
