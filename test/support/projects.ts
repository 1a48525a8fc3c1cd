/**
 * The vitest projects of the suite (vitest.config.ts) and of the library lane (vitest.lib.config.ts),
 * made from test/support/test-kinds.ts so that every new test file under test/ lands in one of them:
 *
 * - `shared` (`isolate: false`): a worker imports the library once and runs file after file in it,
 *   instead of a fresh process re-importing vitest, xstate, zod, immer and the library per file.
 * - `isolated`: a fresh module graph per file, for files that mock modules, spy, fake timers or
 *   write process-wide state (`needsIsolation`), so none of that can leak into the files after it.
 */
import { availableParallelism } from 'node:os'
import type { TestProjectInlineConfiguration } from 'vitest/config'
import type { TestKind } from './test-kinds.js'

/** Options both configs share. */
export const suiteOptions = {
  // the full budget of the long loops (TURNLOG_LONG=1, test/fc-runs.ts) may take minutes
  testTimeout: process.env.TURNLOG_LONG === '1' ? 900_000 : 120_000,
  hookTimeout: 120_000,
  // each file's CPU seconds for test/support/timing-reporter.ts
  setupFiles: ['test/support/cpu-meter.setup.ts'],
  // vitest's default is one fewer than the cores, i.e. ONE on CI's 2-core machine, where many
  // files wait on child processes, PostgreSQL or chromium; TURNLOG_TEST_WORKERS overrides
  maxWorkers: Number(process.env.TURNLOG_TEST_WORKERS) || Math.max(2, availableParallelism() - 1),
}

export function projectsFor(kinds: readonly TestKind[]): TestProjectInlineConfiguration[] {
  const isolated = kinds.filter((k) => k.needsIsolation).map((k) => k.file)
  const shared = kinds.filter((k) => !k.needsIsolation).map((k) => k.file)
  const out: TestProjectInlineConfiguration[] = []
  if (shared.length) out.push({ extends: true, test: { name: 'shared', include: shared, isolate: false } })
  if (isolated.length) out.push({ extends: true, test: { name: 'isolated', include: isolated } })
  return out
}
