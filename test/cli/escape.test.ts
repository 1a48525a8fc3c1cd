/**
 * Issue 10.6 (docs/spec/api.md "CLI": human output escapes control characters from log text): a log whose
 * user, model and tool text, tool names and ids hold `ESC]0;…BEL`, `ESC[2J` and bare `\r` prints
 * them escaped in every human output; `--json` stays exact.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { inline, scrubLine, text } from '../../cli/escape.js'
import { joinLines, WEATHER } from '../replay/hostile-logs.js'
import { cli, tempDir } from './helpers.js'

const { dir, cleanup } = tempDir()
afterAll(cleanup)

const TITLE = '\u001b]0;pwned\u0007'
const CLEAR = '\u001b[2J'
const CR = 'ok\rEVIL'
/** As JSON text (what goes into the log line). */
const j = (s: string) => JSON.stringify(s).slice(1, -1)

/** Raw terminal controls: ESC, BEL, a bare CR, C1. */
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/

function hostileWeather(): string {
  return joinLines(WEATHER.map((l) => l
    .replaceAll('What is the weather in Paris?', j(`Paris? ${TITLE}${CLEAR}${CR}`))
    .replaceAll('"call_1"', `"${j(`call_1${CLEAR}`)}"`)
    .replaceAll('"name":"weather"', `"name":"${j(`weather${TITLE}`)}"`)
    .replaceAll('"id":"m1"', `"id":"${j(`m1${CR}`)}"`)
    .replaceAll('Sunny, 24', j(`Sunny${TITLE}, 24`))))
}

describe('issue 10.6: control characters from a log never reach the terminal raw (docs/spec/api.md "CLI")', () => {
  const p = join(dir, 'evil.jsonl')
  writeFileSync(p, hostileWeather())

  it('replay (transcript, summary, --at) escapes ESC, BEL and a bare CR in user/model/tool text, tool names and ids', async () => {
    for (const argv of [['replay', p], ['replay', p, '--at', '13'], ['replay', p, '--at', '1']]) {
      for (const color of [false, true]) {
        const r = await cli(argv, { color })
        expect(r.code, r.stderr).toBe(0)
        const out = color ? r.stdout.replace(/\u001b\[[0-9;]*m/g, '') : r.stdout
        expect(RAW.test(out), JSON.stringify(out.match(RAW))).toBe(false)
        if (argv.length === 2) {
          expect(out).toContain('Paris? \\e]0;pwned\\x07\\e[2Jok\\rEVIL')
          expect(out).toContain('weather\\e]0;pwned\\x07')
          expect(out).toContain('call_1\\e[2J')
          expect(out).toContain('m1ok\\rEVIL #4')
        }
      }
    }
  })

  it('--json stays exact: the parsed output holds the raw characters', async () => {
    const r = await cli(['replay', p, '--json'])
    expect(r.code).toBe(0)
    const state = JSON.parse(r.stdout) as { history: { messages: Array<{ content: Array<{ text?: string }> }> } }
    expect(state.history.messages[0]!.content[0]!.text).toBe(`Paris? ${TITLE}${CLEAR}${CR}`)
  })

  it('verify, repair and fork lines and error messages are escaped too', async () => {
    // a duplicate of seq 4's user/message id (an L11 violation naming the id), and a torn tail
    const lines = hostileWeather().split('\n').filter(Boolean)
    const bad = join(dir, 'bad.jsonl')
    writeFileSync(bad, joinLines(lines.slice(0, 7)).slice(0, -10))
    for (const argv of [['verify', bad], ['repair', bad, '-o', join(dir, `r${TITLE}.jsonl`)], ['fork', p, '--at', '13', '-o', join(dir, `f${CLEAR}.jsonl`)], ['replay', join(dir, `missing${TITLE}.jsonl`)]]) {
      const r = await cli(argv)
      expect(r.code).not.toBe(3)
      expect(RAW.test(r.stdout + r.stderr), `${argv.join(' ')}: ${JSON.stringify(r.stdout + r.stderr)}`).toBe(false)
    }
    const unknown = join(dir, 'unknown.jsonl')
    writeFileSync(unknown, joinLines([WEATHER[0]!, `{"seq":0,"time":1,"type":"x${j(TITLE)}","data":{}}`]))
    const r = await cli(['replay', unknown])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('UNKNOWN_EVENT_TYPE')
    expect(RAW.test(r.stderr)).toBe(false)
  })

  it('the escapers: inline escapes newlines too, text keeps them, scrubLine keeps only SGR colour codes', () => {
    expect(inline('a\nb\tc\u001b[2J\u009b\u202e')).toBe('a\\nb\\tc\\e[2J\\x9b\\u202e')
    expect(text('a\nb\r\u0007')).toBe('a\nb\\r\\x07')
    expect(scrubLine('\u001b[31mred\u001b[39m \u001b]0;t\u0007', true)).toBe('\u001b[31mred\u001b[39m \\e]0;t\\x07')
    expect(scrubLine('\u001b[31mred', false)).toBe('\\e[31mred')
  })
})
