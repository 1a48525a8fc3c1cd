/**
 * A deterministic generator of large, valid, agent-shaped JSONL logs for the benchmarks (B1).
 *
 * Each turn is what the agent writes for "prompt → one tool call → answer", in the canonical order
 * of docs/decisions/event-vocabulary.md: the send, `turn/start`, the claim, step 1 (user message, a request
 * header in the first turn only, a streamed text + tool-call answer, the call and its result),
 * step 2 (streamed reasoning + text answer), `turn/end`. Texts vary from turn to turn (a small
 * LCG), so lines are not all the same length. Every line is encoded by the codec of
 * events/jsonl.ts with checksums, so the file is exactly what the stores write.
 */
import { open } from 'node:fs/promises'
import type { LogEvent } from '../events/envelope.js'
import { encodeEvent, encodeHeader, type LogHeader } from '../events/jsonl.js'

const WORDS = [
  'the', 'weather', 'in', 'Paris', 'is', 'sunny', 'Tokyo', 'light', 'rain', 'tomorrow', 'forecast', 'says', 'about',
  'degrees', 'wind', 'from', 'west', 'and', 'humidity', 'percent', 'search', 'results', 'show', 'events', 'this',
  'weekend', 'open-air', 'cinema', 'museum', 'late', 'opening', 'market', 'river', 'walk',
]

/** A seeded linear congruential generator (deterministic across runs and machines). */
function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 4294967296
  }
}

function sentence(rnd: () => number, min: number, max: number): string {
  const n = min + Math.floor(rnd() * (max - min + 1))
  const w: string[] = []
  for (let i = 0; i < n; i++) w.push(WORDS[Math.floor(rnd() * WORDS.length)]!)
  return w.join(' ') + '.'
}

export interface GenerateOptions {
  /** At least this many events are written (whole turns: the log ends between turns). */
  events: number
  /** Seed of the text generator. Default 1. */
  seed?: number
  /** Session id in the header. */
  sessionId?: string
  /** Epoch ms of the first event. */
  startTime?: number
}

export interface GenerateResult {
  file: string
  header: LogHeader
  events: number
  turns: number
  bytes: number
}

