// Issue "See a session", item 6: `turnlog export --format chrome-trace` is the inspector's timeline
// for Perfetto: one complete event per turn, step, model stream and tool call, at the log's times.
import { readFileSync } from 'node:fs'
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
})
