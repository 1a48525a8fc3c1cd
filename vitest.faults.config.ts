/**
 * `npm run test:faults` (issue 24 item 8): the fault loops that restart their own PostgreSQL
 * server (test/faults/), run by .ci/run after `npm test`. Kept out of `npm test`'s parallel run
 * because a restart would cut the connections of every other test sharing the server, and a
 * loop of a hundred kills needs the machine's cores to itself to finish in CI's budget.
 */
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 300_000,
  },
})
