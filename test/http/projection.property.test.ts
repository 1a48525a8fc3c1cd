/**
 * The projection reducers (`toUIMessageChunks`, `toUIMessages`) over the fuzzer's logs: real agent
 * runs of `fuzzAgent` (text, reasoning, tool calls valid and invalid, errors, retries, cancels,
 * compaction) and the generator's valid logs. H1–H3 are this properties:
 * - H1 a resume from any seq finds its place: the chunks from seq r are the whole fold's chunks
 *   from r on, and a fold started at a message's first `turn/start` gives that message's chunks
 *   (a retry chain is one message);
 * - H2 every chunk sequence, sent as SSE, is accepted by the AI SDK's own parser
 *   (`parseJsonEventStream` with `uiMessageChunkSchema`, then `readUIMessageStream`) and rebuilds
 *   the assistant messages of `toUIMessages`, for the whole log and every prefix of it;
 * - H3 user messages keep their ids and come before the turn that answers them;
 * - H7 approvals (docs/spec/lifecycle.md §9) as the AI SDK's approval parts: a request is a tool part in
 *   `approval-requested` with `approval.id`; a person's or the clock's denial is `output-denied`;
 *   the history (`toUIMessages`) also says what the log decided (`approval.approved`, `reason`,
 *   `approval-responded` while an approved call has no result), which no stream chunk can carry,
 *   and the AI SDK's own `validateUIMessages` accepts it.
 */
import fc from 'fast-check'
import { parseJsonEventStream, readUIMessageStream, safeValidateUIMessages, uiMessageChunkSchema, type UIMessage as SdkMessage, type UIMessageChunk as SdkChunk } from 'ai6'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { toUIMessageChunks, toUIMessages, type UIMessage, type UIMessageChunkAt } from '../../http/index.js'
import { approvalsReducer, type ApprovalsState } from '../../reducers/approvals.js'
import { uiChunkEvent, UI_STREAM_DONE } from '../../http/sse.js'
import { RetryChains } from '../../http/retry-chain.js'
import { modelBefore } from '../../http/chat.js'
import { arbValidLog } from '../../testing/arbitraries/index.js'
import { fuzzAgent } from '../../testing/index.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { z } from 'zod'
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

/** What a stream cannot carry (no UI chunk sets it): the log's decision on an approval part. The
 * stream shows `approval: { id }` and keeps `approval-requested` until the call's result. */
function streamable(messages: UIMessage[]): UIMessage[] {
  return messages.map((m) => ({
    ...m,
    parts: m.parts.map((p) => {
      const a = (p as { approval?: { id: string } }).approval
      if (a === undefined) return p
      const state = (p as { state: string }).state === 'approval-responded' ? 'approval-requested' : (p as { state: string }).state
      return { ...p, state, approval: { id: a.id } } as UIMessage['parts'][number]
    }),
  }))
}

/** H7: every approval part of the history says what the log decided, in the AI SDK's states. */
function checkApprovalParts(events: readonly LogEvent[], history: UIMessage[]): void {
  const st: ApprovalsState = approvalsReducer.initial()
  const results = new Set<string>()
  for (const e of events) {
    approvalsReducer.apply(st, e)
    if (e.type === 'tool/result' && (e.surfaceOp === undefined || e.surfaceOp === 'append')) results.add((e.data as { callId: string }).callId)
  }
  const shown = new Set<string>()
  for (const m of history) {
    for (const p of m.parts) {
      const a = (p as { approval?: { id: string; approved?: boolean; reason?: string } }).approval
      if (a === undefined) continue
      const { state, toolCallId } = p as { state: string; toolCallId: string }
      const rec = st.byId[a.id]
      expect(rec, `approval ${a.id} is in the log`).toBeDefined()
      expect(rec!.callId).toBe(toolCallId)
      shown.add(a.id)
      const d = rec!.decision
      if (d === null) {
        expect(state).toBe('approval-requested')
        expect(a).toEqual({ id: a.id })
      } else if (d.decision.kind === 'approve') {
        expect(a).toEqual({ id: a.id, approved: true })
        if (results.has(toolCallId)) expect(['output-available', 'output-error']).toContain(state)
        else expect(state).toBe('approval-responded')
      } else {
        expect(state).toBe('output-denied')
        expect(a.approved).toBe(false)
        expect(typeof a.reason).toBe('string')
        if (d.by.kind === 'user' && d.decision.reason) expect(a.reason).toBe(d.decision.reason)
      }
    }
  }
  // every request whose call the turn shows has its part (a request of a call no step announced is not shown)
  for (const rec of Object.values(st.byId)) if (rec.name !== '') expect(shown.has(rec.approvalId), `approval ${rec.approvalId} shown`).toBe(true)
}

