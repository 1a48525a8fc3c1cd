import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { TurnlogError, type LogEvent } from '../../events/index.js'
import { repair, writeRepaired } from '../../replay/repair.js'
import { verify } from '../../replay/verify.js'
import { cli, tempDir } from '../cli/helpers.js'
import { build, chunk, HEADER, jsonlBytes, opening } from './replay-helpers.js'

const types = (es: readonly LogEvent[]) => es.map((e) => e.type)
const data = (e: LogEvent | undefined) => e?.data as Record<string, any>

async function repairOf(events: LogEvent[]) {
  const r = await repair(jsonlBytes(events))
  expect(verify(r.log.events).ok).toBe(true)
  expect(r.log.events.slice(0, events.length)).toEqual(events)
  return r
}

describe('repair: synthetic closers (lifecycle "closers", P5, L2–L14)', () => {
  it('L2 L3: an open step with nothing streamed ends failed INTERRUPTED, the turn interrupted, at the last time', async () => {
    const ev = build(opening())
    const r = await repairOf(ev)
    expect(types(r.closers)).toEqual(['step/end', 'turn/end'])
    expect(data(r.closers[0]).outcome).toEqual({ kind: 'failed', failure: { code: 'INTERRUPTED', message: expect.any(String) } })
    expect(data(r.closers[1]).reason).toEqual({ kind: 'interrupted' })
    for (const c of r.closers) expect(c.time).toBe(ev[ev.length - 1]!.time)
    expect(r.closers.map((c) => c.seq)).toEqual([ev.length, ev.length + 1])
    expect(r.quarantined).toBeNull()
  })

  it('L7 L9: visible text streamed without a message gets an interrupted assistant/message citing every chunk', async () => {
    const ev = build([...opening(), chunk({ type: 'block-start', index: 0, blockType: 'text' }), chunk({ type: 'text-delta', index: 0, text: 'Hel' })])
    const r = await repairOf(ev)
    expect(types(r.closers)).toEqual(['assistant/message', 'step/end', 'turn/end'])
    const m = r.closers[0]!
    expect(data(m)).toMatchObject({ interrupted: true, finish: 'stop', message: { role: 'assistant', content: [{ type: 'text', text: 'Hel' }] } })
    expect(m.sourceEventSeqs).toEqual([ev.length - 2, ev.length - 1])
  })

  it('L7: only a half-streamed tool call (nothing visible) gets no message', async () => {
    const ev = build([...opening(), chunk({ type: 'block-start', index: 0, blockType: 'tool-call' }), chunk({ type: 'tool-call-delta', index: 0, id: 'c1', name: 'x', argumentsDelta: '{' })])
    const r = await repairOf(ev)
    expect(types(r.closers)).toEqual(['step/end', 'turn/end'])
  })

  it('L5 L6: a started call gets TOOL_OUTCOME_UNKNOWN, an unstarted one a tool/call + TOOL_NOT_STARTED pair, in model order; the step ends tools', async () => {
    const calls = [{ type: 'tool-call', id: 'c1', name: 'a', arguments: '{}' }, { type: 'tool-call', id: 'c2', name: 'b', arguments: '{"x":1}' }]
    const stream = [
      chunk({ type: 'block-start', index: 0, blockType: 'tool-call' }), chunk({ type: 'tool-call-delta', index: 0, id: 'c1', name: 'a', argumentsDelta: '{}' }), chunk({ type: 'block-end', index: 0 }),
      chunk({ type: 'block-start', index: 1, blockType: 'tool-call' }), chunk({ type: 'tool-call-delta', index: 1, id: 'c2', name: 'b', argumentsDelta: '{"x":1}' }), chunk({ type: 'block-end', index: 1 }),
      chunk({ type: 'finish', reason: 'tool-calls' }),
    ]
    const pre = build([...opening(), ...stream])
    const chunkSeqs = pre.slice(-7).map((e) => e.seq)
    const ev = build([...opening(), ...stream,
      { type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: calls }, finish: 'tool-calls' }, surfaceOp: 'append', sourceEventSeqs: chunkSeqs },
      { type: 'tool/call', data: { turn: 1, step: 1, callId: 'c1', name: 'a', arguments: '{}' } },
    ])
    const r = await repairOf(ev)
    expect(types(r.closers)).toEqual(['tool/result', 'tool/call', 'tool/result', 'step/end', 'turn/end'])
    expect(data(r.closers[0])).toMatchObject({ callId: 'c1', error: { code: 'TOOL_OUTCOME_UNKNOWN' }, message: { isError: true } })
    expect(r.closers[0]!.sourceEventSeqs).toEqual([ev.length - 1])
    expect(data(r.closers[1])).toEqual({ turn: 1, step: 1, callId: 'c2', name: 'b', arguments: '{"x":1}' })
    expect(data(r.closers[2])).toMatchObject({ callId: 'c2', error: { code: 'TOOL_NOT_STARTED' } })
    expect(r.closers[2]!.sourceEventSeqs).toEqual([r.closers[1]!.seq])
    expect(data(r.closers[3]).outcome).toEqual({ kind: 'tools' })
  })

  it('L12: a complete stop message keeps its natural step outcome; the turn still ends interrupted', async () => {
    const stream = [chunk({ type: 'block-start', index: 0, blockType: 'text' }), chunk({ type: 'text-delta', index: 0, text: 'hi' }), chunk({ type: 'block-end', index: 0 }), chunk({ type: 'finish', reason: 'stop' })]
    const seqs = build([...opening(), ...stream]).slice(-4).map((e) => e.seq)
    const ev = build([...opening(), ...stream,
      { type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }, finish: 'stop' }, surfaceOp: 'append', sourceEventSeqs: seqs }])
    const r = await repairOf(ev)
    expect(r.closers.map((c) => [c.type, data(c).outcome?.kind ?? data(c).reason.kind])).toEqual([['step/end', 'stop'], ['turn/end', 'interrupted']])
  })

  it('L12 L16: a turn whose last step failed (after llm/retry) closes interrupted', async () => {
    const failure = { code: 'SERVER', message: 'boom' }
    const ev = build([...opening(),
      { type: 'step/end', data: { turn: 1, step: 1, outcome: { kind: 'failed', failure } } },
      { type: 'llm/retry', data: { turn: 1, step: 1, attempt: 1, delayMs: 500, failure } }])
    const r = await repairOf(ev)
    expect(types(r.closers)).toEqual(['turn/end'])
    expect(data(r.closers[0]).reason).toEqual({ kind: 'interrupted' })
  })

  it('L14: an open compaction bracket ends with an INTERRUPTED error before the turn/end', async () => {
    const ev = build([...opening().slice(0, 3), { type: 'compaction/start', data: { compactionId: 'k1', turn: 1 } }])
    const r = await repairOf(ev)
    expect(types(r.closers)).toEqual(['compaction/end', 'turn/end'])
    expect(data(r.closers[0])).toEqual({ compactionId: 'k1', error: { code: 'INTERRUPTED', message: expect.any(String) } })
  })

  it('L14: a compaction/summary cut before its replacing user/message gets one (the summary text, source compaction)', async () => {
    const stream = [chunk({ type: 'block-start', index: 0, blockType: 'text' }), chunk({ type: 'text-delta', index: 0, text: 'hi' }), chunk({ type: 'block-end', index: 0 }), chunk({ type: 'finish', reason: 'stop' })]
    const base = [...opening(), ...stream]
    const seqs = build(base).slice(-4).map((e) => e.seq)
    const msgSeq = seqs[3]! + 1
    const ev = build([...base,
      { type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }, finish: 'stop' }, surfaceOp: 'append', sourceEventSeqs: seqs },
      { type: 'step/end', data: { turn: 1, step: 1, outcome: { kind: 'stop' } } },
      { type: 'compaction/start', data: { compactionId: 'k1', turn: 1 } },
      { type: 'compaction/summary', data: { compactionId: 'k1', summary: 'they said hi', shadowedSeqs: [4, msgSeq] } }])
    const r = await repairOf(ev)
    expect(types(r.closers)).toEqual(['user/message', 'compaction/end', 'turn/end'])
    expect(r.closers[0]).toMatchObject({ surfaceOp: { op: 'replace', start: 4, end: msgSeq }, sourceEventSeqs: [4, msgSeq] })
    expect(data(r.closers[0]).message).toMatchObject({ content: [{ type: 'text', text: 'they said hi' }], source: { kind: 'compaction' } })
    expect(data(r.closers[1]).error).toMatchObject({ code: 'INTERRUPTED' })
  })

  it('a clean, closed log needs nothing: no closers, no quarantine', async () => {
    const ev = build([...opening(), { type: 'step/end', data: { turn: 1, step: 1, outcome: { kind: 'failed', failure: { code: 'QUOTA', message: 'q' } } } },
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'error', failure: { code: 'QUOTA', message: 'q' } } } }])
    const r = await repairOf(ev)
    expect(r.closers).toEqual([])
    expect(r.quarantined).toBeNull()
    expect(r.keptEventCount).toBe(ev.length)
  })
})

