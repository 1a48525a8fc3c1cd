// Issue "See a session", item 6: `turnlog export --format chrome-trace` is the inspector's timeline
// for Perfetto: one complete event per turn, step, model stream and tool call, at the log's times.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cli, ROOT, tempDir } from './helpers.js'

const WEATHER = join(ROOT, 'examples', 'weather.jsonl')

describe('turnlog export', () => {
  it('chrome-trace: turns, steps, model streams and tool calls as complete events with the log\'s times and seqs', async () => {
    const r = await cli(['export', WEATHER, '--format', 'chrome-trace'])
    expect(r.code, r.stderr).toBe(0)
    const trace = JSON.parse(r.stdout) as { traceEvents: Array<Record<string, any>> }
    const x = trace.traceEvents.filter((e) => e.ph === 'X')
    expect(x.map((e) => e.cat)).toEqual(['turn', 'step', 'model', 'tool', 'step', 'model'])
    const tool = x.find((e) => e.cat === 'tool')!
    // tool/call at seq 13 (t0+13 ms), its result at seq 14 (t0+14 ms): 1 ms = 1000 µs
    expect(tool).toMatchObject({ ts: 13_000, dur: 1_000, args: { seq: 13, endSeq: 14, status: 'ok' } })
    const turn = x.find((e) => e.cat === 'turn')!
    expect(turn).toMatchObject({ ts: 1_000, dur: 24_000, args: { seq: 1, endSeq: 25 } })
    const names = trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => e.args.name)
    expect(names).toContain('tools · lane 1')
  })

  it('-o writes the file; an unknown format is a coded error listing the formats', async () => {
    const tmp = tempDir()
    const out = join(tmp.dir, 'trace.json')
    expect((await cli(['export', WEATHER, '--format', 'chrome-trace', '-o', out])).code).toBe(0)
    expect(JSON.parse(readFileSync(out, 'utf8')).traceEvents.length).toBeGreaterThan(5)
    const bad = await cli(['export', WEATHER, '--format', 'nope'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('chrome-trace')
    tmp.cleanup()
  })

  it('P7: a log whose clock steps back gives clamped bars (no end before a start, no time before the trace\'s start), the same turn and tool spans as OTLP/JSON (issue 23 item 6)', async () => {
    const lines = readFileSync(WEATHER, 'utf8').trim().split('\n')
    const events = lines.slice(1).map((l) => JSON.parse(l) as { seq: number; time: number })
    const t = (seq: number) => events[seq]!
    t(3).time -= 5_000 // step/start before the session's first event
    t(14).time = t(13).time - 2_000 // the tool's result before its call
    t(25).time = t(1).time - 1_000 // the turn ends before it starts
    const tmp = tempDir()
    try {
      const log = join(tmp.dir, 'backwards.jsonl')
      writeFileSync(log, [lines[0], ...events.map((e) => JSON.stringify(e))].join('\n') + '\n')
      const r = await cli(['export', log, '--format', 'chrome-trace'])
      expect(r.code, r.stderr).toBe(0)
      const trace = JSON.parse(r.stdout) as { traceEvents: Array<Record<string, any>>; otherData: { startTime: number } }
      const timed = trace.traceEvents.filter((e) => e.ph !== 'M')
      for (const e of timed) expect(e.ts, e.name).toBeGreaterThanOrEqual(0)
      for (const e of timed.filter((e) => e.ph === 'X')) expect(e.dur, e.name).toBeGreaterThanOrEqual(0)
      const t0 = trace.otherData.startTime
      expect(t0).toBe(Math.min(...events.map((e) => e.time)))
      const o = await cli(['export', log, '--format', 'otlp-json'])
      expect(o.code, o.stderr).toBe(0)
      const spans = JSON.parse(o.stdout).resourceSpans[0].scopeSpans[0].spans as Array<{ name: string; startTimeUnixNano: string; endTimeUnixNano: string }>
      const asBar = (s: { startTimeUnixNano: string; endTimeUnixNano: string }) => {
        const start = Number(BigInt(s.startTimeUnixNano) / 1000n)
        return { ts: start - t0 * 1000, dur: Number(BigInt(s.endTimeUnixNano) / 1000n) - start }
      }
      const x = timed.filter((e) => e.ph === 'X')
      const bar = (cat: string) => { const b = x.find((e) => e.cat === cat)!; return { ts: b.ts, dur: b.dur } }
      expect(bar('turn')).toEqual(asBar(spans.find((s) => s.name.startsWith('invoke_agent'))!))
      expect(bar('tool')).toEqual(asBar(spans.find((s) => s.name.startsWith('execute_tool'))!))
      expect(bar('turn').dur).toBe(0)
      expect(bar('tool').dur).toBe(0)
    } finally {
      tmp.cleanup()
    }
  })
})
