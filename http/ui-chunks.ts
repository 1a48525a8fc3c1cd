/**
 * The projection of a session log onto the AI SDK's UI message stream (v1): one assistant message
 * per turn, from its `turn/start` to its `turn/end`. Pure: a fold over events, no I/O.
 *
 * Each chunk carries the seq of the event that made it, and what a chunk looks like depends only
 * on the events of its own turn. So the chunks of the events from seq `r` on are the same whether
 * the fold started at 0, at the turn's `turn/start`, or anywhere before `r`: a resume from any seq
 * finds its place without replaying or duplicating anything (`toUIMessageChunks(events, r)`).
 *
 * Over ~400 lines (413), knowingly: the projection is read against the AI SDK's chunk grammar in one
 * place, and every case reads the same per-turn fold state; the input rounds' parts
 * (`data-turnlog-input`, client tools) are the next seam to split.
 *
 * The mapping (decision record "http" (docs/decisions/ in the repository)):
 * - `turn/start` → `start` (message id `turn-N`); `step/start` → `start-step`; `step/end` closes
 *   the blocks the model left open, then `finish-step`.
 * - `assistant/chunk` text and reasoning blocks → `text-*` / `reasoning-*`; a step that logged an
 *   `assistant/message` without any streamed text shows the message's blocks whole.
 * - `tool/call` → `tool-input-available` (arguments that are not JSON: `tool-input-error`);
 *   `tool/result` → `tool-output-available` / `tool-output-error` (compaction's replacements are
 *   not shown again: the UI keeps what the user saw).
 * - Approvals (docs/spec/lifecycle.md §9): `tool/approval-requested` → `tool-approval-request` (state
 *   `approval-requested`), preceded by the call's `tool-input-available` when its `tool/call` is
 *   not logged yet (`needsApproval` asks before any call of the step starts; the arguments come
 *   from the step's `assistant/message`); a denial (`tool/approval-decided` deny, by a person, the
 *   clock, new input or a cancel) → `tool-output-denied`, and that call's later `tool/call` and
 *   `DENIED` result are not shown again; an approval → nothing until the call's result (no chunk
 *   of the protocol says "approved": the answering client set `approval-responded` itself). A
 *   call that has an approval part shows no second `tool-input-available` at its `tool/call`.
 *   `step/parked` is no chunk: a chat stream ends there (http/chat.ts), so the client can answer.
 * - Input rounds (docs/spec/lifecycle.md §11): a client tool's call is its tool part, `input-available`
 *   until the client answers (the AI SDK's client-side tool flow: `onToolCall`, `addToolOutput`);
 *   an accepted answer (`tool/input-provided`) → `tool-output-available` with the accepted output
 *   (the call's `tool/result` is then not shown again unless it is an error); a declined, expired,
 *   superseded or cancelled one shows the call's error result. Every other round →
 *   `data-turnlog-input` (id: the request id; data `TurnlogInputData`), sent again with `answered`
 *   when its answer is logged.
 * - `llm/retry`, `compaction/end`, `turn/end` → `data-turnlog-retry` / `-compaction` / `-turn-end`
 *   parts (stock UIs ignore them); `turn/end` → `error` (a failed turn), `abort` (a cancelled one),
 *   then `finish`.
 * - Everything outside turns (inbox edits, headers) and user messages are not chunks:
 *   `toUIMessages` places user messages.
 */
import type { LogEvent } from '../events/envelope.js'
import { CLIENT_KEY } from '../tools/input-rounds.js'
import { RetryChains } from './retry-chain.js'
import { turnMessageId, type TurnlogInputData, type UIMessageChunk, type UIMessageChunkAt, type UIMessageMetadata } from './ui-types.js'

interface Block { kind: 'text' | 'reasoning'; id: string }

/** What a message's `finish` metadata sums over its turns (a retry chain is one message). */
interface MessageTotals { createdAt: number; inputTokens: number; outputTokens: number; reasoningTokens: number; cacheReadTokens: number; cacheWriteTokens: number }

