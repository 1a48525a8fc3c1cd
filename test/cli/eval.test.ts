/** `turnlog eval DIR --model MODULE --tools MODULE`: goldens graded, exit 1 on a failing golden, JUnit, the report page. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { readLog, writeLog } from '../../replay/index.js'
import { embedded } from '../browser/page-data.js'
import { twoTurnGolden } from '../evals/goldens.js'
import { writeEvalModules } from './eval-modules.js'
import { cli, tempDir } from './helpers.js'

const t = tempDir()
afterAll(() => t.cleanup())

async function setup(): Promise<{ dir: string; tools: string; model: string }> {
  const dir = join(t.dir, `goldens-${Math.random().toString(36).slice(2)}`)
  const g = await twoTurnGolden()
  mkdirSync(join(dir, 'more'), { recursive: true })
  await writeLog(join(dir, 'weather.jsonl'), g)
  await writeLog(join(dir, 'more', 'weather-again.jsonl'), { ...g, header: { ...g.header, id: 'golden-2' } })
  return { dir, ...writeEvalModules(t.dir) }
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
    // issue 38.15: the field that differs is printed under it (path: golden → re-run)
    expect(r.stdout).toMatch(/first divergence: [^\n]*\n {4}[\w.[\]]+: .+ → .+\n/)
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

  it('P4 --report: the page holds the first failing golden and its whole re-run side by side (compare), the first divergence selected; all passing: no page', async () => {
    const { dir, tools, model } = await setup()
    const report = join(t.dir, `report-${Math.random().toString(36).slice(2)}.html`)
    const r = await cli(['eval', dir, '--model', model, '--tools', tools, '--report', report])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`wrote ${report} (more/weather-again.jsonl, trial 1: the golden and its re-run side by side)`)
    const data = embedded(readFileSync(report, 'utf8'))
    const golden = await readLog(join(dir, 'more', 'weather-again.jsonl'))
    // the golden is the page's log, whole
    expect(data.events).toEqual(JSON.parse(JSON.stringify(golden.events)))
    expect(data.header).toMatchObject({ id: 'golden-2' })
    // the page names the golden as listed, never by the absolute path it was read from
    expect(data.file).toBe('more/weather-again.jsonl')
    expect(readFileSync(report, 'utf8')).not.toContain(dir)
    // the re-run, whole: a fork of the golden that parts from it at the divergence
    const re = data.compare.events as Array<{ seq: number; type: string }>
    expect(data.compare).toMatchObject({ goldenFile: 'more/weather-again.jsonl', label: 're-run (actual), trial 1', header: { parent: { session: 'golden-2' } } })
    expect(re.map((e) => e.seq)).toEqual(re.map((_, i) => i))
    expect(re.at(-1)!.type).toBe('turn/end')
    const d = data.divergence as { seq: number; kind: string; expected: { type: string }; actual: { type: string } }
    expect(d.seq).toBeGreaterThan(0)
    expect(data.select).toBe(d.seq)
    expect(re.slice(0, d.seq).map((e) => e.type)).toEqual(golden.events.slice(0, d.seq).map((e) => e.type))
    expect(d.expected.type).toBe(golden.events[d.seq]!.type)
    expect(d.actual.type).toBe(re[d.seq]!.type)
    expect(data.reexec).toBeUndefined()
    // every golden passes: nothing to show, no page written
    const none = join(t.dir, `none-${Math.random().toString(36).slice(2)}.html`)
    const ok = await cli(['eval', dir, '--model', 'recorded', '--tools', tools, '--report', none])
    expect(ok.code).toBe(0)
    expect(ok.stderr).toContain('not written')
    expect(existsSync(none)).toBe(false)
  })

  it('progress on a TTY: a bar counting trials over goldens × trials, naming the golden; none with --json or off a TTY', async () => {
    const { dir, tools } = await setup()
    const tty = Object.assign(new PassThrough(), { isTTY: true, columns: 100, rows: 30 })
    let drawn = ''
    tty.on('data', (b: Buffer) => void (drawn += b.toString()))
    const r = await cli(['eval', dir, '--model', 'recorded', '--tools', tools, '--trials', '2'], { progress: true, progressStream: tty as unknown as NodeJS.WritableStream })
    expect(r.code, r.stderr).toBe(0)
    expect(drawn).toMatch(/eval \[[^\]]*\] \d\/4 trials/)
    expect(drawn).toContain('weather.jsonl')
    expect(drawn).toContain('4/4 trials')
    let quiet = ''
    tty.removeAllListeners('data')
    tty.on('data', (b: Buffer) => void (quiet += b.toString()))
    const j = await cli(['eval', dir, '--model', 'recorded', '--tools', tools, '--json'], { progress: true, progressStream: tty as unknown as NodeJS.WritableStream })
    expect(j.code).toBe(0)
    expect(quiet).toBe('')
  })
})
