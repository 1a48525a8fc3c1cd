/**
 * L14 (the compaction bracket) and L15 (a prune is followed by its replacing tool/result).
 * "Right after" means the next core event: extension events are ignored by the checker.
 */
import type { SessionEvent } from '../envelope.js'
import type { Emit } from './types.js'

type Expect =
  | { kind: 'summary'; compactionId: string }
  | { kind: 'prune'; callId: string; shadowedSeq: number }

export class CompactionState {
  /** The open bracket, or null. */
  #bracket: { id: string; summary: boolean } | null = null
  /** What the next core event must be. */
  #expect: Expect | null = null

  check(e: SessionEvent, emit: Emit): void {
    const x = this.#expect
    if (x?.kind === 'summary') {
      if (e.type !== 'user/message' || e.surfaceOp === undefined || e.surfaceOp === 'append' ||
        e.data.message.source.kind !== 'compaction') {
        emit('L14', `compaction/summary of ${x.compactionId} is not followed directly by its replacing user/message ` +
          `(source compaction, surfaceOp replace), but by ${e.type}`)
      }
    } else if (x?.kind === 'prune') {
      const op = e.surfaceOp
      if (e.type !== 'tool/result' || op === undefined || op === 'append') {
        emit('L15', `compaction/prune of ${x.callId} is not followed directly by a replacing tool/result, but by ${e.type}`)
      } else if (op.start !== x.shadowedSeq || op.end !== x.shadowedSeq) {
        emit('L15', `the tool/result after compaction/prune replaces ${op.start}..${op.end}, not exactly ${x.shadowedSeq}`)
      } else if (e.data.callId !== x.callId) {
        emit('L15', `the tool/result after compaction/prune of ${x.callId} has callId ${e.data.callId}`)
      }
    }
    const b = this.#bracket
    switch (e.type) {
      case 'compaction/start':
        if (b !== null) emit('L14', `compaction/start ${e.data.compactionId} while compaction ${b.id} is open`)
        return
      case 'compaction/summary':
        if (b === null) emit('L14', `compaction/summary ${e.data.compactionId} with no compaction open`)
        else if (b.id !== e.data.compactionId) emit('L14', `compaction/summary ${e.data.compactionId}, but compaction ${b.id} is open`)
        else if (b.summary) emit('L14', `a second compaction/summary in compaction ${b.id}`)
        return
      case 'compaction/end':
        if (b === null) emit('L14', `compaction/end ${e.data.compactionId} with no compaction open`)
        else if (b.id !== e.data.compactionId) emit('L14', `compaction/end ${e.data.compactionId}, but compaction ${b.id} is open`)
        else if (e.data.error === undefined && !b.summary) emit('L14', `compaction ${b.id} ended without error and without a summary`)
        return
      case 'turn/start':
      case 'turn/end':
        if (b !== null) emit('L14', `${e.type} while compaction ${b.id} is open`)
        return
      default:
        return
    }
  }

  apply(e: SessionEvent): void {
    this.#expect = null
    switch (e.type) {
      case 'compaction/start':
        this.#bracket = { id: e.data.compactionId, summary: false }
        return
      case 'compaction/summary':
        if (this.#bracket !== null && this.#bracket.id === e.data.compactionId) this.#bracket.summary = true
        this.#expect = { kind: 'summary', compactionId: e.data.compactionId }
        return
      case 'compaction/end':
        this.#bracket = null // best effort after a mismatched id too: an end closes the open bracket
        return
      case 'compaction/prune':
        this.#expect = { kind: 'prune', callId: e.data.callId, shadowedSeq: e.data.shadowedSeq }
        return
      default:
        return
    }
  }
}
