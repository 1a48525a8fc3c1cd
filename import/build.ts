/**
 * A parsed conversation to a log that passes `verify` (docs/spec/invariants.md): each run of user
 * messages is spliced into the inbox and claimed by the turn it opens (L11); each assistant step
 * is `step/start`, one whole-`block` chunk per block and a `finish` chunk (L7, L9; no deltas are
 * made up), the `assistant/message`, then a
 * `tool/call` + `tool/result` per call in the model's order (L5, L6), then `step/end`. A call that
 * ran a sub-agent the source holds gets `child/spawned` between the two, and the sub-agent becomes
 * a child log whose header names this log, that event's seq and the call (L19). Times are the
 * order (the header says `times: "order"`): the source's start plus the seq, each seq a stride wide
 * (1, or wider than the longest child's log so that a child's events fall between its
 * `child/spawned` and the call's result); a child starts at its `child/spawned`'s time. No usage
 * is logged.
 */
import { JSONL_FORMAT, type LogHeader } from '../events/jsonl/header.js'
import type { LogEvent } from '../events/envelope.js'
import type { Block } from '../events/messages.js'
import { isRunnableCall } from '../events/messages.js'
import { childSessionId } from '../agent/subagent.js'
import type { ImportedConversation, ImportFormat } from './model.js'

/** A log made by an importer: write it with `writeLog` (turnlog/replay). */
export interface ImportedLog {
  header: LogHeader
  events: LogEvent[]
  /** The child sessions (sub-agents) its `child/spawned` events name, in log order; write each beside it. */
  children?: ImportedLog[]
  /** What the source holds that the log leaves out, counted (see `ImportedConversation.leftOut`). */
  leftOut?: { sidechainLines: number }
}

/** The text a call without a result in the source gets (the step must close, L5): said, not invented. */
export const NO_RESULT_TEXT = 'imported: the source has no result for this call'

export interface BuildOptions {
  format: ImportFormat
  /** The source file's name, recorded in the header. */
  file?: string
  /** The session id; default the source's, or `imported-<format>`. */
  sessionId?: string
  /** A child's parent: its session, the seq of its `child/spawned` and the call (L19). */
  parent?: { session: string; seq: number; callId: string }
  /** The time of the first event (a child's: its `child/spawned`'s); default the source's start. */
  startAt?: number
}

/** How many time units a log built from `conv` spans (its events times its stride). */
function span(conv: ImportedConversation): number {
  return countEvents(conv) * stride(conv)
}

function stride(conv: ImportedConversation): number {
  let widest = 0
  for (const c of conv.children?.values() ?? []) widest = Math.max(widest, span(c))
  return widest === 0 ? 1 : widest + 1
}

/** The number of events buildLog makes of `conv` (a dry run, without the children's own). */
function countEvents(conv: ImportedConversation): number {
  return buildLog({ ...conv, children: undefined }, { format: 'claude-code' }).events.length + (conv.children?.size ?? 0)
}

