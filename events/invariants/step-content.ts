/**
 * What happens inside one step: L5 (every call answered once), L6 (model order of calls and
 * results), L7 (the assistant message cites its chunks), L9 (the chunk stream grammar), L10
 * (max-tokens runs no tool). State is per open step and is dropped at the next `step/start`.
 *
 * Only events that stand inside an open step are judged here; a content event outside a step is
 * an L4 violation (structure.ts) and is not judged again.
 */
import type { StreamChunk } from '../chunks.js'
import type { SessionEvent } from '../envelope.js'
import { isRunnableCall } from '../messages.js'
import { StreamGrammar } from '../grammar.js'
import type { TurnState } from './structure.js'
import type { Emit } from './types.js'

interface Call {
  /** Position among the step's calls (model order). */
  index: number
  answered: boolean
}

export class StepContent {
  /** The step's chunks and their seqs, in log order. */
  #chunks: StreamChunk[] = []
  #chunkSeqs: number[] = []
  #grammar = new StreamGrammar()
  /**
   * `StreamGrammar.push` advances only when a chunk fits, and `check` must not change state. So
   * `check` pushes, remembers the event it pushed, and `apply` of that same event keeps the
   * result. If anything else comes first (the event was refused), the grammar is rebuilt from
   * the step's applied chunks before its next use: O(chunks) on a refusal, O(1) otherwise.
   */
  #tentative: object | null = null
  /** The success `finish` reason the stream ended with, once it has. */
  #finish: string | null = null
  /** An `assistant/message` (of any kind) was appended in this step. */
  #messageSeen = false
  /** The step's non-interrupted `assistant/message`: its finish and its tool-call block ids. */
  #message: { finish: string; blocks: string[] } | null = null
  readonly #calls = new Map<string, Call>()
  #callOrder: string[] = []
  /** The index (in #callOrder) of the first call without a result. */
  #nextResult = 0
  /** The block index (in #message.blocks) of the last tool/call. */
  #lastBlock = -1

  constructor(readonly turns: TurnState) {}

  check(e: SessionEvent, emit: Emit): void {
    if (this.turns.openStep === null) return
    switch (e.type) {
      case 'assistant/chunk': {
        if (this.#messageSeen) emit('L7', `assistant/chunk after the step's assistant/message`)
        const err = this.#usableGrammar().push(e.data.chunk)
        if (err !== null) emit('L9', `stream grammar: ${err}`)
        else this.#tentative = e
        return
      }
      case 'assistant/message': {
        if (e.surfaceOp !== 'append') return
        const src = e.sourceEventSeqs ?? []
        if (!sameSeqs(src, this.#chunkSeqs)) {
          emit('L7', `assistant/message cites [${src.join(',')}], but the step's chunks are [${this.#chunkSeqs.join(',')}]`)
        }
        if (e.data.interrupted) return
        if (this.#message !== null) emit('L7', 'a second non-interrupted assistant/message in the step')
        if (this.#finish === null) emit('L9', 'assistant/message without a success finish chunk before it')
        else if (this.#finish !== e.data.finish) {
          emit('L9', `assistant/message finish ${e.data.finish}, but the stream finished ${this.#finish}`)
        }
        return
      }
      case 'tool/call': {
        const id = e.data.callId
        if (this.#calls.has(id)) emit('L5', `tool/call ${id} is the step's second call with that callId`)
        const m = this.#message
        if (m?.finish === 'max-tokens') {
          emit('L10', `tool/call ${id} after the step's max-tokens assistant/message`)
        } else if (m === null) {
          emit('L6', `tool/call ${id} before the step's (non-interrupted) assistant/message`)
        } else if (m.blocks.indexOf(id, this.#lastBlock + 1) < 0) {
          emit('L6', m.blocks.includes(id)
            ? `tool/call ${id} out of the model's block order`
            : `tool/call ${id} names no tool-call block of the step's assistant/message`)
        }
        return
      }
      case 'tool/result': {
        if (e.surfaceOp !== 'append') return
        const id = e.data.callId
        const c = this.#calls.get(id)
        if (c === undefined) emit('L5', `tool/result ${id} without a tool/call ${id} in the step`)
        else if (c.answered) emit('L5', `a second tool/result for call ${id}`)
        else if (c.index !== this.#nextResult) {
          emit('L6', `tool/result ${id} out of call order: call ${this.#callOrder[this.#nextResult]} is answered first`)
        }
        return
      }
      case 'step/end': {
        const open = this.#callOrder.filter((id) => !this.#calls.get(id)!.answered)
        if (open.length > 0) emit('L5', `step/end with tool/call(s) ${open.join(', ')} unanswered`)
        if (e.data.outcome.kind === 'max-tokens' && this.#message?.finish !== 'max-tokens') {
          emit('L10', 'step ended max-tokens without a max-tokens assistant/message')
        }
        return
      }
      default:
        return
    }
  }

  apply(e: SessionEvent, at: number = e.seq): void {
    if (e.type === 'step/start') {
      this.#reset()
      return
    }
    if (this.turns.openStep === null) return
    switch (e.type) {
      case 'assistant/chunk': {
        const chunk = e.data.chunk
        let fits: boolean
        if (this.#tentative === e) {
          this.#tentative = null
          fits = true
        } else {
          fits = this.#usableGrammar().push(chunk) === null
        }
        this.#chunks.push(chunk)
        this.#chunkSeqs.push(at)
        if (fits && chunk.type === 'finish' && chunk.reason !== 'error' && chunk.reason !== 'aborted') {
          this.#finish = chunk.reason
        }
        return
      }
      case 'assistant/message':
        if (e.surfaceOp !== 'append') return
        this.#messageSeen = true
        if (!e.data.interrupted && this.#message === null) {
          const blocks: string[] = []
          for (const b of e.data.message.content) if (isRunnableCall(b)) blocks.push(b.id)
          this.#message = { finish: e.data.finish, blocks }
        }
        return
      case 'tool/call': {
        const id = e.data.callId
        if (!this.#calls.has(id)) {
          this.#calls.set(id, { index: this.#callOrder.length, answered: false })
          this.#callOrder.push(id)
        }
        const at = this.#message ? this.#message.blocks.indexOf(id, this.#lastBlock + 1) : -1
        if (at >= 0) this.#lastBlock = at
        return
      }
      case 'tool/result': {
        if (e.surfaceOp !== 'append') return
        const c = this.#calls.get(e.data.callId)
        if (c === undefined || c.answered) return
        c.answered = true
        while (this.#nextResult < this.#callOrder.length && this.#calls.get(this.#callOrder[this.#nextResult]!)!.answered) {
          this.#nextResult++
        }
        return
      }
      default:
        return
    }
  }

  /** The grammar over exactly the applied chunks (rebuilt if a `check` pushed a chunk that was not applied). */
  #usableGrammar(): StreamGrammar {
    if (this.#tentative !== null) {
      this.#grammar = new StreamGrammar()
      for (const c of this.#chunks) this.#grammar.push(c)
      this.#tentative = null
    }
    return this.#grammar
  }

  #reset(): void {
    this.#chunks = []
    this.#chunkSeqs = []
    this.#grammar = new StreamGrammar()
    this.#tentative = null
    this.#finish = null
    this.#messageSeen = false
    this.#message = null
    this.#calls.clear()
    this.#callOrder = []
    this.#nextResult = 0
    this.#lastBlock = -1
  }
}

function sameSeqs(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