describe('repair: torn tails and corruption (P5)', () => {
  const ev = build(opening())
  const bytes = jsonlBytes(ev)
  const lastLineStart = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1

  it('P5: a torn last line is quarantined (offset and bytes) and every complete record kept', async () => {
    const cut = bytes.slice(0, lastLineStart + 9)
    const r = await repair(cut)
    expect(r.keptEventCount).toBe(ev.length - 1)
    expect(r.quarantined?.offset).toBe(lastLineStart)
    expect(Buffer.from(r.quarantined!.bytes)).toEqual(Buffer.from(cut.slice(lastLineStart)))
    expect(verify(r.log.events).ok).toBe(true)
  })

  it('P5: a last record missing only its newline is kept, nothing quarantined', async () => {
    const r = await repair(bytes.slice(0, bytes.length - 1))
    expect(r.keptEventCount).toBe(ev.length)
    expect(r.quarantined).toBeNull()
  })

  it('P5: a garbled last record that still parses is caught by its crc and quarantined', async () => {
    const text = new TextDecoder().decode(bytes)
    const garbled = new TextEncoder().encode(text.slice(0, lastLineStart) + text.slice(lastLineStart).replace('"sys"', '"SYS"'))
    const r = await repair(garbled)
    expect(r.keptEventCount).toBe(ev.length - 1)
    expect(r.quarantined?.offset).toBe(lastLineStart)
  })

  it('corruption before the tail is refused with its coded error (not repairable), nothing written', async () => {
    const text = new TextDecoder().decode(bytes)
    const firstEvent = text.indexOf('\n') + 1
    const bad = new TextEncoder().encode(text.slice(0, firstEvent) + text.slice(firstEvent).replace('"next-turn"', '"next-TURN"'))
    const err = await repair(bad).catch((e: unknown) => e)
    expect(TurnlogError.is(err)).toBe(true)
    expect((err as TurnlogError).code).toBe('CHECKSUM_MISMATCH')
    expect((err as TurnlogError).repairable).not.toBe(true)
  })

  it('a complete prefix that breaks an invariant is refused with INVARIANT', async () => {
    const broken = ev.map((e) => (e.type === 'turn/start' ? { ...e, data: { turn: 2 } } : e)) as LogEvent[]
    const err = await repair(jsonlBytes(broken)).catch((e: unknown) => e)
    expect(TurnlogError.is(err, 'INVARIANT')).toBe(true)
    expect(err).toMatchObject({ invariant: 'L2', repairable: false })
  })

  it('writeRepaired writes OUT and OUT.quarantine, refuses an existing OUT and leaves no quarantine behind', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const r = await repair(bytes.slice(0, lastLineStart + 5))
      const out = join(dir, 'out.jsonl')
      const w = await writeRepaired(out, r)
      expect(w.quarantineFile).toBe(`${out}.quarantine`)
      expect(readFileSync(`${out}.quarantine`)).toEqual(Buffer.from(bytes.slice(lastLineStart, lastLineStart + 5)))
      const again = await repair(out)
      expect(again.closers).toEqual([])
      expect(again.log.events).toEqual(r.log.events)
      const out2 = join(dir, 'taken.jsonl')
      writeFileSync(out2, 'x')
      await expect(writeRepaired(out2, r)).rejects.toMatchObject({ code: 'FILE_EXISTS' })
      expect(existsSync(`${out2}.quarantine`)).toBe(false)
    } finally {
      cleanup()
    }
  })
})