export function buildLog(conv: ImportedConversation, opts: BuildOptions): ImportedLog {
  const start = opts.startAt ?? conv.startedAt ?? 0
  const id = opts.sessionId ?? conv.sessionId ?? `imported-${opts.format}`
  const wide = conv.children?.size ? stride(conv) : 1
  const events: LogEvent[] = []
  const children: ImportedLog[] = []
  const push = (type: string, data: unknown, extra: Record<string, unknown> = {}): number => {
    const seq = events.length
    events.push({ seq, time: start + seq * wide, type, data, ...extra } as unknown as LogEvent)
    return seq
  }
  let turn = 0
  let turnOpen = false
  let step = 0
  let stepOpen = false
  let lastStepOutcome: 'tools' | 'stop' | undefined
  let system: string | undefined
  let systemLogged: string | undefined
  let msgN = 0

  const openTurn = (): void => {
    turn++
    step = 0
    turnOpen = true
    lastStepOutcome = undefined
    push('turn/start', { turn })
  }
  const openStep = (): void => {
    step++
    stepOpen = true
    push('step/start', { turn, step })
    if (system !== undefined && system !== systemLogged) {
      push('request/header', { reason: systemLogged === undefined ? 'initial' : 'change', config: { model: 'imported' }, system, tools: [] })
      systemLogged = system
    }
  }
  const closeTurn = (): void => {
    if (!turnOpen) return
    if (stepOpen) {
      // user messages with no answer after them: the source stops there
      push('step/end', { turn, step, outcome: { kind: 'aborted' } })
      stepOpen = false
      push('turn/end', { turn, reason: { kind: 'interrupted' } })
    } else {
      // a turn whose last step asked for tools and got no answer after them was cut off
      push('turn/end', { turn, reason: { kind: lastStepOutcome === 'tools' ? 'interrupted' : 'completed' } })
    }
    turnOpen = false
  }
  let answered = false // the open turn has an assistant step

  for (const item of conv.items) {
    if (item.kind === 'system') {
      system = system === undefined ? item.text : `${system}\n\n${item.text}`
      continue
    }
    if (item.kind === 'user') {
      if (turnOpen && answered) closeTurn()
      const message = { id: item.id ?? `imported-${++msgN}`, role: 'user', content: item.content, source: { kind: 'user' } }
      if (!turnOpen) {
        // as an agent logs a followup (L11): inserted into the inbox, claimed by the turn it opens
        push('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [message] })
        openTurn()
        answered = false
        push('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] })
      }
      if (!stepOpen) openStep()
      push('user/message', { message }, { surfaceOp: 'append' })
      continue
    }
    // an assistant step
    if (!turnOpen) {
      openTurn()
      answered = false
    }
    if (!stepOpen) openStep()
    answered = true
    const calls = item.content.filter(isRunnableCall)
    const finish = calls.length ? 'tool-calls' : 'stop'
    // each block as one whole-block chunk (no deltas are made up), then the finish
    const chunkSeqs = item.content.map((block, index) => push('assistant/chunk', { turn, step, chunk: { type: 'block', index, block } }))
    chunkSeqs.push(push('assistant/chunk', { turn, step, chunk: { type: 'finish', reason: finish } }))
    push('assistant/message', { turn, step, message: { role: 'assistant', content: item.content }, finish }, {
      surfaceOp: 'append', sourceEventSeqs: chunkSeqs,
    })
    for (const call of calls) {
      const callSeq = push('tool/call', { turn, step, callId: call.id, name: call.name, arguments: call.arguments })
      const sub = conv.children?.get(call.id)
      if (sub) {
        const child = childSessionId(id, { turn, step, callId: call.id })
        const seq = push('child/spawned', { turn, step, callId: call.id, child })
        children.push(buildLog(sub, { format: opts.format, ...(opts.file !== undefined ? { file: opts.file } : {}), sessionId: child, parent: { session: id, seq, callId: call.id }, startAt: events[seq]!.time }))
      }
      const r = item.results.get(call.id)
      const content: Block[] = r ? r.content : [{ type: 'text', text: NO_RESULT_TEXT }]
      const isError = r ? r.isError : true
      push('tool/result', {
        turn, step, callId: call.id,
        message: { role: 'tool', callId: call.id, content, ...(isError ? { isError: true } : {}) },
      }, { surfaceOp: 'append', sourceEventSeqs: [callSeq] })
    }
    lastStepOutcome = calls.length ? 'tools' : 'stop'
    push('step/end', { turn, step, outcome: { kind: lastStepOutcome } })
    stepOpen = false
  }
  closeTurn()

  const header: LogHeader = {
    type: 'session',
    format: JSONL_FORMAT,
    id,
    createdAt: start,
    ...(opts.parent ? { parent: opts.parent } : {}),
    imported: {
      from: opts.format,
      ...(opts.file !== undefined ? { file: opts.file } : {}),
      times: 'order',
      chunks: 'whole-blocks',
      usage: 'absent',
    },
  }
  return { header, events, ...(children.length ? { children } : {}), ...(conv.leftOut ? { leftOut: conv.leftOut } : {}) }
}
