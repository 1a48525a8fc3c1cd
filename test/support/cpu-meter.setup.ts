/**
 * Setup file of the suite (vitest.config.ts): each test file's CPU time, read by
 * test/support/timing-reporter.ts. Wall time alone says little on a machine shared with other runs;
 * CPU seconds barely depend on the load, so they tell what a file costs on a quiet machine.
 *
 * - `cpuMs`: user+system CPU of the test worker from the file's first hook to its last (the
 *   tests and hooks; in a fresh process per file, `processCpuMs` adds the import of its modules);
 * - `childCpuMs`: CPU of the child processes the file started and that have exited meanwhile
 *   (`cutime`+`cstime` of /proc/self/stat: PostgreSQL servers of its own, CLI children, chromium).
 *   Not counted: the shared PostgreSQL server's work for the file.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll } from 'vitest'

/** Clock ticks per second of /proc (USER_HZ: 100 on every Linux build this runs on). */
const HZ = 100

function childCpuMs(): number {
  try {
    // fields after the parenthesised command name: cutime and cstime are fields 16 and 17 of stat
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(f[13]) + Number(f[14])) * 1000) / HZ
  } catch {
    return 0 // not Linux
  }
}

const ownCpuMs = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

let start = { own: 0, child: 0 }

beforeAll(() => {
  start = { own: ownCpuMs(), child: childCpuMs() }
})

afterAll(({}, suite) => {
  const own = ownCpuMs()
  suite.meta.cpu = {
    cpuMs: Math.round(own - start.own),
    processCpuMs: Math.round(own),
    childCpuMs: Math.round(childCpuMs() - start.child),
  }
})

declare module 'vitest' {
  interface TaskMeta {
    cpu?: { cpuMs: number; processCpuMs: number; childCpuMs: number }
  }
}
