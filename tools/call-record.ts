/**
 * One tool call as the scheduler tracks it: its position in the per-call machine (`callTransition`,
 * the pure form of `callMachine`), what it resolved to, and how far it got (started, settled,
 * committed).
 */
import type { ToolCallBlock } from '../events/index.js'
import { callTransition, initialCallSnapshot, type CallEvent, type CallSnapshot } from './call-machine.js'
import type { PreparedCall } from './define.js'
import type { ToolOutcome } from './types.js'

export interface CallRec {
  readonly index: number
  readonly call: ToolCallBlock
  /** The call's lifecycle position (`callTransition`, the pure form of `callMachine`). */
  machine: CallSnapshot
  prepared: PreparedCall | null
  /** Seq of its `tool/call`; null while not started. */
  callSeq: number | null
  /** Set when the call settles (its body ended, or it did not run). */
  outcome: ToolOutcome | null
  committed: boolean
  /** `appendResult` was tried for it (a throw there makes its own outcome suspect). */
  commitTried: boolean
  concludeRequested: boolean
  controller: AbortController | null
}

/** A call not started yet. */
export function newCallRec(call: ToolCallBlock, index: number): CallRec {
  return {
    index,
    call,
    machine: initialCallSnapshot(),
    prepared: null,
    callSeq: null,
    outcome: null,
    committed: false,
    commitTried: false,
    concludeRequested: false,
    controller: null,
  }
}

/**
 * Moves the call's machine. An event its state does not accept leaves it where it is, as an XState
 * actor ignores such an event (callMachine's own semantics); the scheduler's 'at most one result
 * per call' (L5) rests on `committed`/`commitTried`, not on this.
 */
export function send(rec: CallRec, event: CallEvent): void {
  rec.machine = callTransition(rec.machine, rec.call.name, event)
}
