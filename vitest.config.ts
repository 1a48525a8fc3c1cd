/**
 * The suite's vitest configuration (`npm test`). Two projects, one run:
 *
 * - `shared`: the in-process folders (SHARED_DIRS) run with `isolate: false`: a worker imports
 *   the library once and runs file after file in it, instead of a fresh process re-importing
 *   xstate, zod, immer and the library for every file. Measured round 15 (test/machines,
 *   test/reducers, test/events: 49 files): import 77 s → 15 s, CPU 107 s → 42 s
 *   (decision record "test-infrastructure" (docs/decisions/ in the repository), "CI time"). A file whose text mocks or patches anything global (see
 *   NEEDS_ISOLATION) stays in `isolated` wherever it lives, so a new test that mocks a module
 *   cannot leak into the files after it.
 * - `isolated`: everything else (processes, servers, browsers, the README apps, and the folders
 *   other work changes often), each file in a fresh process, as before. test/replay stays here:
 *   its time is its property runs, not imports (28 s of import against 1,122 s of tests in one
 *   measured run), and its 100 MB read and fork properties timed out in the one shared run (at
 *   load 24; not shown to come from the sharing, not risked).
 *
 * Workers: vitest's default is one fewer than the cores, i.e. ONE on CI's 2-core machine, where
 * most files wait on child processes, PostgreSQL or chromium; two keep both cores busy. On a
 * larger machine the default stands.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { configDefaults, defineConfig } from 'vitest/config'

/** Folders of in-process tests (no child process state, no server of their own) that share a worker's modules. */
const SHARED_DIRS = ['machines', 'reducers', 'events', 'tools', 'agent', 'compaction', 'models']

/** Text that marks a file needing a fresh module graph: module mocks, spies, fake timers, global or env writes. */
const NEEDS_ISOLATION = /vi\.(mock|doMock|unmock|spyOn|stub\w*|useFakeTimers|resetModules|hoisted)\b|configureGlobal|process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|globalThis\.\w+\s*=[^=]|process\.(chdir|on|once)\(/

function testFiles(dir: string): string[] {
  const out: string[] = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...testFiles(p))
    else if (e.name.endsWith('.test.ts')) out.push(p)
  }
  return out
}

const shared = SHARED_DIRS.flatMap((d) => testFiles(join('test', d))).filter((f) => !NEEDS_ISOLATION.test(readFileSync(f, 'utf8')))

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // the postgres tests need a server: TURNLOG_PG_URL, else a throwaway one (scripts/pg.sh)
    globalSetup: ['test/stores/postgres/global-setup.ts'],
    // TURNLOG_TEST_WORKERS overrides (e.g. 1 on a machine shared with other runs)
    maxWorkers: Number(process.env.TURNLOG_TEST_WORKERS) || Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts'],
          // test/faults/ restarts its own server: `npm run test:faults` (vitest.faults.config.ts), which .ci/run calls
          exclude: [...configDefaults.exclude, 'test/faults/**', ...shared],
        },
      },
      {
        extends: true,
        test: { name: 'shared', include: shared, isolate: false },
      },
    ],
  },
})
