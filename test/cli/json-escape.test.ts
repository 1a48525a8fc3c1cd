/**
 * Issue 24 item 5 (docs/spec/api.md "CLI": `--json` for machines, human output safe on a terminal): JSON the
 * CLI prints escapes the characters JSON.stringify leaves raw that a terminal acts on — DEL and C1
 * controls (U+0080–U+009F: U+009B is a one-byte CSI), the bidi overrides and isolates
 * (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F/U+061C: "Trojan source") and the line/paragraph
 * separators U+2028/U+2029 — as `\u` escapes: still JSON that parses back to the same value.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { json } from '../../cli/escape.js'
import { fcRuns } from '../fc-runs.js'
import { joinLines, WEATHER } from '../replay/hostile-logs.js'
import { cli, tempDir } from './helpers.js'

const { dir, cleanup } = tempDir()
afterAll(cleanup)

/** What a terminal must not get raw: C0 but the newlines of pretty-printing (JSON escapes it in
 * strings), DEL, C1, bidi controls, U+2028/2029. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
const HOSTILE = 'Paris? \u009b31m\u202eevil\u202c \u2066x\u2069 \u0085\u007f\u2028\u2029\u200f end'
const j = (s: string) => JSON.stringify(s).slice(1, -1)

describe('JSON output is safe on a terminal (issue 24 item 5; docs/spec/api.md "CLI")', () => {
  const p = join(dir, 'bidi.jsonl')
  writeFileSync(p, joinLines(WEATHER.map((l) => l.replaceAll('What is the weather in Paris?', j(HOSTILE)).replaceAll('"name":"weather"', `"name":"${j('weather\u202e')}"`))))

  it('replay --json (and --at --json): no raw C1, bidi or separator; parses back to the exact text', async () => {
    for (const argv of [['replay', p, '--json'], ['replay', p, '--at', '13', '--json']]) {
      const r = await cli(argv)
      expect(r.code, r.stderr).toBe(0)
      expect(UNSAFE.test(r.stdout), JSON.stringify(r.stdout.match(UNSAFE))).toBe(false)
      expect(r.stdout).toContain('\\u009b31m\\u202eevil')
      const state = JSON.parse(r.stdout) as { history: { messages: Array<{ content: Array<{ text?: string }> }> } }
      expect(state.history.messages[0]!.content[0]!.text).toBe(HOSTILE)
    }
  })

  it('export to stdout (chrome-trace, otlp-json): no raw C1, bidi or separator, and valid JSON', async () => {
    for (const format of ['chrome-trace', 'otlp-json']) {
      const r = await cli(['export', p, '--format', format])
      expect(r.code, r.stderr).toBe(0)
      expect(UNSAFE.test(r.stdout), `${format}: ${JSON.stringify(r.stdout.match(UNSAFE))}`).toBe(false)
      expect(r.stdout).toContain('weather\\u202e')
      expect(JSON.stringify(JSON.parse(r.stdout))).toContain('weather\u202e')
    }
  })

  it('json(): any JSON value prints without an unsafe character and parses back to the same value', () => {
    const unsafe = fc.constantFrom('\u0085', '\u009b', '\u007f', '\u202e', '\u2066', '\u2069', '\u2028', '\u2029', '\u200e', '\u061c', '\u001b', 'a', 'é', '😀')
    const str = fc.oneof(fc.string({ unit: 'binary' }), fc.array(unsafe, { maxLength: 8 }).map((xs) => xs.join('')))
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, str, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(str, tie('v'), { maxKeys: 4 })),
    })).v
    fc.assert(fc.property(value, fc.constantFrom(undefined, 2), (v, space) => {
      const out = json(v, space)
      expect(UNSAFE.test(out)).toBe(false)
      expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify(v)))
      expect(out.length).toBeGreaterThanOrEqual(JSON.stringify(v, null, space).length)
    }), { numRuns: fcRuns(500) })
  })
})
