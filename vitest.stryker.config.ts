/**
 * The vitest configuration of `npm run mutate` (stryker.config.mjs): the suite's own config, the
 * fast-check run cap as a setup file (TURNLOG_FC_RUNS), and the test folders that judge the
 * mutated code. `TURNLOG_MUTATE_TESTS` (comma-separated globs) narrows the tests for a per-file run,
 * e.g. `TURNLOG_MUTATE_TESTS='test/machines/**' npm run mutate -- --mutate machines/step.ts`.
 */
import { defineConfig, mergeConfig } from 'vitest/config'
import base from './vitest.config.js'

const folders = ['machines', 'reducers', 'events', 'tools', 'agent']
const include = process.env.TURNLOG_MUTATE_TESTS
  ? process.env.TURNLOG_MUTATE_TESTS.split(',').map((g) => g.trim()).filter(Boolean)
  : folders.map((f) => `test/${f}/**/*.test.ts`)

// No PostgreSQL server: none of the mutated folders' tests uses one, and Stryker restarts its
// vitest workers after every timed-out mutant, so a globalSetup that starts a server costs seconds
// per restart. One project of its own (the suite's isolated/shared split is `npm test`'s CI-time
// measure; Stryker runs its own workers, each mutant needs fresh modules).
const { projects: _projects, maxWorkers: _maxWorkers, ...own } = base.test ?? {}
export default mergeConfig(
  { ...base, test: { ...own, include: [], globalSetup: [] } },
  defineConfig({ test: { include, setupFiles: ['test/machines/fast-check-runs.setup.ts'] } }),
)
