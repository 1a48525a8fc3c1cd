/**
 * Time and ids, served from the log: the clock returns the recorded `time` of the seq being
 * appended; ids are the recorded ids of the messages (compaction brackets, approvals) being inserted.
 */
import type { EventOf } from '../../events/index.js'
import type { Host } from './state.js'

export function recordedTime(rx: Host): number {
  const n = rx.agent?.events.length ?? 0
  const e = rx.rec[n] ?? rx.rec[rx.rec.length - 1]
  return e?.time ?? 0
}

export function recordedId(rx: Host): string {
  const n = rx.len
  if (rx.idSeq !== n) {
    rx.idSeq = n
    rx.idUsed = 0
  }
  const e = rx.rec[n]
  const k = rx.idUsed++
  if (e?.type === 'agent/inbox/spliced') {
    const m = (e as EventOf<'agent/inbox/spliced'>).data.inserted[k]
    if (m) return m.id
  }
  // an approval's id is drawn just before its request is appended (agent/approvals.ts)
  if (e?.type === 'tool/approval-requested' && k === 0) return (e as EventOf<'tool/approval-requested'>).data.approvalId
  // an input round's id likewise (agent/inputs.ts)
  if (e?.type === 'tool/input-requested' && k === 0) return (e as EventOf<'tool/input-requested'>).data.requestId
  if (e?.type === 'user/message' && k === 0) return (e as EventOf<'user/message'>).data.message.id
  // compaction: the bracket's id when its start is appended; the summary message's id is drawn
  // just before its `compaction/summary` (the message follows it)
  if (e?.type === 'compaction/start' && k === 0) return (e as EventOf<'compaction/start'>).data.compactionId
  if (e?.type === 'compaction/summary' && k === 0) {
    const m = rx.rec[n + 1]
    if (m?.type === 'user/message') return (m as EventOf<'user/message'>).data.message.id
  }
  return `reexec-${n}-${k}`
}