interface TurnState {
  totals: MessageTotals
  turn: number
  /** The turn whose message this turn's chunks belong to: itself, or the first turn of its retry chain. */
  message: number
  step: number
  /** Open text/reasoning blocks of the current step, by the model's block index. */
  open: Map<number, Block>
  /** Blocks the model ended whose step has no `assistant/message` yet: their `text-end` waits for it
   * (a step that fails never logs one: its text is no answer, and is never shown `done`). */
  ending: Block[]
  /** The current step streamed text or reasoning (its `assistant/message` is then not re-shown). */
  streamed: boolean
  /** Tool call ids shown in this turn (a result needs its call's part). */
  calls: Map<string, string>
  /** The current step's tool-call blocks (callId → name, raw arguments): what a request shows. */
  blocks: Map<string, { name: string; arguments: string }>
  /** Calls with an approval part: requested, approved, or denied (their result is not re-shown). */
  approvals: Map<string, 'requested' | 'approved' | 'denied'>
  /** Client tool calls (one `client` round): open, or shown with the client's accepted output. */
  client: Map<string, 'open' | 'shown' | 'refused'>
  /** Non-client rounds shown as `data-turnlog-input` parts: request id → their data. */
  inputs: Map<string, TurnlogInputData>
}

/** True when a round's requests are a client tool's (its one `client` request). */
function isClientRound(requests: Record<string, unknown>): boolean {
  return Object.values(requests).some((q) => rec(q)['kind'] === 'client')
}

/** A read-only record guard: log data is validated, but a plugin's or a hostile log's shape is not assumed. */
function rec(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {}
}
function num(v: unknown): number { return typeof v === 'number' ? v : -1 }
function str(v: unknown): string { return typeof v === 'string' ? v : '' }

/**
 * What a tool result shows: the value the tool returned when it was a JSON value (`json`: the AI
 * SDK sends a tool's output as the value), else plain text when every block is text, else the blocks.
 */
function toolOutput(message: Record<string, unknown>, json: boolean): unknown {
  const content = Array.isArray(message['content']) ? message['content'] as unknown[] : []
  if (json && content.length === 1 && rec(content[0])['type'] === 'text') {
    try { return JSON.parse(str(rec(content[0])['text'])) } catch { /* a hostile log: the text */ }
  }
  if (content.every((b) => rec(b)['type'] === 'text')) return content.map((b) => str(rec(b)['text'])).join('')
  return content
}

function addUsage(t: MessageTotals, u: Record<string, unknown>): void {
  const n = (k: string): number => (typeof u[k] === 'number' && Number.isFinite(u[k]) ? u[k] as number : 0)
  t.inputTokens += n('inputTokens')
  t.outputTokens += n('outputTokens')
  t.reasoningTokens += n('reasoningTokens')
  t.cacheReadTokens += n('cacheReadTokens')
  t.cacheWriteTokens += n('cacheWriteTokens')
}

function finishReason(kind: string): 'stop' | 'length' | 'error' | 'other' {
  if (kind === 'completed') return 'stop'
  if (kind === 'max-tokens') return 'length'
  if (kind === 'error') return 'error'
  return 'other'
}

/**
 * An incremental projector: feed every event in seq order with `push`; it returns the chunks that
 * event makes. Starting one at a turn's `turn/start` gives the same chunks for that turn as
 * starting at seq 0. O(1) per event apart from the event's own content.
 */
export class UIChunkProjector {
  private t: TurnState | null = null
  private readonly chains = new RetryChains()
  private length = 0
  private model: string | undefined
  private pendingTotals: MessageTotals | null = null

  /** `context.model`: the model in force before the first event pushed (the last `request/header`
   * before it), for a projector started at a message's first `turn/start`. */
  constructor(context: { model?: string } = {}) {
    this.model = context.model
  }

  /** The turn that is open after the events pushed so far, or null. */
  get openTurn(): number | null { return this.t?.turn ?? null }

