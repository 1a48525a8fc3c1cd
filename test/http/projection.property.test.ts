/**
 * The projection reducers (`toUIMessageChunks`, `toUIMessages`) over the fuzzer's logs: real agent
 * runs of `fuzzAgent` (text, reasoning, tool calls valid and invalid, errors, retries, cancels,
 * compaction) and the generator's valid logs. H1–H3 are this properties:
 * - H1 a resume from any seq finds its place: the chunks from seq r are the whole fold's chunks
 *   from r on, and a fold started at a turn's `turn/start` gives that turn's chunks;
 * - H2 every chunk sequence, sent as SSE, is accepted by the AI SDK's own parser
 *   (`parseJsonEventStream` with `uiMessageChunkSchema`, then `readUIMessageStream`) and rebuilds
 *   the assistant messages of `toUIMessages`, for the whole log and every prefix of it;
 * - H3 user messages keep their ids and come before the turn that answers them.
 */
import fc from 'fast-check'
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage as SdkMessage, type UIMessageChunk as SdkChunk } from 'ai6'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { toUIMessageChunks, toUIMessages, type UIMessageChunkAt } from '../../http/index.js'
import { uiChunkEvent, UI_STREAM_DONE } from '../../http/sse.js'
import { arbValidLog } from '../../testing/arbitraries/index.js'
import { fuzzAgent } from '../../testing/index.js'
import { fcRuns } from '../fc-runs.js'

const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T

/** What the AI SDK rebuilds from these chunks sent over the wire: the last snapshot of each message id, and the errors it reported. */
async function sdkRebuild(chunks: readonly UIMessageChunkAt[]): Promise<{ messages: SdkMessage[]; errors: string[] }> {
  const body = chunks.map(uiChunkEvent).join('') + UI_STREAM_DONE
  const bytes = new ReadableStream<Uint8Array>({
    start(c) { c.enqueue(new TextEncoder().encode(body)); c.close() },
  })
  const parsed = parseJsonEventStream({ stream: bytes, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<{ success: boolean; value?: SdkChunk; error?: unknown }, SdkChunk>({
      transform(r, c) {
        if (!r.success) throw new Error(`the AI SDK refused a chunk: ${String(r.error)}`)
        c.enqueue(r.value!)
      },
    }),
  )
  const errors: string[] = []
  const last = new Map<string, SdkMessage>()
  for await (const m of readUIMessageStream({ stream: parsed, onError: (e) => errors.push((e as Error).message) })) {
    last.delete(m.id)
    last.set(m.id, m)
  }
  return { messages: [...last.values()], errors }
}

/** The SDK publishes a message at its writes, and `start-step` does not write: a step-start the
 * stream ended on is not in the last snapshot yet (it is in the next one). */
function published<M extends { parts: Array<{ type: string }> }>(m: M): M {
  let end = m.parts.length
  while (end > 0 && m.parts[end - 1]!.type === 'step-start') end--
  return { ...m, parts: m.parts.slice(0, end) }
}

async function checkLog(events: readonly LogEvent[], cuts: readonly number[]): Promise<void> {
  const all = toUIMessageChunks(events)
  // H1: every resume seq, and folds started at each turn/start
  for (let r = 0; r <= events.length; r++) {
    expect(toUIMessageChunks(events, r)).toEqual(all.filter((c) => c.seq >= r))
  }
  for (const e of events) {
    if (e.type !== 'turn/start') continue
    const from = events.indexOf(e)
    expect(toUIMessageChunks(events.slice(from), e.seq)).toEqual(all.filter((c) => c.seq >= e.seq))
  }
  // H2: the whole log and some prefixes, through the SDK's parser
  for (const k of [events.length, ...cuts.map((c) => c % (events.length + 1))]) {
    const prefix = events.slice(0, k)
    const chunks = toUIMessageChunks(prefix)
    const { messages, errors } = await sdkRebuild(chunks)
    expect(errors).toEqual(chunks.filter((c) => c.chunk.type === 'error').map((c) => (c.chunk as { errorText: string }).errorText))
    const ours = toUIMessages(prefix).filter((m) => m.role === 'assistant')
    expect(json(messages).map(published)).toEqual(json(ours).map(published))
  }
  // H3: user messages keep their ids, once each, before the turn that claimed them
  const ui = toUIMessages(events)
  const ids = ui.map((m) => m.id)
  expect(new Set(ids).size).toBe(ids.length)
  let turn: number | null = null
  let answered = false
  for (const e of events) {
    if (e.type === 'turn/start') { turn = (e.data as { turn: number }).turn; answered = false }
    if (e.type === 'turn/end') turn = null
    if (e.type === 'assistant/chunk' || e.type === 'tool/call') answered = true
    if (e.type === 'user/message' && (e.data as { message: { source: { kind: string } } }).message.source.kind === 'user') {
      const at = ids.indexOf((e.data as { message: { id: string } }).message.id)
      expect(at).toBeGreaterThanOrEqual(0)
      if (turn !== null && !answered && ids.includes(`turn-${turn}`)) expect(at).toBeLessThan(ids.indexOf(`turn-${turn}`))
    }
  }
}

describe('turnlog/http projection over the fuzzer\'s logs', () => {
  it('H1 H2 H3: logs of real agent runs (fuzzAgent) — resume from any seq, accepted and rebuilt by the AI SDK', async () => {
    const logs: (readonly LogEvent[])[] = []
    await fuzzAgent({ numRuns: fcRuns(60), seed: 2212, check: (run) => { logs.push(run.events as readonly LogEvent[]) } })
    expect(logs.length).toBeGreaterThan(0)
    const types = new Set(logs.flatMap((l) => toUIMessageChunks(l).map((c) => c.chunk.type)))
    // the runs exercise the mapping, not just its easy half
    for (const t of ['text-delta', 'tool-input-available', 'tool-output-available', 'tool-output-error', 'finish', 'abort']) expect(types).toContain(t)
    for (const [i, log] of logs.entries()) await checkLog(log, [i * 7 + 3, i * 13 + 5, i * 31 + 1])
  }, 120_000)

  it('H1 H2 H3: the generator\'s valid logs', async () => {
    await fc.assert(fc.asyncProperty(arbValidLog(), fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), async (log, cuts) => {
      await checkLog(log, cuts)
    }), { numRuns: fcRuns(60), seed: 2213 })
  }, 120_000)
})
