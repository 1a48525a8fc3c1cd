/**
 * `npm run test:long`: the long property and fuzz loops at their full budget. Every test file that
 * calls `longRuns(normal, full)` (test/fc-runs.ts) runs here with TURNLOG_LONG=1, i.e. `full` runs;
 * `npm test` runs the same tests with `normal` runs. .ci/run runs the full budgets in its Node 24
 * lane (`TURNLOG_LONG=1 npm run test:lib`: these files are all library tests).
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { projectsFor, suiteOptions } from './test/support/projects.js'
import { testKinds } from './test/support/test-kinds.js'

const root = fileURLToPath(new URL('.', import.meta.url)).replace(/\/$/, '')
const long = testKinds(root).filter((k) => /\blongRuns\(/.test(readFileSync(`${root}/${k.file}`, 'utf8')))

export default defineConfig({
  test: {
    ...suiteOptions,
    testTimeout: 900_000,
    env: { TURNLOG_LONG: '1' },
    projects: projectsFor(long),
  },
})