async function checkLog(events: readonly LogEvent[], cuts: readonly number[]): Promise<void> {
  const all = toUIMessageChunks(events)
  // H1: every resume seq, and folds started at each turn/start
  for (let r = 0; r <= events.length; r++) {
    expect(toUIMessageChunks(events, r)).toEqual(all.filter((c) => c.seq >= r))
  }
  // a message starts at the first turn of its retry chain (issue 38 item 5: a chain is one message)
  const chains = new RetryChains()
  for (const [i, e] of events.entries()) {
    if (chains.push(e, i) !== 'begins') continue
    expect(toUIMessageChunks(events.slice(i), e.seq, { model: modelBefore(events, i) })).toEqual(all.filter((c) => c.seq >= e.seq))
  }
  // H2: the whole log and some prefixes, through the SDK's parser
  for (const k of [events.length, ...cuts.map((c) => c % (events.length + 1))]) {
    const prefix = events.slice(0, k)
    const chunks = toUIMessageChunks(prefix)
    const { messages, errors } = await sdkRebuild(chunks)
    expect(errors).toEqual(chunks.filter((c) => c.chunk.type === 'error').map((c) => (c.chunk as { errorText: string }).errorText))
    const history = toUIMessages(prefix)
    const ours = history.filter((m) => m.role === 'assistant')
    expect(json(messages).map(published)).toEqual(streamable(json(ours)).map(published))
    // H7: the history's approval parts, each accepted by the AI SDK's own validator
    checkApprovalParts(prefix, history)
    for (const p of json(history).flatMap((m) => m.parts).filter((p) => 'approval' in p)) {
      const valid = await safeValidateUIMessages({ messages: [{ id: 'm', role: 'assistant', parts: [p] }] })
      expect(valid.success ? 'valid' : String(valid.error)).toBe('valid')
    }
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

  it('H1 H2 H3 H7: logs of real agent runs with approvals (fuzzAgent approvals: true) — requests, asks, decisions of every kind, parking, resume from any seq', async () => {
    const logs: (readonly LogEvent[])[] = []
    // a tool that always asks (with an expiry) beside the fuzzer's own: approvals in most runs
    const tools = (): readonly AnyTool[] => [
      defineTool({ name: 'pay', description: 'pay', parameters: z.object({ cents: z.number().int() }), needsApproval: true, approval: { timeoutMs: 5_000 }, execute: (a) => `paid ${a.cents}` }) as AnyTool,
      defineTool({ name: 'look', description: 'look', parameters: z.object({ q: z.string() }), execute: (a) => `saw ${a.q}` }) as AnyTool,
    ]
    const kinds = ['approve by user', 'deny by user', 'deny by expired', 'deny by superseded', 'deny by canceled']
    const decided = new Set<string>()
    // A census that does not hang on one seed's draws (they move whenever a generator grows): runs
    // of successive fixed seeds until every kind of decision is in the logs, at most four seeds.
    for (const seed of [4, 5, 6, 7]) {
      await fuzzAgent({
        numRuns: fcRuns(80), seed, approvals: true, tools,
        check: (run) => { if (run.events.some((e) => e.type === 'tool/approval-requested')) logs.push(run.events as readonly LogEvent[]) },
      })
      for (const l of logs) {
        for (const e of l) {
          if (e.type === 'tool/approval-decided') decided.add(`${(e.data as { decision: { kind: string } }).decision.kind} by ${(e.data as { by: { kind: string } }).by.kind}`)
        }
      }
      if (kinds.every((k) => decided.has(k))) break
    }
    for (const k of kinds) expect(decided, k).toContain(k)
    const types = new Set(logs.flatMap((l) => toUIMessageChunks(l).map((c) => c.chunk.type)))
    for (const t of ['tool-approval-request', 'tool-output-denied', 'tool-output-available']) expect(types).toContain(t)
    for (const [i, log] of logs.entries()) await checkLog(log, [i * 7 + 3, i * 13 + 5, i * 31 + 1, i * 3 + 2])
  }, 120_000)

  it('H1 H2 H3: the generator\'s valid logs', async () => {
    await fc.assert(fc.asyncProperty(arbValidLog(), fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), async (log, cuts) => {
      await checkLog(log, cuts)
    }), { numRuns: fcRuns(60), seed: 2213 })
  }, 120_000)
})