/** Events of one turn (turn numbers from 1), seqs from `seq0`. */
export function turnEvents(turn: number, seq0: number, time0: number, rnd: () => number): LogEvent[] {
  const out: LogEvent[] = []
  let seq = seq0
  const add = (type: string, data: unknown, extra: Record<string, unknown> = {}): number => {
    const s = seq++
    out.push({ seq: s, time: time0 + s, type, data, ...extra } as unknown as LogEvent)
    return s
  }
  const id = `m${turn}`
  const prompt = { id, role: 'user', content: [{ type: 'text', text: sentence(rnd, 6, 14) }], source: { kind: 'user' } }
  add('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [prompt] })
  add('turn/start', { turn })
  add('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] })

  // step 1: text + a tool call, the call, its result
  add('step/start', { turn, step: 1 })
  add('user/message', { message: prompt }, { surfaceOp: 'append' })
  if (turn === 1) {
    add('request/header', {
      reason: 'initial',
      config: { model: 'bench' },
      system: 'You are a helpful assistant.',
      tools: [{
        name: 'weather', description: 'Current weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      }],
    })
  }
  const callId = `call_${turn}`
  const args = JSON.stringify({ city: rnd() < 0.5 ? 'Paris' : 'Tokyo' })
  const intro = sentence(rnd, 3, 8)
  const u1 = { inputTokens: 40 + Math.floor(rnd() * 4000), outputTokens: 5 + Math.floor(rnd() * 60) }
  const c1: number[] = []
  const chunk = (step: number, c: unknown) => c1.push(add('assistant/chunk', { turn, step, chunk: c }))
  chunk(1, { type: 'block-start', index: 0, blockType: 'text' })
  const half = intro.length >> 1
  chunk(1, { type: 'text-delta', index: 0, text: intro.slice(0, half) })
  chunk(1, { type: 'text-delta', index: 0, text: intro.slice(half) })
  chunk(1, { type: 'block-end', index: 0 })
  chunk(1, { type: 'block-start', index: 1, blockType: 'tool-call' })
  chunk(1, { type: 'tool-call-delta', index: 1, id: callId, name: 'weather', argumentsDelta: args })
  chunk(1, { type: 'block-end', index: 1 })
  chunk(1, { type: 'usage', usage: u1 })
  chunk(1, { type: 'finish', reason: 'tool-calls' })
  add('assistant/message', {
    turn, step: 1,
    message: { role: 'assistant', content: [{ type: 'text', text: intro }, { type: 'tool-call', id: callId, name: 'weather', arguments: args }] },
    usage: u1, finish: 'tool-calls',
  }, { surfaceOp: 'append', sourceEventSeqs: [...c1] })
  const callSeq = add('tool/call', { turn, step: 1, callId, name: 'weather', arguments: args })
  const result = JSON.stringify({ city: JSON.parse(args).city, tempC: Math.floor(rnd() * 35), note: sentence(rnd, 2, 6) })
  add('tool/result', {
    turn, step: 1, callId, message: { role: 'tool', callId, content: [{ type: 'text', text: result }] },
  }, { surfaceOp: 'append', sourceEventSeqs: [callSeq] })
  add('step/end', { turn, step: 1, outcome: { kind: 'tools' } })

  // step 2: reasoning + a streamed answer
  add('step/start', { turn, step: 2 })
  const thought = sentence(rnd, 4, 10)
  const answer = [sentence(rnd, 4, 10), sentence(rnd, 4, 10), sentence(rnd, 3, 8)]
  const u2 = { inputTokens: 80 + Math.floor(rnd() * 4000), outputTokens: 10 + Math.floor(rnd() * 80), cacheReadTokens: 40 }
  c1.length = 0
  chunk(2, { type: 'block-start', index: 0, blockType: 'reasoning' })
  chunk(2, { type: 'reasoning-delta', index: 0, text: thought })
  chunk(2, { type: 'block-end', index: 0 })
  chunk(2, { type: 'block-start', index: 1, blockType: 'text' })
  for (const a of answer) chunk(2, { type: 'text-delta', index: 1, text: a + ' ' })
  chunk(2, { type: 'block-end', index: 1 })
  chunk(2, { type: 'usage', usage: u2 })
  chunk(2, { type: 'finish', reason: 'stop' })
  add('assistant/message', {
    turn, step: 2,
    message: { role: 'assistant', content: [{ type: 'reasoning', text: thought }, { type: 'text', text: answer.map((a) => a + ' ').join('') }] },
    usage: u2, finish: 'stop',
  }, { surfaceOp: 'append', sourceEventSeqs: [...c1] })
  add('step/end', { turn, step: 2, outcome: { kind: 'stop' } })
  add('turn/end', { turn, reason: { kind: 'completed' } })
  return out
}

/** The events of a whole generated log, in memory (small logs: tests). */
export function generateEvents(opts: GenerateOptions): LogEvent[] {
  const rnd = lcg(opts.seed ?? 1)
  const t0 = opts.startTime ?? 1764450000000
  const all: LogEvent[] = []
  for (let turn = 1; all.length < opts.events; turn++) all.push(...turnEvents(turn, all.length, t0, rnd))
  return all
}

/** Writes a generated log with checksums to `file` (a new file), streaming in 4 MiB writes. */
export async function generateLogFile(file: string, opts: GenerateOptions): Promise<GenerateResult> {
  const rnd = lcg(opts.seed ?? 1)
  const t0 = opts.startTime ?? 1764450000000
  const header: LogHeader = { type: 'session', format: 1, id: opts.sessionId ?? 'bench-b1', createdAt: t0, checksums: 'crc32' }
  const fh = await open(file, 'wx')
  let bytes = 0
  let seq = 0
  let turns = 0
  try {
    let buf: string[] = [encodeHeader(header), '\n']
    let size = 0
    const flush = async () => {
      const b = Buffer.from(buf.join(''), 'utf8')
      buf = []
      size = 0
      await fh.write(b, 0, b.length)
      bytes += b.length
    }
    while (seq < opts.events) {
      turns++
      const evs = turnEvents(turns, seq, t0, rnd)
      for (const e of evs) {
        const line = encodeEvent(e, { checksums: true })
        buf.push(line, '\n')
        size += line.length + 1
      }
      seq += evs.length
      if (size >= 4 << 20) await flush()
    }
    await flush()
  } finally {
    await fh.close()
  }
  return { file, header, events: seq, turns, bytes }
}