describe('turnlog repair (CLI, in-process)', () => {
  it('repairs a torn fixture into OUT with OUT.quarantine and never touches LOG', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const ev = build(opening())
      const bytes = jsonlBytes(ev, HEADER)
      const log = join(dir, 'crashed.jsonl')
      writeFileSync(log, bytes.slice(0, bytes.length - 20))
      const before = readFileSync(log)
      const r = await cli(['repair', log, '-o', join(dir, 'fixed.jsonl')])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain('repaired')
      expect(r.stdout).toMatch(/torn tail: \d+ bytes at byte offset \d+/)
      expect(r.stdout).toContain('turn/end interrupted')
      expect(readFileSync(log)).toEqual(before)
      expect(existsSync(join(dir, 'fixed.jsonl.quarantine'))).toBe(true)
      const v = await cli(['verify', join(dir, 'fixed.jsonl')])
      expect(v.code).toBe(0)
      // OUT exists now: refused (exit 2)
      const again = await cli(['repair', log, '-o', join(dir, 'fixed.jsonl')])
      expect(again.code).toBe(2)
      expect(again.stderr).toContain('FILE_EXISTS')
      // -o missing, or OUT = LOG: usage errors
      expect((await cli(['repair', log])).code).toBe(2)
      expect((await cli(['repair', log, '-o', log])).code).toBe(2)
    } finally {
      cleanup()
    }
  })
})