  push(e: LogEvent): UIMessageChunkAt[] {
    const out: UIMessageChunkAt[] = []
    const d = rec(e.data)
    const emit = (chunk: UIMessageChunk): void => { out.push({ seq: e.seq, turn: this.t!.message, chunk }) }
    const chain = this.chains.push(e, this.length++)
    if (e.type === 'turn/start') {
      const turn = num(d['turn'])
      // a retry turn goes on with the message of the chain's first turn (one answer, several attempts)
      const message = chain === 'continues' ? this.chains.headTurn! : turn
      const totals: MessageTotals = chain === 'continues' && this.pendingTotals !== null
        ? this.pendingTotals
        : { createdAt: e.time, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
      this.pendingTotals = null
      this.t = { totals, turn, message, step: -1, open: new Map(), ending: [], streamed: false, calls: new Map(), blocks: new Map(), approvals: new Map(), client: new Map(), inputs: new Map() }
      if (chain !== 'continues') emit({ type: 'start', messageId: turnMessageId(turn), messageMetadata: { createdAt: e.time } })
      return out
    }
    if (e.type === 'request/header') this.model = str(rec(d['config'])['model']) || this.model
    const t = this.t
    if (t === null) return out
    switch (e.type) {
      case 'step/start':
        t.step = num(d['step'])
        t.open.clear()
        t.ending = []
        t.blocks.clear()
        t.streamed = false
        emit({ type: 'start-step' })
        break
      case 'assistant/chunk':
        this.chunk(rec(d['chunk']), emit)
        break
      case 'assistant/message': {
        const message = rec(d['message'])
        if (e.surfaceOp === undefined || e.surfaceOp === 'append') addUsage(t.totals, rec(d['usage']))
        if (e.surfaceOp === undefined || e.surfaceOp === 'append') {
          for (const raw of Array.isArray(message['content']) ? message['content'] as unknown[] : []) {
            const b = rec(raw)
            if (b['type'] === 'tool-call' && typeof b['id'] === 'string') t.blocks.set(b['id'], { name: str(b['name']), arguments: str(b['arguments']) })
          }
        }
        // the step's text is the message now: what streamed is finished
        if (e.surfaceOp === undefined || e.surfaceOp === 'append') this.closeBlocks(emit)
        if (!t.streamed) this.wholeMessage(message, emit)
        break
      }
      case 'tool/call': {
        const callId = str(d['callId'])
        if (t.approvals.has(callId)) break // shown with its approval request already
        this.showCall(callId, str(d['name']), str(d['arguments']), emit)
        break
      }
      case 'tool/approval-requested': {
        const callId = str(d['callId'])
        if (!t.calls.has(callId)) {
          const block = t.blocks.get(callId)
          if (block === undefined) break // a request for a call the step never announced: nothing can hold it
          this.showCall(callId, block.name, block.arguments, emit)
        }
        t.approvals.set(callId, 'requested')
        emit({ type: 'tool-approval-request', approvalId: str(d['approvalId']), toolCallId: callId })
        break
      }
      case 'tool/approval-decided': {
        const callId = str(d['callId'])
        if (t.approvals.get(callId) !== 'requested') break
        if (rec(d['decision'])['kind'] === 'deny') {
          t.approvals.set(callId, 'denied')
          emit({ type: 'tool-output-denied', toolCallId: callId })
        } else t.approvals.set(callId, 'approved')
        break
      }
      case 'tool/input-requested': {
        const callId = str(d['callId'])
        const requests = rec(d['requests'])
        if (!t.calls.has(callId)) {
          const block = t.blocks.get(callId)
          if (block === undefined) break // a round of a call the step never announced: nothing can hold it
          this.showCall(callId, block.name, block.arguments, emit)
        }
        // a client tool's round is its call's part, `input-available` until the client answers
        if (isClientRound(requests)) { t.client.set(callId, 'open'); break }
        const data: TurnlogInputData = {
          requestId: str(d['requestId']), callId, toolName: t.calls.get(callId) ?? '', round: num(d['round']), requests,
          ...(typeof d['expiresAt'] === 'number' ? { expiresAt: d['expiresAt'] } : {}),
        }
        t.inputs.set(data.requestId, data)
        emit({ type: 'data-turnlog-input', id: data.requestId, data })
        break
      }
      case 'tool/input-provided': {
        const callId = str(d['callId'])
        const answer = rec(d['answer'])
        const action = str(answer['action'])
        if (t.client.get(callId) === 'open') {
          // the accepted output is the call's result: shown now, as the client's `addToolOutput` holds it
          if (action === 'accept') {
            t.client.set(callId, 'shown')
            emit({ type: 'tool-output-available', toolCallId: callId, output: rec(answer['responses'])[CLIENT_KEY] })
          } else t.client.set(callId, 'refused')
          break
        }
        const shown = t.inputs.get(str(d['requestId']))
        if (shown === undefined) break
        const data: TurnlogInputData = { ...shown, answered: { action: action as 'accept' | 'decline' | 'cancel', by: str(rec(d['by'])['kind']), at: e.time } }
        t.inputs.set(data.requestId, data)
        emit({ type: 'data-turnlog-input', id: data.requestId, data })
        break
      }
      case 'tool/result': {
        if (e.surfaceOp !== undefined && e.surfaceOp !== 'append') break // compaction's replacement
        const callId = str(d['callId'])
        if (!t.calls.has(callId)) break // a result for a call this turn never showed
        if (t.approvals.get(callId) === 'denied') break // shown as denied at the decision
        if (t.client.get(callId) === 'shown' && d['error'] === undefined) break // shown with its answer
        const error = d['error']
        if (error !== undefined) emit({ type: 'tool-output-error', toolCallId: callId, errorText: str(rec(error)['message']) })
        else emit({ type: 'tool-output-available', toolCallId: callId, output: toolOutput(rec(d['message']), d['json'] === true) })
        break
      }
      case 'step/end': {
        const outcome = rec(d['outcome'])
        // a failed attempt's text is no answer (the transcript has no message for it): it stays
        // unfinished, marked with the failure, never `done`
        if (outcome['kind'] === 'failed') this.failBlocks(rec(outcome['failure']), emit)
        else this.closeBlocks(emit)
        emit({ type: 'finish-step' })
        break
      }
      case 'llm/retry':
        emit({ type: 'data-turnlog-retry', id: `retry-${e.seq}`, data: { attempt: d['attempt'], delayMs: d['delayMs'], failure: d['failure'] } })
        break
      case 'compaction/end':
        emit({ type: 'data-turnlog-compaction', id: `compaction-${e.seq}`, data: { compactionId: d['compactionId'], ...(d['error'] !== undefined ? { error: d['error'] } : {}) } })
        break
      case 'turn/end': {
        const reason = rec(d['reason'])
        const kind = str(reason['kind'])
        if (this.chains.retryOwed) {
          // the retry turn follows at once and goes on with this message: no error, no finish
          this.failBlocks(rec(reason['failure']), emit)
          emit({ type: 'data-turnlog-turn-end', id: `turn-end-${t.turn}`, data: { reason } })
          this.pendingTotals = t.totals
          this.t = null
          break
        }
        this.closeBlocks(emit)
        emit({ type: 'data-turnlog-turn-end', id: `turn-end-${t.turn}`, data: { reason } })
        if (kind === 'error') emit({ type: 'error', errorText: str(rec(reason['failure'])['message']) || 'the turn failed' })
        if (kind === 'aborted') emit({ type: 'abort', reason: str(rec(reason['cause'])['kind']) || 'aborted' })
        emit({ type: 'finish', finishReason: finishReason(kind), messageMetadata: this.finishMetadata(t.totals, e.time) })
        this.t = null
        break
      }
      default:
        break
    }
    return out
  }

  /** The `finish` metadata: when the message began and ended, its model, and the usage of all its turns. */
  private finishMetadata(t: MessageTotals, time: number): UIMessageMetadata {
    const usage: UIMessageMetadata['usage'] = {
      inputTokens: t.inputTokens,
      outputTokens: t.outputTokens + t.reasoningTokens,
      totalTokens: t.inputTokens + t.outputTokens + t.reasoningTokens,
      ...(t.reasoningTokens > 0 ? { reasoningTokens: t.reasoningTokens } : {}),
      ...(t.cacheReadTokens > 0 ? { cacheReadTokens: t.cacheReadTokens } : {}),
      ...(t.cacheWriteTokens > 0 ? { cacheWriteTokens: t.cacheWriteTokens } : {}),
    }
    return { createdAt: t.createdAt, finishedAt: time, durationMs: time - t.createdAt, ...(this.model !== undefined ? { model: this.model } : {}), usage }
  }

  private chunk(c: Record<string, unknown>, emit: (c: UIMessageChunk) => void): void {
    const t = this.t!
    const index = num(c['index'])
    switch (c['type']) {
      case 'block-start': {
        const kind = c['blockType']
        if (kind !== 'text' && kind !== 'reasoning') return
        if (t.open.has(index)) return
        const block: Block = { kind, id: `${kind === 'text' ? 't' : 'r'}${t.turn}.${t.step}-${index}` }
        t.open.set(index, block)
        t.streamed = true
        emit(kind === 'text' ? { type: 'text-start', id: block.id } : { type: 'reasoning-start', id: block.id })
        return
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const block = t.open.get(index)
        const kind = c['type'] === 'text-delta' ? 'text' : 'reasoning'
        if (block?.kind !== kind) return
        const delta = str(c['text'])
        if (delta === '') return
        emit(kind === 'text' ? { type: 'text-delta', id: block.id, delta } : { type: 'reasoning-delta', id: block.id, delta })
        return
      }
      case 'block-end': {
        const block = t.open.get(index)
        if (!block) return
        t.open.delete(index)
        t.ending.push(block)
        return
      }
      default:
        return
    }
  }

  /** A call's tool part: its input, or its raw arguments when they are not JSON. */
  private showCall(callId: string, toolName: string, raw: string, emit: (c: UIMessageChunk) => void): void {
    this.t!.calls.set(callId, toolName)
    let input: unknown
    try {
      input = JSON.parse(raw)
    } catch {
      emit({ type: 'tool-input-error', toolCallId: callId, toolName, input: raw, errorText: 'the arguments are not JSON' })
      return
    }
    emit({ type: 'tool-input-available', toolCallId: callId, toolName, input })
  }

  private closeBlocks(emit: (c: UIMessageChunk) => void): void {
    const t = this.t!
    for (const block of [...t.ending, ...t.open.values()]) {
      emit(block.kind === 'text' ? { type: 'text-end', id: block.id } : { type: 'reasoning-end', id: block.id })
    }
    t.ending = []
    t.open.clear()
  }

  /** The blocks of a failed step: left unfinished, marked `providerMetadata.turnlog.failed` (the failure's code and message). */
  private failBlocks(failure: Record<string, unknown>, emit: (c: UIMessageChunk) => void): void {
    const t = this.t!
    const providerMetadata = { turnlog: { failed: { code: str(failure['code']), message: str(failure['message']) } } }
    for (const block of [...t.ending, ...t.open.values()]) {
      emit(block.kind === 'text' ? { type: 'text-delta', id: block.id, delta: '', providerMetadata } : { type: 'reasoning-delta', id: block.id, delta: '', providerMetadata })
    }
    t.ending = []
    t.open.clear()
  }

  /** A step whose text was not streamed (an adapter without deltas, an imported log): its blocks whole. */
  private wholeMessage(message: Record<string, unknown>, emit: (c: UIMessageChunk) => void): void {
    const t = this.t!
    const content = Array.isArray(message['content']) ? message['content'] as unknown[] : []
    content.forEach((raw, i) => {
      const b = rec(raw)
      const text = str(b['text'])
      if ((b['type'] !== 'text' && b['type'] !== 'reasoning') || text === '') return
      const id = `${b['type'] === 'text' ? 'm' : 'n'}${t.turn}.${t.step}-${i}`
      if (b['type'] === 'text') {
        emit({ type: 'text-start', id }); emit({ type: 'text-delta', id, delta: text }); emit({ type: 'text-end', id })
      } else {
        emit({ type: 'reasoning-start', id }); emit({ type: 'reasoning-delta', id, delta: text }); emit({ type: 'reasoning-end', id })
      }
    })
  }
}

/**
 * The UI message stream chunks of the events with `seq >= fromSeq` (default 0), each with its seq
 * and turn. Events before `fromSeq` are folded for context only. Pure.
 */
export function toUIMessageChunks(events: readonly LogEvent[], fromSeq = 0, context: { model?: string } = {}): UIMessageChunkAt[] {
  const p = new UIChunkProjector(context)
  const out: UIMessageChunkAt[] = []
  for (const e of events) {
    const chunks = p.push(e)
    if (e.seq >= fromSeq) for (const c of chunks) out.push(c)
  }
  return out
}
