/**
 * Facts read off single recorded events: what a `tool/result` says about when its body settled
 * relative to a cancel, which events only a cancel makes. Pure.
 */
import type { EventOf, LogEvent, StreamChunk } from '../../events/index.js'

export const key3 = (turn: number, step: number, callId: string): string => `${turn}.${step}.${callId}`
export const key2 = (turn: number, step: number): string => `${turn}.${step}`

/** What a dead process waits on. */
export const NEVER: Promise<never> = new Promise<never>(() => {})

export function isAbortedBeforeBody(r: EventOf<'tool/result'>): boolean {
  return r.data.error?.code === 'ABORTED' && r.data.error.message.includes('before its body started')
}

export function isAbortedWhileRunning(r: EventOf<'tool/result'>): boolean {
  return r.data.error?.code === 'ABORTED' && !isAbortedBeforeBody(r)
}

/** An outcome a body gives as well when it settles after the cancel (within the grace period):
 * an output (also an invalid one) or a timeout. A throw after the cancel is `ABORTED`. */
export function settlesAfterCancel(r: EventOf<'tool/result'>): boolean {
  const code = r.data.error?.code
  return code === undefined || code === 'TOOL_TIMEOUT' || code === 'INVALID_TOOL_OUTPUT'
}

export function isExecuteHookError(r: EventOf<'tool/result'>): boolean {
  return r.data.error?.code === 'HOOK_ERROR' && r.data.error.message.includes('the tools/execute hook failed')
}

/** Events only a cancel produces (with the event after `e`, for a synthetic pair). */
export function isCancelEffect(e: LogEvent, after: LogEvent | undefined): boolean {
  switch (e.type) {
    case 'turn/end':
      return (e as EventOf<'turn/end'>).data.reason.kind === 'aborted'
    case 'step/end':
      return (e as EventOf<'step/end'>).data.outcome.kind === 'aborted'
    case 'compaction/end':
      return (e as EventOf<'compaction/end'>).data.error?.code === 'ABORTED'
    case 'assistant/message':
      return (e as EventOf<'assistant/message'>).data.interrupted === true
    case 'tool/result': {
      const code = (e as EventOf<'tool/result'>).data.error?.code
      return code === 'ABORTED' || (code === 'ABORTED_BEFORE_DISPATCH' && (e as EventOf<'tool/result'>).data.error!.message.includes('cancelled'))
    }
    case 'tool/approval-decided':
      return (e as EventOf<'tool/approval-decided'>).data.by.kind === 'canceled'
    case 'tool/call': {
      if (after?.type !== 'tool/result') return false
      const r = (after as EventOf<'tool/result'>).data
      return r.callId === (e as EventOf<'tool/call'>).data.callId && r.error?.code === 'ABORTED_BEFORE_DISPATCH' && r.error.message.includes('cancelled')
    }
    default:
      return false
  }
}

/** The chunk a "chunk after finish" grammar failure names (parsed back from its message). */
export function afterFinishChunk(text: string): StreamChunk {
  try {
    return JSON.parse(text) as StreamChunk
  } catch {
    return { type: 'text-delta', index: 0, text: '' } as StreamChunk
  }
}

