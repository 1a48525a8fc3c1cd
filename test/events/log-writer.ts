/**
 * A tiny test driver that appends well-formed events to a `Session` the way the agent would
 * (canonical order of docs/decisions/event-vocabulary.md), so each test can build a valid prefix and then try
 * one bad append. Not a fixture generator: the fast-check one lives in testing/arbitraries/.
 */
import { expect } from 'vitest'
import type { EventDraft, LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import type { CheckerOptions } from '../../events/invariants/types.js'
import type { Block, Failure, UserMessage } from '../../events/messages.js'
import { Session } from '../../events/session.js'

export const T0 = 1764450000000

export const um = (id: string, text = id, source: UserMessage['source'] = { kind: 'user' }): UserMessage => ({
  id, role: 'user', content: [{ type: 'text', text }], source,
})
export const text = (t: string): Block => ({ type: 'text', text: t })
export const toolBlock = (id: string, name = 'echo', args = '{}'): Block => ({ type: 'tool-call', id, name, arguments: args })
export const fail = (code: string): Failure => ({ code, message: code.toLowerCase() })

export class LogWriter {
  readonly session: Session
  turn = 0
  step = 0
  chunks: number[] = []
  callSeq = new Map<string, number>()
  readonly lists: Record<'next-turn' | 'next-step', UserMessage[]> = { 'next-turn': [], 'next-step': [] }

  constructor(check: CheckerOptions = {}) {
    let t = 0
    this.session = new Session({ id: 'test', clock: () => T0 + t++, check })
  }

  get next(): number {
    return this.session.length
  }

  append(draft: EventDraft): LogEvent {
    return this.session.append(draft)
  }

  send(m: UserMessage, target: 'next-turn' | 'next-step' = 'next-turn'): number {
    const list = this.lists[target]
    const e = this.append({ type: 'agent/inbox/spliced', data: { target, start: list.length, inserted: [m] } })
    list.push(m)
    return e.seq
  }

  claim(withPrompt = true): UserMessage[] {
    const batch: UserMessage[] = []
    const ns = this.lists['next-step']
    if (ns.length > 0) {
      this.append({ type: 'agent/inbox/spliced', data: { target: 'next-step', start: 0, removedCount: ns.length, inserted: [] } })
      batch.push(...ns.splice(0))
    }
    const nt = this.lists['next-turn']
    if (withPrompt && nt.length > 0) {
      this.append({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } })
      batch.push(nt.shift()!)
    }
    return batch
  }

  turnStart(retryOf?: number): number {
    this.turn++
    this.step = 0
    return this.append({
      type: 'turn/start',
      data: retryOf === undefined ? { turn: this.turn } : { turn: this.turn, cause: { kind: 'retry', of: retryOf } },
    }).seq
  }

  turnEnd(reason: Extract<EventDraft, { type: 'turn/end' }>['data']['reason'] = { kind: 'completed' }): number {
    return this.append({ type: 'turn/end', data: { turn: this.turn, reason } }).seq
  }

  stepStart(msgs: UserMessage[] = []): number {
    this.step++
    this.chunks = []
    this.callSeq.clear()
    const s = this.append({ type: 'step/start', data: { turn: this.turn, step: this.step } }).seq
    for (const m of msgs) this.append({ type: 'user/message', data: { message: m }, surfaceOp: 'append' })
    return s
  }

  stepEnd(outcome: Extract<EventDraft, { type: 'step/end' }>['data']['outcome']): number {
    return this.append({ type: 'step/end', data: { turn: this.turn, step: this.step, outcome } }).seq
  }

  chunk(chunk: Extract<EventDraft, { type: 'assistant/chunk' }>['data']['chunk']): number {
    const s = this.append({ type: 'assistant/chunk', data: { turn: this.turn, step: this.step, chunk } }).seq
    this.chunks.push(s)
    return s
  }

  /** One block per entry, then usage and (unless null) the finish. */
  stream(blocks: Block[], finish: 'stop' | 'tool-calls' | 'max-tokens' | null): void {
    blocks.forEach((b, index) => {
      if (b.type !== 'text' && b.type !== 'reasoning' && b.type !== 'tool-call') throw new Error(`no ${b.type} blocks in streams`)
      this.chunk({ type: 'block-start', index, blockType: b.type })
      if (b.type === 'text') this.chunk({ type: 'text-delta', index, text: b.text })
      else if (b.type === 'reasoning') this.chunk({ type: 'reasoning-delta', index, text: b.text })
      else this.chunk({ type: 'tool-call-delta', index, id: b.id, name: b.name, argumentsDelta: b.arguments })
      this.chunk({ type: 'block-end', index })
    })
    this.chunk({ type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } })
    if (finish) this.chunk({ type: 'finish', reason: finish })
  }

  message(content: Block[], finish: 'stop' | 'tool-calls' | 'max-tokens', interrupted = false): number {
    return this.append({
      type: 'assistant/message',
      data: interrupted
        ? { turn: this.turn, step: this.step, message: { role: 'assistant', content }, finish, interrupted: true }
        : { turn: this.turn, step: this.step, message: { role: 'assistant', content }, finish, usage: { inputTokens: 10, outputTokens: 5 } },
      surfaceOp: 'append',
      sourceEventSeqs: [...this.chunks],
    }).seq
  }

  call(id: string): number {
    const s = this.append({ type: 'tool/call', data: { turn: this.turn, step: this.step, callId: id, name: 'echo', arguments: '{}' } }).seq
    this.callSeq.set(id, s)
    return s
  }

  /** The draft of an appended tool/result for `id` (not appended). */
  resultDraft(id: string, out = 'ok'): EventDraft {
    return {
      type: 'tool/result',
      data: { turn: this.turn, step: this.step, callId: id, message: { role: 'tool', callId: id, content: [text(out)] } },
      surfaceOp: 'append',
      sourceEventSeqs: this.callSeq.has(id) ? [this.callSeq.get(id)!] : [Math.max(0, this.next - 1)],
    }
  }

  result(id: string, out = 'ok'): number {
    return this.append(this.resultDraft(id, out)).seq
  }

  /** An ordinary text step: stream, message, step/end stop. */
  textStep(t: string, msgs: UserMessage[] = []): number {
    this.stepStart(msgs)
    this.stream([text(t)], 'stop')
    this.message([text(t)], 'stop')
    return this.stepEnd({ kind: 'stop' })
  }

  /** A step with tool calls answered in order, ending `tools`. */
  toolStep(ids: string[], msgs: UserMessage[] = []): number {
    this.stepStart(msgs)
    const blocks = ids.map((id) => toolBlock(id))
    this.stream(blocks, 'tool-calls')
    this.message(blocks, 'tool-calls')
    for (const id of ids) this.call(id)
    for (const id of ids) this.result(id)
    return this.stepEnd({ kind: 'tools' })
  }

  /** A step whose request failed in-band. */
  failedStep(code: string, msgs: UserMessage[] = []): number {
    this.stepStart(msgs)
    this.chunk({ type: 'finish', reason: 'error', failure: fail(code) })
    return this.stepEnd({ kind: 'failed', failure: fail(code) })
  }

  /** send, turn/start, claim, one text step, turn/end completed. */
  simpleTurn(id: string): number {
    this.send(um(id))
    this.turnStart()
    this.textStep(`answer to ${id}`, this.claim())
    return this.turnEnd()
  }
}

/**
 * Appends `draft` and expects the session to refuse it with an INVARIANT error naming `invariant`
 * at the next seq, leaving the log unchanged.
 */
export function expectRefused(w: LogWriter, draft: EventDraft | (() => unknown), invariant: string): TurnlogError {
  const before = w.session.length
  const last = w.session.lastEvent
  let caught: unknown
  try {
    if (typeof draft === 'function') draft()
    else w.session.append(draft)
  } catch (err) {
    caught = err
  }
  expect(TurnlogError.is(caught, 'INVARIANT'), `expected an INVARIANT error, got ${String(caught)}`).toBe(true)
  const err = caught as TurnlogError
  expect({ invariant: err.invariant, seq: err.seq }, err.message).toEqual({ invariant, seq: before })
  expect(w.session.length).toBe(before)
  expect(w.session.lastEvent).toBe(last)
  return err
}
