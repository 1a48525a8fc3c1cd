/**
 * Issue 10 "Logs from anywhere", items 1, 2, 3, 5, 7 and 8 (`--at` stops): every hostile log gets
 * a coded answer naming its place (docs/spec/reliability.md "Bad input"), never an internal error (exit 3) or a
 * hang. The CLI runs in-process (test/cli/helpers.ts).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { TurnlogError, type LogEvent, type UserMessage } from '../../events/index.js'
import { inboxReducer } from '../../reducers/inbox.js'
import { readLog } from '../../replay/read-log.js'
import { repairEvents } from '../../replay/repair.js'
import { replay } from '../../replay/replay.js'
import { PrintFold } from '../../cli/print.js'
import { cli, tempDir } from '../cli/helpers.js'
import { crcLine, HEADER_EVENT_LINE, joinLines, nested, PLACES, WEATHER, weatherWith, withCrc, type Place } from './hostile-logs.js'

const { dir, cleanup } = tempDir()
afterAll(cleanup)
let n = 0
function file(contents: string | Uint8Array): string {
  const p = join(dir, `h${n++}.jsonl`)
  writeFileSync(p, contents)
  return p
}

async function codeOf(p: Promise<unknown>): Promise<TurnlogError> {
  const err = await p.then(() => null, (e: unknown) => e)
  expect(TurnlogError.is(err), String(err)).toBe(true)
  return err as TurnlogError
}

describe('issue 10.1: any nesting depth gets a coded answer naming line, seq and field (Bad input, lossless)', () => {
  it('property: depth 1..1,000,000 in config, tool parameters or an ignorable event, arrays or objects, with or without \\ud800 inside: readLog and every command answer, never exit 3', async () => {
    const depth = fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 1, max: 520 }) },
      { weight: 2, arbitrary: fc.integer({ min: 505, max: 515 }) },
      { weight: 2, arbitrary: fc.integer({ min: 521, max: 1_000_000 }) },
      { weight: 1, arbitrary: fc.constant(1_000_000) },
    )
    await fc.assert(fc.asyncProperty(
      depth, fc.constantFrom<Place>('config', 'parameters', 'ignorable'), fc.constantFrom<'array' | 'object'>('array', 'object'),
      fc.boolean(), fc.boolean(),
      async (d, place, kind, surrogate, crc) => {
        const lines = weatherWith(place, nested(d, kind, surrogate ? '"\\ud800"' : '0'))
        const p = file(joinLines(crc ? withCrc(lines) : lines))
        const lineNo = place === 'ignorable' ? lines.length : HEADER_EVENT_LINE + 1
        const deepest = PLACES[place].level + d - 1
        const tooDeep = deepest > 512
        if (!tooDeep && !surrogate) {
          expect((await readLog(p)).events).toHaveLength(lines.length - 1)
        } else {
          const err = await codeOf(readLog(p))
          expect(err.code).toBe(tooDeep ? 'NOT_LOSSLESS' : 'INVALID_UTF8')
          expect(err).toMatchObject({ line: lineNo, seq: lineNo - 2 })
          expect(err.field!.startsWith(PLACES[place].field)).toBe(true)
        }
        const bad = tooDeep || surrogate
        for (const argv of [['replay', p, '--json'], ['replay', p], ['verify', p], ['fork', p, '--at', '3', '-o', `${p}.fork`, '--force'], ['repair', p, '-o', `${p}.rep`, '--force']]) {
          const r = await cli(argv)
          const want = !bad ? 0 : argv[0] === 'verify' ? 1 : argv[0] === 'fork' ? 0 : 2
          expect(r.code, `${argv.join(' ')} depth ${d}: ${r.stderr}`).toBe(want)
          if (want === 2) expect(r.stderr).toMatch(new RegExp(`(NOT_LOSSLESS|INVALID_UTF8): .*:${lineNo}, seq ${lineNo - 2}, field `))
        }
      },
    ), { numRuns: 24, seed: 1010 })
  })

  it('verify reports a too-deep record as a SCHEMA violation at its seq, and keeps checking the rest', async () => {
    const p = file(joinLines(weatherWith('config', nested(600))))
    const r = await cli(['verify', p])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/SCHEMA at seq 5: NOT_LOSSLESS: the record nests deeper than 512 levels .*field data\.config\.x\[0\]/)
  })
})

describe('issue 10.2: one splice inserting a million messages (Bad input; L11)', () => {
  function bigSplice(count: number): LogEvent[] {
    // one shared content and source: a million distinct messages without a million content arrays
    const content = [{ type: 'text' as const, text: 'x' }]
    const source = { kind: 'user' as const }
    const inserted: UserMessage[] = new Array(count)
    for (let i = 0; i < count; i++) inserted[i] = { id: `m${i}`, role: 'user', content, source }
    return [
      { seq: 0, time: 1, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted } },
      { seq: 1, time: 2, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 1, inserted: [{ id: 'late', role: 'user', content, source }] } },
      { seq: 2, time: 3, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 2, removedCount: count - 1, inserted: [], outcome: 'canceled' } },
    ] as LogEvent[]
  }

  it('1M: the inbox reducer, the L11 checker, verify, replay, the printer fold and repair take it without RangeError', () => {
    const events = bigSplice(1_000_000)
    const s = inboxReducer.initial()
    for (const e of events.slice(0, 2)) inboxReducer.apply(s, e)
    expect(s.nextTurn).toHaveLength(1_000_001)
    expect(s.nextTurn[1]!.id).toBe('late')
    // repair runs the whole Verifier (schema, lossless walk, the L11 checker) over the events
    expect(repairEvents({ header: { type: 'session', format: 1, id: 's', createdAt: 0 }, events }).closers).toEqual([])
    expect(replay(events).inbox.nextTurn.map((m) => m.id)).toEqual(['m0', 'late'])
    expect(PrintFold.of(events).counts.events).toBe(3)
  }, 120_000)

  it('130k through the JSONL codec and the commands (the issue\'s case): no exit 3', async () => {
    const ids = Array.from({ length: 130_000 }, (_, i) => `{"id":"m${i}","role":"user","content":[{"type":"text","text":"x"}],"source":{"kind":"user"}}`)
    const lines = [WEATHER[0]!.replace(/}$/, ',"checksums":"crc32"}'), crcLine(`{"seq":0,"time":1,"type":"agent/inbox/spliced","data":{"target":"next-turn","start":0,"inserted":[${ids.join(',')}]}}`)]
    const p = file(joinLines(lines))
    for (const argv of [['verify', p], ['repair', p, '-o', `${p}.rep`]]) {
      const r = await cli(argv)
      expect(r.code, `${argv.join(' ')}: ${r.stderr.slice(0, 300)}`).toBe(0)
    }
    expect((await cli(['replay', p, '--at', '0'])).stdout).toContain('inbox next-turn 130000 pending')
  }, 120_000)
})

describe('issue 10.3: a FIFO, a directory or a device as LOG is IO_ERROR naming the path, without blocking (Bad input)', () => {
  const fifo = join(dir, 'pipe.jsonl')
  execFileSync('mkfifo', [fifo])
  const link = join(dir, 'pipe-link.jsonl')
  symlinkSync(fifo, link)
  const sub = join(dir, 'a-dir.jsonl')
  mkdirSync(sub)
  const dirLink = join(dir, 'dir-link.jsonl')
  symlinkSync(sub, dirLink)

  it('readLog refuses each with IO_ERROR naming the path and what it is (a FIFO with no writer would block open)', async () => {
    for (const [p, kind] of [[fifo, 'FIFO'], [link, 'FIFO'], [sub, 'directory'], [dirLink, 'directory'], ['/dev/null', 'character device'], ['/dev/zero', 'character device']] as const) {
      const err = await codeOf(readLog(p))
      expect(err.code).toBe('IO_ERROR')
      expect(err.file).toBe(p)
      expect(err.message).toContain(kind)
    }
  })

  it('every command answers exit 2 with IO_ERROR and the path', async () => {
    for (const p of [fifo, link, sub, '/dev/zero']) {
      for (const argv of [['replay', p], ['replay', p, '--at', '1'], ['verify', p], ['repair', p, '-o', join(dir, 'x.out')], ['fork', p, '--at', '0', '-o', join(dir, 'y.out')], ['reexec', p]]) {
        const r = await cli(argv)
        expect(r.code, argv.join(' ')).toBe(2)
        expect(r.stderr).toContain('IO_ERROR')
        expect(r.stderr).toContain(p)
      }
    }
  })
})

describe('issue 10.5: CRLF logs, one reader, one answer (Bad input; L1)', () => {
  const badSeq = [...WEATHER]
  badSeq[5] = badSeq[5]!.replace('"seq":4,', '"seq":40,')

  it('a bad seq at line 6 of a CRLF log with crcs: replay refuses at line 6, verify reports seq 4 (line 6), never a crc error', async () => {
    for (const bom of [false, true]) {
      const p = file(joinLines(withCrc(badSeq), { crlf: true, bom }))
      const r = await cli(['replay', p])
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/BAD_SEQ: .*:6, seq 40, field seq/)
      const v = await cli(['verify', p])
      expect(v.code).toBe(1)
      expect(v.stdout).not.toContain('CHECKSUM')
      expect(v.stdout).toMatch(/L1 at seq 4: .* \(line 6\)/)
    }
  })

  it('a garbled record mid-file: verify and replay name the same line', async () => {
    const lines = withCrc(WEATHER)
    lines[9] = lines[9]!.replace('"time":17', '"time":27')
    const p = file(joinLines(lines, { crlf: true }))
    const a = await cli(['replay', p])
    const b = await cli(['verify', p])
    expect(a.code).toBe(2)
    expect(b.code).toBe(2)
    const where = (s: string) => /CHECKSUM_MISMATCH: .*:(\d+), seq (\d+)/.exec(s)?.slice(1)
    expect(where(a.stderr)).toEqual(['10', '8'])
    expect(where(b.stderr)).toEqual(where(a.stderr))
  })

  it('a valid CRLF log with a BOM reads, verifies, repairs and forks', async () => {
    const p = file(joinLines(withCrc(WEATHER), { crlf: true, bom: true }))
    expect((await cli(['verify', p])).code).toBe(0)
    expect((await cli(['replay', p])).code).toBe(0)
    expect((await cli(['repair', p, '-o', `${p}.rep`])).code).toBe(0)
    expect((await cli(['fork', p, '--at', '5', '-o', `${p}.fork`])).code).toBe(0)
  })
})

describe('issue 10.7: -0 (and numbers that overflow) are NOT_LOSSLESS everywhere (docs/spec/events.md: data is lossless JSON)', () => {
  const cases: Array<[string, string]> = [
    ['"config":{"model":"scripted","t":-0}', 'data.config.t'],
    ['"config":{"model":"scripted","t":[1,-0.0e3]}', 'data.config.t[1]'],
    ['"config":{"model":"scripted","t":1e400}', 'data.config.t'],
    ['"config":{"model":"scripted","t":-1e-400}', 'data.config.t'],
  ]
  for (const [member, field] of cases) {
    it(`${member}: readLog refuses naming line, seq, field; replay/repair/fork exit 2; verify reports SCHEMA NOT_LOSSLESS`, async () => {
      for (const crc of [false, true]) {
        const lines = [...WEATHER]
        lines[HEADER_EVENT_LINE] = lines[HEADER_EVENT_LINE]!.replace('"config":{"model":"scripted"}', member)
        const p = file(joinLines(crc ? withCrc(lines) : lines))
        const err = await codeOf(readLog(p))
        expect(err).toMatchObject({ code: 'NOT_LOSSLESS', line: 7, seq: 5, field })
        for (const argv of [['replay', p], ['replay', p, '--json'], ['repair', p, '-o', `${p}.r`, '--force'], ['fork', p, '--at', '6', '-o', `${p}.f`, '--force']]) {
          const r = await cli(argv)
          expect(r.code, argv.join(' ')).toBe(2)
          expect(r.stderr).toContain('NOT_LOSSLESS')
          expect(r.stderr).toContain(`field ${field}`)
        }
        const v = await cli(['verify', p])
        expect(v.code).toBe(1)
        expect(v.stdout).toMatch(new RegExp(`SCHEMA at seq 5: NOT_LOSSLESS: .*field ${field.replace(/[[\].]/g, '\\$&')}`))
      }
    })
  }

  it('dates and negative fractions inside strings and values are not -0', async () => {
    const lines = [...WEATHER]
    lines[HEADER_EVENT_LINE] = lines[HEADER_EVENT_LINE]!.replace('"config":{"model":"scripted"}', '"config":{"model":"scripted","d":"2026-05-01 :-0","t":-0.5,"u":[-0.25,1e300]}')
    expect((await readLog(file(joinLines(lines)))).events).toHaveLength(WEATHER.length - 1)
  })
})

describe('issue 10.8: replay --at N stops after seq N (B1, B6)', () => {
  it('a log corrupt after seq N replays --at N (nothing after it is read), and fork --at N forks it', async () => {
    const lines = withCrc(WEATHER)
    lines[20] = lines[20]!.replace('"time":17', '"time":27') // crc mismatch at seq 19
    lines.push('{"garbage')
    const p = file(joinLines(lines))
    expect((await cli(['replay', p])).code).toBe(2)
    const r = await cli(['replay', p, '--at', '10'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('State as of seq 10 ·')
    expect((await cli(['fork', p, '--at', '10', '-o', `${p}.fork`])).code).toBe(0)
    const beyond = await cli(['replay', file(joinLines(WEATHER)), '--at', '99'])
    expect(beyond.code).toBe(2)
    expect(beyond.stderr).toContain('seq 99 is out of range: the log has seqs 0..25')
  })
})
