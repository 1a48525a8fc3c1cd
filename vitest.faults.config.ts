/**
 * `npm run test:faults` (issue 24 item 8): the fault loops that restart their own PostgreSQL
 * server (test/faults/), run by .ci/run beside the Node 22 suite (their servers are their own).
 * Kept out of `npm test`'s parallel run because a restart would cut the connections of every other
 * test sharing a server, and the loops' minutes would double the suite's time.
 */
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 300_000,
  },
})
