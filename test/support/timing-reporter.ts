/**
 * A vitest reporter for CI time: per test file, its wall time (collect = importing the file and
 * what it imports, plus its tests and hooks), written as JSON to `TURNLOG_TIMING_OUT` (default
 * `vitest-timing.json` in the working directory) and the slowest files printed at the end. Used by
 * .ci/run (`--reporter=./test/support/timing-reporter.ts`) so every CI run says where its time went.
 * With test/support/cpu-meter.setup.ts (a setup file of the suite) each row also has the file's
 * CPU milliseconds (`cpu`: tests and hooks; `processCpu`: the whole worker when the file had a fresh
 * one; `childCpu`: its exited child processes), which barely depend on the machine's load.
 */
import { writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import type { Reporter, TestModule } from 'vitest/node'

interface FileTiming {
  file: string
  /** import of the test file and its module graph, plus suite callbacks (ms) */
  collect: number
  /** tests and hooks (ms) */
  tests: number
  /** setup files + environment + harness (ms) */
  setup: number
  total: number
  state: string
  /** CPU of the tests and hooks in the worker (ms), when cpu-meter.setup.ts ran */
  cpu?: number
  /** CPU of the worker process so far (ms): with a fresh process per file, import included */
  processCpu?: number
  /** CPU of child processes the file started that exited (ms) */
  childCpu?: number
}

export default class TimingReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows: FileTiming[] = modules.map((m) => {
      const d = m.diagnostic()
      const setup = d.environmentSetupDuration + d.prepareDuration + d.setupDuration
      const cpu = m.meta().cpu
      return {
        file: relative(process.cwd(), m.moduleId),
        collect: Math.round(d.collectDuration),
        tests: Math.round(d.duration),
        setup: Math.round(setup),
        total: Math.round(d.collectDuration + d.duration + setup),
        state: m.state(),
        ...(cpu ? { cpu: cpu.cpuMs, processCpu: cpu.processCpuMs, childCpu: cpu.childCpuMs } : {}),
      }
    })
    rows.sort((a, b) => b.total - a.total)
    const out = process.env.TURNLOG_TIMING_OUT ?? 'vitest-timing.json'
    writeFileSync(out, JSON.stringify(rows, null, 1))
    const sum = (k: 'collect' | 'tests' | 'setup' | 'cpu' | 'childCpu') => Math.round(rows.reduce((n, r) => n + (r[k] ?? 0), 0) / 1000)
    const cpuOf = (r: FileTiming) => (r.cpu === undefined ? '' : `, cpu ${(((r.cpu ?? 0) + (r.childCpu ?? 0)) / 1000).toFixed(1)} s`)
    const lines = rows.slice(0, Number(process.env.TURNLOG_TIMING_TOP ?? 15)).map((r) =>
      `  ${(r.total / 1000).toFixed(1).padStart(7)} s  (import ${(r.collect / 1000).toFixed(1)} s${cpuOf(r)})  ${r.file}`)
    process.stdout.write(`\nslowest test files (of ${rows.length}; sums: import ${sum('collect')} s, tests ${sum('tests')} s, setup ${sum('setup')} s, cpu ${sum('cpu')} s + children ${sum('childCpu')} s; ${out}):\n${lines.join('\n')}\n`)
  }
}
