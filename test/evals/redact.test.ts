import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { EventOf } from '../../events/index.js'
import { recordedModel, redactLog, rerun } from '../../evals/index.js'
import { readLog, verify, writeLog } from '../../replay/index.js'
import { cli, tempDir } from '../cli/helpers.js'
import { instantTimers, recordGolden, twoTurnGolden, weatherTools } from './goldens.js'

const t = tempDir()
afterAll(() => t.cleanup())

const hideCities = (text: string) => text.replace(/Paris|Oslo|Rome/g, 'CITY')

describe('redactLog: a golden without secrets', () => {
  it('message text, streamed chunks, tool arguments and results are redacted consistently; the log still verifies and re-runs', async () => {
    const g = await twoTurnGolden()
    const kinds = new Set<string>()
    const r = redactLog(g, (text, ctx) => {
      kinds.add(ctx.kind)
      return hideCities(text)
    })
    expect(JSON.stringify(r.events)).not.toMatch(/Paris|Oslo|Rome/)
    expect(JSON.stringify(g.events)).toMatch(/Paris/) // the input is untouched
    expect(r.events.length).toBe(g.events.length)
    expect(verify(r.events).ok).toBe(true)
    expect([...kinds].sort()).toEqual(['assistant', 'system', 'tool-arguments', 'tool-result', 'user'])
    const call = r.events.find((e) => e.type === 'tool/call') as EventOf<'tool/call'>
    expect(call.data.arguments).toBe('{"city":"CITY"}')
    // the redacted golden is a golden: it re-runs with its own recording
    const run = await rerun(r, { model: recordedModel(r), tools: weatherTools(), timers: instantTimers, timeoutMs: 5000 })
    expect(run.divergence).toBeNull()
  })

  it('a streamed text split across deltas is redacted as a whole (a secret cut in two is still found)', async () => {
    const g = await recordGolden([{ text: 'the key is sk-12345678', chunkSize: 3 }], async (a) => {
      a.followup('what is the key?')
    })
    const r = redactLog(g, (text) => text.replace(/sk-\d+/g, '[key]'))
    expect(JSON.stringify(r.events)).not.toContain('sk-1')
    expect(JSON.stringify(r.events)).not.toMatch(/"text":"345"/)
    expect(verify(r.events).ok).toBe(true)
  })

  it('a redaction that throws or breaks the log is a coded error naming the seq; nothing is returned', async () => {
    const g = await twoTurnGolden()
    expect(() => redactLog(g, () => { throw new Error('no') })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', field: 'redact' }))
    // a lone surrogate cannot be stored (JSONL is UTF-8): verify refuses the redacted log
    expect(() => redactLog(g, (text, ctx) => (ctx.kind === 'user' ? '\uD800' : text)))
      .toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', seq: expect.any(Number) }))
    expect(() => redactLog(g, () => 42 as never)).toThrow(/returned number/)
  })

  it('turnlog fork LOG --at SEQ --redact MODULE -o golden.jsonl', async () => {
    const g = await twoTurnGolden()
    const log = join(t.dir, 'session.jsonl')
    await writeLog(log, g)
    const mod = join(t.dir, 'redact.mjs')
    writeFileSync(mod, "export function redact(text) { return text.replace(/Paris|Oslo|Rome/g, 'CITY') }\n")
    const out = join(t.dir, 'golden.jsonl')
    const turn1End = g.events.find((e) => e.type === 'turn/end')!.seq
    const r = await cli(['fork', log, '--at', String(turn1End), '--redact', mod, '-o', out])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('redacted by')
    const back = await readLog(out)
    expect(back.header.parent).toEqual({ session: 'golden-1', seq: turn1End })
    expect(JSON.stringify(back.events)).not.toMatch(/Paris/)
    expect(verify(back.events).ok).toBe(true)
    const bad = join(t.dir, 'bad.mjs')
    writeFileSync(bad, 'export const nope = 1\n')
    expect((await cli(['fork', log, '--at', '3', '--redact', bad, '-o', join(t.dir, 'x.jsonl')])).code).toBe(2)
  })
})
