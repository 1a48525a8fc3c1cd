/** `turnlog eval DIR --model MODULE --tools MODULE`: goldens graded, exit 1 on a failing golden, JUnit, the report page. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writeLog } from '../../replay/index.js'
import { twoTurnGolden } from '../evals/goldens.js'
import { cli, tempDir } from './helpers.js'

const ZOD = JSON.stringify(join(process.cwd(), 'node_modules', 'zod', 'index.js'))
const TOOLS = `import { z } from ${ZOD}
export const tools = [{
  name: 'weather', description: 'Current weather for a city', isConcurrencySafe: () => true,
  parameters: z.object({ city: z.string(), unit: z.string().optional() }),
  execute: ({ city }) => ({ city, tempC: city.length + 10 }),
}]
`
// a model under test that answers every request with the same text
const MODEL = `export const model = {
  async *stream() {
    yield { type: 'block-start', index: 0, blockType: 'text' }
    yield { type: 'text-delta', index: 0, text: 'I cannot check the weather.' }
    yield { type: 'block-end', index: 0 }
    yield { type: 'finish', reason: 'stop' }
  },
}
`

const t = tempDir()
afterAll(() => t.cleanup())

async function setup(): Promise<{ dir: string; tools: string; model: string }> {
  const dir = join(t.dir, `goldens-${Math.random().toString(36).slice(2)}`)
  const g = await twoTurnGolden()
  mkdirSync(join(dir, 'more'), { recursive: true })
  await writeLog(join(dir, 'weather.jsonl'), g)
  await writeLog(join(dir, 'more', 'weather-again.jsonl'), { ...g, header: { ...g.header, id: 'golden-2' } })
  const tools = join(t.dir, 'tools.mjs')
  const model = join(t.dir, 'model.mjs')
  writeFileSync(tools, TOOLS)
  writeFileSync(model, MODEL)
  return { dir, tools, model }
}

describe('turnlog eval', () => {
  it('--model recorded: every golden passes (exit 0), one line per golden, found recursively', async () => {
    const { dir, tools } = await setup()
    const r = await cli(['eval', dir, '--model', 'recorded', '--tools', tools, '--trials', '2'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('PASS more/weather-again.jsonl: 2/2 trials passed · pass@2 1 · pass^2 1')
    expect(r.stdout).toContain('PASS weather.jsonl: 2/2 trials passed')
    expect(r.stdout).toMatch(/OK 2\/2 goldens passed, 4 trials/)
  })

  it('a model under test that answers otherwise: exit 1 naming the grader and the turn; --junit and --report written; --json', async () => {
    const { dir, tools, model } = await setup()
    const junit = join(t.dir, 'junit.xml')
    const report = join(t.dir, 'report.html')
    const r = await cli(['eval', dir, '--model', model, '--tools', tools, '--junit', junit, '--report', report])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('FAIL weather.jsonl: 0/1 trials passed')
    expect(r.stdout).toContain('trial 1: same tool sequence: 3 call(s) differ; first: removed weather({"city":"Paris"}) in turn 1')
    expect(r.stdout).toMatch(/first divergence: seq \d+ \(turn 1, step 1\)/)
    expect(r.stdout).toMatch(/FAILED 0\/2 goldens passed/)
    const xml = readFileSync(junit, 'utf8')
    expect(xml).toContain('<testsuites name="turnlog goldens" tests="2" failures="2"')
    expect(xml).toContain('same final answer: final answer &quot;I cannot check the weather.&quot;')
    expect(existsSync(report)).toBe(true)
    expect(readFileSync(report, 'utf8')).toContain('<html')
    const j = await cli(['eval', dir, '--model', model, '--tools', tools, '--json'])
    expect(j.code).toBe(1)
    const parsed = JSON.parse(j.stdout) as { ok: boolean; summary: { failed: number } }
    expect(parsed).toMatchObject({ ok: false, summary: { failed: 2 } })
  })

  it('bad input exits 2: no --model, no goldens, a model module without a model', async () => {
    const { dir, tools } = await setup()
    expect((await cli(['eval', dir, '--tools', tools])).code).toBe(2)
    expect((await cli(['eval', t.dir + '/nothing-here', '--model', 'recorded'])).code).toBe(2)
    const empty = join(t.dir, 'empty.mjs')
    writeFileSync(empty, 'export const nothing = 1\n')
    const r = await cli(['eval', dir, '--model', empty])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('must export model')
  })

  it('issue 27.1: --junit and --report follow the output rule (an existing file needs --force; a golden is never written)', async () => {
    const { dir, tools, model } = await setup()
    const junit = join(t.dir, `junit-${Math.random().toString(36).slice(2)}.xml`)
    writeFileSync(junit, 'keep me')
    const r = await cli(['eval', dir, '--model', model, '--tools', tools, '--junit', junit])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('FILE_EXISTS')
    expect(readFileSync(junit, 'utf8')).toBe('keep me')
    const golden = join(dir, 'weather.jsonl')
    const before = readFileSync(golden, 'utf8')
    const g = await cli(['eval', dir, '--model', model, '--tools', tools, '--report', golden, '--force'])
    expect(g.code).toBe(2)
    expect(readFileSync(golden, 'utf8')).toBe(before)
    const f = await cli(['eval', dir, '--model', model, '--tools', tools, '--junit', junit, '--force'])
    expect(f.code).toBe(1)
    expect(readFileSync(junit, 'utf8')).toContain('<testsuites')
  })
})
