/**
 * Summarises the CPU profiles B8 writes with `TURNLOG_B8_PROFILE=DIR` (b8-worker.ts): self time by
 * area (the library's folders, pg, zod, immer, xstate, node internals, GC, idle) and the top
 * functions, over every `.cpuprofile` in a folder, per completed session when told how many.
 * `node dist/bench/b8-profile.js DIR [SESSIONS]`
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

/** The area of a frame: a library folder (`workers`, `agent`, …), a package, or V8/node. */
export function area(url: string, fn: string): string {
  if (fn === '(garbage collector)') return 'gc'
  if (fn === '(idle)' || fn === '(program)') return fn.slice(1, -1)
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return pkg[1]!
  const lib = /\/dist\/([^/]+)\//.exec(url)
  if (lib) return lib[1]!
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0]
  return url === '' ? '(native)' : 'other'
}

export function summarise(dir: string): { totalMs: number; byArea: Array<[string, number]>; top: Array<[string, number]> } {
  const byArea = new Map<string, number>()
  const byFn = new Map<string, number>()
  let total = 0
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Profile
    const nodes = new Map(p.nodes.map((n) => [n.id, n]))
    for (let i = 0; i < p.samples.length; i++) {
      const n = nodes.get(p.samples[i]!)
      const dt = (p.timeDeltas[i] ?? 0) / 1000
      if (!n) continue
      const a = area(n.callFrame.url, n.callFrame.functionName)
      if (a === 'idle') continue
      total += dt
      byArea.set(a, (byArea.get(a) ?? 0) + dt)
      const short = n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '')
      const k = `${n.callFrame.functionName || '(anon)'} ${short}:${n.callFrame.lineNumber + 1}`
      byFn.set(k, (byFn.get(k) ?? 0) + dt)
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1])
  return { totalMs: total, byArea: sorted(byArea), top: sorted(byFn).slice(0, 40) }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2]!
  const per = Number(process.argv[3] ?? 1)
  const s = summarise(dir)
  const f = (ms: number) => `${(ms / per).toFixed(2)} ms  ${((100 * ms) / s.totalMs).toFixed(1)}%`
  process.stdout.write(`busy ${f(s.totalMs)}\n-- by area\n${s.byArea.map(([k, v]) => `${f(v)}  ${k}`).join('\n')}\n-- top functions (self)\n${s.top.map(([k, v]) => `${f(v)}  ${k}`).join('\n')}\n`)
}
