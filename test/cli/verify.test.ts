/**
 * `turnlog verify`: exit 0 with one OK line, exit 1 listing `L5 at seq 42: message`, exit 2 when
 * the file is not a readable log. The fixtures' expected results come from test/fixtures/expected.json.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MAX_LISTED } from '../../cli/commands/verify.js'
import { crcHex } from '../../events/jsonl.js'
import { cli, ROOT, tempDir } from './helpers.js'

const expected = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/expected.json'), 'utf8')) as Record<
  string,
  { ok: boolean; firstViolation: { invariant: string; seq: number } | null }
>

describe('turnlog verify', () => {
  it('examples/weather.jsonl: exit 0 with one OK line naming events and turns', async () => {
    const r = await cli(['verify', 'examples/weather.jsonl'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('OK examples/weather.jsonl: 26 events, 1 turn, every invariant holds\n')
    expect(r.stderr).toBe('')
  })

  it('covers the fixtures: at least one per invariant and SCHEMA', () => {
    const invariants = new Set(Object.values(expected).flatMap((x) => (x.firstViolation ? [x.firstViolation.invariant] : [])))
    for (let i = 1; i <= 16; i++) expect(invariants).toContain(`L${i}`)
    expect(invariants).toContain('SCHEMA')
  })

  for (const [rel, want] of Object.entries(expected)) {
    const title = want.ok ? `${rel}: exit 0` : `${rel}: exit 1, first ${want.firstViolation!.invariant} at seq ${want.firstViolation!.seq}`
    it(title, async () => {
      const r = await cli(['verify', `test/fixtures/${rel}`])
      expect(r.stderr, r.stderr).toBe('')
      if (want.ok) {
        expect(r.code).toBe(0)
        expect(r.stdout).toMatch(new RegExp(`^OK test/fixtures/${rel.replace(/[.]/g, '\\.')}: \\d+ events?, \\d+ turns?, every invariant holds\\n$`))
        return
      }
      expect(r.code).toBe(1)
      const lines = r.stdout.trimEnd().split('\n')
      expect(lines[0]).toMatch(new RegExp(`^FAIL test/fixtures/${rel.replace(/[.]/g, '\\.')}: \\d+ violations? \\(\\d+ events?, \\d+ turns?\\)$`))
      const { invariant, seq } = want.firstViolation!
      expect(lines[1]).toMatch(new RegExp(`^  ${invariant} at seq ${seq}: .+`))
    })
  }

  it('--max-retries and --max-steps reach the checker (L16, L12)', async () => {
    const l16 = 'test/fixtures/invalid/L16-sixth-attempt-exceeds-maximum.jsonl'
    const strict = await cli(['verify', l16])
    expect(strict.code).toBe(1)
    expect(strict.stdout).toMatch(/L16 at seq \d+: .*6.*5/)
    const loose = await cli(['verify', l16, '--max-retries', '6'])
    expect(loose.code).toBe(0)
    const l12 = 'test/fixtures/invalid/L12-step-limit-below-budget.jsonl'
    const steps = await cli(['verify', l12, '--max-steps', '2'])
    expect(steps.code).toBe(0)
    const other = await cli(['verify', l12, '--max-steps', '3'])
    expect(other.code).toBe(1)
    expect(other.stdout).toContain('budget is 3')
  })

  it('bad option values are usage errors (exit 2)', async () => {
    for (const argv of [['--max-steps', '0'], ['--max-steps', 'x'], ['--max-retries', '-1']]) {
      const r = await cli(['verify', 'examples/weather.jsonl', ...argv])
      expect(r.code, argv.join(' ')).toBe(2)
      expect(r.stdout).toBe('')
    }
  })
})

describe('turnlog verify: long lists and unreadable logs', () => {
  const { dir, cleanup } = tempDir()
  afterAll(cleanup)
  const weather = readFileSync(join(ROOT, 'examples/weather.jsonl'), 'utf8')

  it(`lists the first ${MAX_LISTED} violations, and every one with --all`, async () => {
    // drop seq 0: every later event stands one position before its seq (L1 at each)
    const lines = weather.split('\n')
    const p = join(dir, 'shifted.jsonl')
    writeFileSync(p, [lines[0], ...lines.slice(2)].join('\n'))
    const r = await cli(['verify', p])
    expect(r.code).toBe(1)
    const out = r.stdout.trimEnd().split('\n')
    const total = Number(/: (\d+) violations/.exec(out[0]!)![1])
    expect(total).toBeGreaterThan(MAX_LISTED)
    expect(out[1]).toMatch(/^ {2}L1 at seq 0: /)
    expect(out.filter((l) => / at seq \d+: /.test(l))).toHaveLength(MAX_LISTED)
    expect(out.at(-1)).toContain(`… ${total - MAX_LISTED} more (--all lists every one)`)
    const all = await cli(['verify', p, '--all'])
    expect(all.stdout.trimEnd().split('\n').filter((l) => / at seq \d+: /.test(l))).toHaveLength(total)
  })

  it('a torn tail or a garbled record is bad input (exit 2), not a violation', async () => {
    const torn = join(dir, 'torn.jsonl')
    writeFileSync(torn, weather.slice(0, -30))
    const t = await cli(['verify', torn])
    expect(t.code).toBe(2)
    expect(t.stderr).toContain('TORN_TAIL')
    expect(t.stdout).toBe('')

    const demo = join(dir, 'demo.jsonl')
    expect((await cli(['demo', '--store', demo])).code).toBe(0)
    // seq 1 made schema-invalid with a correct crc: readLog refuses it, verify reports it as SCHEMA
    const lines = readFileSync(demo, 'utf8').split('\n')
    const rec = JSON.parse(lines[2]!) as { seq: number; data: { turn: unknown }; crc?: string }
    expect(rec.seq).toBe(1)
    delete rec.crc
    rec.data.turn = '1'
    const body = JSON.stringify(rec)
    lines[2] = `${body.slice(0, -1)},"crc":"${crcHex(body)}"}`
    const invalid = join(dir, 'invalid.jsonl')
    writeFileSync(invalid, lines.join('\n'))
    const v = await cli(['verify', invalid])
    expect(v.code).toBe(1)
    expect(v.stdout.split('\n')[1]).toMatch(/^ {2}SCHEMA at seq 1: INVALID_EVENT: .*field data\.turn/)

    // the same with a garbled record further on: the fallback read still checks every crc
    const garbled = join(dir, 'garbled.jsonl')
    writeFileSync(garbled, lines.join('\n').replace('hunter2', 'hunter3'))
    const g = await cli(['verify', garbled])
    expect(g.code).toBe(2)
    expect(g.stdout).toBe('')
    expect(g.stderr).toMatch(/CHECKSUM_MISMATCH: .*garbled\.jsonl:\d+, seq \d+, field crc/)
  })

  it('a store-url#session-id other than postgres and sqlite is refused naming the store URLs (exit 2)', async () => {
    const r = await cli(['verify', 'mysql://host/db#abc'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('the store URLs are postgres://…#session-id and sqlite:FILE#session-id')
  })

  it('a postgres://…#id LOG whose server is unreachable is bad input naming the code (exit 2), never a crash', async () => {
    const r = await cli(['verify', 'postgres://postgres@127.0.0.1:1/turnlog#abc'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('code IO_ERROR')
  })
})
