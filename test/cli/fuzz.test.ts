/**
 * `turnlog fuzz`: runs fuzzAgent; exit 0 with the OK line and the census when every invariant
 * holds, 1 with the violated invariant, its message, the log and the replay command when one
 * breaks; never exit 0 on a hang (issue 9 items 12, 15, 17).
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { run } from '../../cli/main.js'
import { readLog } from '../../replay/index.js'

function io() {
  const out: string[] = []
  const err: string[] = []
  return { io: { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), cwd: process.cwd() }, out, err }
}

function module(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'turnlog-fuzz-'))
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

const DUPLICATING_HOOKS = `export const hooks = { 'agent/pre-step': async (p, next) => next({ ...p, messages: [...p.messages, ...p.messages] }) }\n`
const ZOD = JSON.stringify(join(process.cwd(), 'node_modules', 'zod', 'index.js'))

/** Splits `replay exactly this failure: turnlog fuzz …` back into argv (single-quoted words). */
function replayArgv(text: string): string[] {
  const line = /replay exactly this failure: turnlog (.*)/.exec(text)![1]!
  return [...line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!))
}

describe('turnlog fuzz', () => {
  it('L1–L16, R1–R8: passes on the agent alone, prints the OK line, the seed and the census', async () => {
    const { io: i, out } = io()
    expect(await run(['fuzz', '--runs', '20', '--seed', '7'], i)).toBe(0)
    const text = out.join('')
    expect(text).toMatch(/OK fuzz: 20 runs, seed 7/)
    expect(text).toMatch(/census \(20 runs\):\n {2}turn ends +[a-z-]+ \d+/)
    expect(text).toMatch(/turn ends .*completed \d+/)
    for (const row of ['step outcomes', 'tool results', 'bodies run', 'hook errors', 'cancels']) expect(text).toContain(`  ${row}`)
  })

  it('L21, R10, R11: --inputs fuzzes input rounds and prints their census (rounds asked by kind, how they were answered)', async () => {
    const { io: i, out } = io()
    expect(await run(['fuzz', '--runs', '30', '--seed', '7', '--inputs'], i)).toBe(0)
    const text = out.join('')
    expect(text).toMatch(/OK fuzz: 30 runs, seed 7/)
    expect(text).toMatch(/other .*input: asked (form|text|choice|url|client) \d+/)
    expect(text).toMatch(/input: answered \d+/)
    expect(text).toMatch(/tool fuzz_ask +ok \d+/)
  })

  it('L11: a hooks module that enters every message twice: exit 1 with the invariant and its message, the log, and the replay command', async () => {
    const mod = module('hooks.mjs', DUPLICATING_HOOKS)
    const { io: i, out } = io()
    expect(await run(['fuzz', '--runs', '30', '--seed', '3', '--hooks', mod], i)).toBe(1)
    const text = out.join('')
    expect(text).toMatch(/FAIL fuzz \(seed 3\): L11 violated: /)
    // issue 38.17: the head on the terminal, the whole log in a new file named there
    const head = /log \((\d+) events(?:, the first (\d+) below; all of them in (\S+);[^)]*|; --out FILE writes it as JSONL)\):\n {4}\{"seq":0/.exec(text)
    expect(head, text.slice(0, 400)).not.toBeNull()
    const total = Number(head![1])
    const printed = text.split('\n').filter((l) => l.startsWith('    {"seq":')).length
    if (head![3] !== undefined) {
      expect(printed).toBe(Number(head![2]))
      expect(text).toContain(`    … ${total - printed} more (turnlog replay ${head![3]})`)
      expect((await readLog(head![3])).events).toHaveLength(total)
    } else expect(printed).toBe(total)
    expect(printed).toBeLessThanOrEqual(20)
    expect(replayArgv(text)).toEqual(['fuzz', '--seed', '3', '--path', expect.stringMatching(/^\d+(:\d+)*(\|.*)?$/), '--hooks', mod])
  })

  it('--out FILE writes the failing log; the printed command replays exactly that failure (same invariant, same log)', async () => {
    const mod = module('hooks.mjs', DUPLICATING_HOOKS)
    const dir = mkdtempSync(join(tmpdir(), 'turnlog-fuzz-out-'))
    const a = io()
    expect(await run(['fuzz', '--runs', '30', '--seed', '3', '--hooks', mod, '--out', join(dir, 'a.jsonl')], a.io)).toBe(1)
    const first = a.out.join('')
    expect(first).toMatch(/log: \d+ events written to /)
    const b = io()
    expect(await run([...replayArgv(first), '--out', join(dir, 'b.jsonl')], b.io)).toBe(1)
    const second = b.out.join('')
    expect(second).toMatch(/L11 violated: /)
    expect(second).toMatch(/shrunk 0 time\(s\)/)
    const logA = await readLog(join(dir, 'a.jsonl'))
    const logB = await readLog(join(dir, 'b.jsonl'))
    expect(logA.events.length).toBeGreaterThan(0)
    expect(logB.events).toEqual(logA.events)
    // and a file that exists is never overwritten
    const c = io()
    expect(await run(['fuzz', '--runs', '5', '--out', join(dir, 'a.jsonl')], c.io)).toBe(2)
    expect(c.err.join('')).toMatch(/already exists/)
  })

  it('STUCK: --tools with a tool that never settles exits 1 in bounded time, naming the tool', async () => {
    const mod = module('tools.mjs', `import { z } from ${ZOD}\nexport const tools = [{ name: 'hang', description: 'never settles', parameters: z.object({ q: z.string() }), execute: () => new Promise(() => {}) }]\n`)
    const { io: i, out } = io()
    expect(await run(['fuzz', '--runs', '50', '--seed', '1', '--tools', mod, '--stuck-after', '20'], i)).toBe(1)
    const text = out.join('')
    expect(text).toMatch(/FAIL fuzz \(seed 1\): STUCK violated: no progress .*; pending: tool 'hang' body/)
    expect(text).toMatch(/\n {2}pending: tool 'hang' body \(call /)
    expect(text).not.toMatch(/^OK/m)
  })

  it('--json: one JSON object with the census (exit 0), or with the invariant, message, replay command and log (exit 1)', async () => {
    const ok = io()
    expect(await run(['fuzz', '--runs', '10', '--seed', '7', '--json'], ok.io)).toBe(0)
    const report = JSON.parse(ok.out.join('')) as { ok: boolean; seed: number; census: { runs: number; turnEnds: Record<string, number> } }
    expect(report).toMatchObject({ ok: true, seed: 7, census: { runs: 10 } })
    expect(Object.keys(report.census.turnEnds).length).toBeGreaterThan(0)
    const mod = module('hooks.mjs', DUPLICATING_HOOKS)
    const bad = io()
    expect(await run(['fuzz', '--runs', '30', '--seed', '3', '--hooks', mod, '--json'], bad.io)).toBe(1)
    const f = JSON.parse(bad.out.join('')) as { ok: boolean; invariant: string; message: string; replay: string; events: unknown[] }
    expect(f.ok).toBe(false)
    expect(f.invariant).toBe('L11')
    expect(f.message.length).toBeGreaterThan(0)
    expect(f.replay).toMatch(/^turnlog fuzz --seed 3 --path /)
    expect(f.events.length).toBeGreaterThan(0)
  })

  it('a tools module may export a factory (fresh tools per run); the census names its tool', async () => {
    const mod = module('tools.mjs', `import { z } from ${ZOD}\nexport const tools = () => { let calls = 0; return [{ name: 'count', description: 'counts', parameters: z.object({ by: z.number().int().min(1).max(3) }), execute: ({ by }) => String(calls += by) }] }\n`)
    const { io: i, out } = io()
    expect(await run(['fuzz', '--runs', '40', '--seed', '2', '--tools', mod], i)).toBe(0)
    expect(out.join('')).toMatch(/bodies run +.*count \d+/)
  })

  it('tools whose schemas are valibot, arktype and jsonSchema() are fuzzed: each body runs on generated arguments, bad ones are INVALID_ARGS', async () => {
    const at = (p: string) => JSON.stringify(join(process.cwd(), ...p.split('/')))
    const mod = module('tools.mjs', [
      `import * as v from ${at('node_modules/valibot/dist/index.mjs')}`,
      `import { type } from ${at('node_modules/arktype/out/index.js')}`,
      `import { jsonSchema } from ${at('tools/json-schema.ts')}`,
      `export const tools = [`,
      `  { name: 'vb', description: 'valibot', parameters: v.object({ n: v.pipe(v.number(), v.integer(), v.minValue(1)) }), execute: ({ n }) => String(n) },`,
      `  { name: 'ak', description: 'arktype', parameters: type({ s: 'string >= 2' }), execute: ({ s }) => s },`,
      `  { name: 'js', description: 'json', parameters: jsonSchema({ type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'] }), execute: ({ on }) => String(on) },`,
      `]`,
    ].join('\n') + '\n')
    const { io: i, out } = io()
    expect(await run(['fuzz', '--runs', '40', '--seed', '4', '--tools', mod], i)).toBe(0)
    const text = out.join('')
    for (const name of ['vb', 'ak', 'js']) {
      expect(text).toMatch(new RegExp(`bodies run +.*${name} \\d+`))
      const line = new RegExp(`tool ${name} +(.*)`).exec(text)?.[1] ?? ''
      expect(line).toMatch(/(^| )ok \d+/)
      expect(line).toMatch(/INVALID_ARGS \d+/)
    }
  })

  it('a module that does not export tools is a usage error (exit 2); so is --path without --seed', async () => {
    const mod = module('tools.mjs', `export const nothing = 1\n`)
    const { io: i, err } = io()
    expect(await run(['fuzz', '--tools', mod], i)).toBe(2)
    expect(err.join('')).toMatch(/must export tools/)
    const b = io()
    expect(await run(['fuzz', '--path', '1:2'], b.io)).toBe(2)
    expect(b.err.join('')).toMatch(/--path replays a failure only with the --seed/)
  })
})
