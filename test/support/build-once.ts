/**
 * One build at a time for the test helpers that compile the library for child processes
 * (test/stores/child-lib.ts, test/cli/cli-child.ts): with two or more vitest workers, two files can
 * find the cached build stale at the same moment, and a second tsc rewriting the files a first
 * file's children are already loading could hand them a half-written module. The lock is a
 * directory (`mkdir` is atomic); the builder re-checks freshness once it holds it, so the second
 * caller only waits. A lock older than 5 minutes is a killed run's and is taken over.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { dirname } from 'node:path'

const STALE_MS = 300_000

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** Runs `build` unless `fresh()` holds, holding `<out>.lock` so concurrent callers build once. */
export function buildOnce(out: string, fresh: () => boolean, build: () => void, timeoutMs = 170_000): void {
  const lock = `${out}.lock`
  mkdirSync(dirname(lock), { recursive: true })
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_MS) rmSync(lock, { recursive: true, force: true })
    } catch {
      // removed by its owner meanwhile: try again
    }
    if (Date.now() > deadline) throw new Error(`another test run holds ${lock} (remove it if no run is building)`)
    sleepSync(200)
  }
  try {
    if (!fresh()) build()
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
