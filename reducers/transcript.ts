/**
 * The human transcript (docs/spec/events.md "The surface", last paragraph): every `user/message`,
 * `assistant/message` and `tool/result` ever appended — the ones later replaced too, marked —
 * grouped by turn and step, with step outcomes and failures, `llm/retry`s, compaction brackets,
 * prunes, turn end reasons and per-step usage. It is a different fold from the history: the model
 * forgets what compaction hides, the human record does not.
 *
 * Shape, for a printer that walks it top-down in log order:
 *
 * ```
 * items: TopItem[]                    turns; plus what happens outside turns (a manual compaction,
 *   turn {turn, cause, items, end}    the end of an inherited prefix)
 *     items: TurnItem[]               steps, compaction brackets, prunes, retries, and messages
 *       step {step, messages, usage, headerSeq, end}   written between steps (prune replacements)
 *       compaction {compactionId, summary, items, end}
 *       prune {callId, shadowedSeq, originalChars}     (the replacing tool/result follows it)
 *       retry {step, attempt, delayMs, failure}        (after the failed step)
 *       message {seq, type, message, …, replaced?}
 * ```
 *
 * Every array holds its items in seq order, so a message is found by seq with nested binary
 * searches (`findTranscriptMessage`), no index needed. To mark exactly the messages a replacement
 * hides, the transcript keeps its own copy of the surface order (`surface`, `anchors`; order.ts):
 * `sourceEventSeqs` must cover the hidden seqs but may cite more, so it cannot decide alone.
 *
 * A step that asked for approval, parked or ran a child session also holds `approvals`, `parked`
 * and `children` (transcript-waits.ts; docs/spec/lifecycle.md §9, §10).
 *
 * Per event the fold is O(1) (it only looks at the last item of each open container) except a
 * replacement: O(log n) per hidden message plus the splice of the surface copy.
 */
import type { EventOf, LogEvent, ModelMessage, UserMessage } from '../events/index.js'
import { replacedRange } from './order.js'
import { isSurfaceEvent } from './surface.js'
import type {
  ReplacedAs, TopItem, TranscriptCompaction, TranscriptMessage, TranscriptState, TranscriptStep, TranscriptTurn, TurnItem,
} from './transcript-types.js'
import { applyWaits } from './transcript-waits.js'
import type { Reducer } from './types.js'

export type {
  ReplacedAs, TranscriptMessage, TranscriptStep, TranscriptPrune, TranscriptRetry, TranscriptCompaction, TurnItem,
  TranscriptTurn, TranscriptSeedEnd, TopItem, TranscriptState, TranscriptApproval, TranscriptInput, TranscriptParked, TranscriptChild,
} from './transcript-types.js'

type Container = { items: Array<TopItem | TurnItem> }

function openTurn(s: TranscriptState): TranscriptTurn | null {
  const last = s.items[s.items.length - 1]
  return last !== undefined && last.kind === 'turn' && last.end === null ? last : null
}

function lastOpen<K extends 'step' | 'compaction'>(
  items: ReadonlyArray<TopItem | TurnItem>,
  kind: K,
): (K extends 'step' ? TranscriptStep : TranscriptCompaction) | null {
  const last = items[items.length - 1]
  if (last !== undefined && last.kind === kind && (last as { end: unknown }).end === null) {
    return last as K extends 'step' ? TranscriptStep : TranscriptCompaction
  }
  return null
}

/** The innermost open container that is not a step: open compaction bracket, else open turn, else top. */
function container(s: TranscriptState): Container {
  const turn = openTurn(s)
  const outer: Container = turn ?? (s as unknown as Container)
  const bracket = lastOpen(outer.items, 'compaction')
  return bracket ? (bracket as unknown as Container) : outer
}

function openStep(s: TranscriptState): TranscriptStep | null {
  const turn = openTurn(s)
  return turn ? lastOpen(turn.items, 'step') : null
}

/** Index of the last item with `seq ≤ target` in a seq-ordered array, or -1. */
function floorBySeq(items: ReadonlyArray<{ seq: number }>, target: number): number {
  let lo = 0
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (items[mid]!.seq <= target) lo = mid + 1
    else hi = mid
  }
  return lo - 1
}

/** The transcript message of `seq`, wherever it stands, or null. O(depth · log n). */
export function findTranscriptMessage(state: { items: readonly TopItem[] }, seq: number): TranscriptMessage | null {
  let items: ReadonlyArray<TopItem | TurnItem | TranscriptMessage> = state.items
  for (;;) {
    const i = floorBySeq(items, seq)
    if (i < 0) return null
    const item = items[i]!
    switch (item.kind) {
      case 'message':
        return item.seq === seq ? item : null
      case 'turn':
      case 'compaction':
        items = item.items
        break
      case 'step':
        items = item.messages
        break
      default:
        return null
    }
  }
}

function toMessage(event: LogEvent): TranscriptMessage {
  const op = event.surfaceOp
  const m: TranscriptMessage = {
    kind: 'message',
    seq: event.seq,
    time: event.time,
    type: event.type as TranscriptMessage['type'],
    message: (event.data as { message: ModelMessage }).message,
    surfaceOp: op === undefined || op === 'append' ? 'append' : 'replace',
  }
  if (event.type === 'assistant/message') {
    const d = (event as EventOf<'assistant/message'>).data
    m.finish = d.finish
    if (d.explanation !== undefined) m.explanation = d.explanation
    if (d.usage !== undefined) m.usage = d.usage
    if (d.interrupted === true) m.interrupted = true
  } else if (event.type === 'tool/result') {
    const d = (event as EventOf<'tool/result'>).data
    m.callId = d.callId
    if (d.error !== undefined) m.error = d.error
  }
  return m
}

function replacedAs(event: LogEvent, siblings: ReadonlyArray<{ kind: string; seq: number }>): ReplacedAs {
  if (event.type === 'user/message') {
    return (event.data as { message: UserMessage }).message.source.kind === 'compaction' ? 'compacted' : 'replaced'
  }
  if (event.type === 'tool/result') {
    const prev = siblings[siblings.length - 1]
    if (prev !== undefined && prev.kind === 'prune' && prev.seq === event.seq - 1) return 'pruned'
  }
  return 'replaced'
}

function onMessage(draft: TranscriptState, event: LogEvent): void {
  const m = toMessage(event)
  const step = openStep(draft)
  const where = step ? null : container(draft)
  if (isSurfaceEvent(event)) {
    const op = event.surfaceOp!
    if (op === 'append') {
      draft.surface.push(event.seq)
    } else {
      const { from, to, key } = replacedRange(draft.surface, draft.anchors, op.start, op.end)
      const hidden = draft.surface.splice(from, to - from, event.seq)
      draft.anchors[event.seq] = key
      const how = replacedAs(event, step ? step.messages : where!.items)
      m.replaces = hidden
      for (const seq of hidden) {
        const old = findTranscriptMessage(draft, seq)
        if (old) {
          old.replaced = true
          old.replacedBy = event.seq
          old.replacedAs = how
        }
      }
    }
  }
  if (step) step.messages.push(m)
  else where!.items.push(m)
}

export const transcriptReducer: Reducer<TranscriptState> = {
  name: 'transcript',
  initial: () => ({ items: [], surface: [], anchors: {} }),
  apply(draft, event: LogEvent) {
    // approvals, parked time, children: before the switch, which may close the step
    applyWaits(openStep(draft), event)
    switch (event.type) {
      case 'assistant/chunk': {
        const chunk = (event as EventOf<'assistant/chunk'>).data.chunk
        if (chunk.type !== 'usage') return
        const step = openStep(draft)
        if (step) step.usage = chunk.usage
        return
      }
      case 'user/message':
      case 'tool/result':
        onMessage(draft, event)
        return
      case 'assistant/message': {
        onMessage(draft, event)
        const u = (event as EventOf<'assistant/message'>).data.usage
        const step = openStep(draft)
        if (step && u !== undefined) step.usage = u
        return
      }
      case 'turn/start': {
        const d = (event as EventOf<'turn/start'>).data
        draft.items.push({
          kind: 'turn', seq: event.seq, time: event.time, turn: d.turn, cause: d.cause ?? null, items: [], end: null,
        })
        return
      }
      case 'turn/end': {
        const turn = openTurn(draft)
        if (turn) turn.end = { seq: event.seq, time: event.time, reason: (event as EventOf<'turn/end'>).data.reason }
        return
      }
      case 'step/start': {
        const d = (event as EventOf<'step/start'>).data
        const turn = openTurn(draft)
        if (!turn) return
        turn.items.push({
          kind: 'step', seq: event.seq, time: event.time, turn: d.turn, step: d.step,
          messages: [], usage: null, headerSeq: null, end: null,
        })
        return
      }
      case 'step/end': {
        const step = openStep(draft)
        if (step) step.end = { seq: event.seq, time: event.time, outcome: (event as EventOf<'step/end'>).data.outcome }
        return
      }
      case 'request/header': {
        const step = openStep(draft)
        if (step) step.headerSeq = event.seq
        return
      }
      case 'llm/retry': {
        const d = (event as EventOf<'llm/retry'>).data
        ;(openTurn(draft) ?? (draft as unknown as Container)).items.push({
          kind: 'retry', seq: event.seq, time: event.time, turn: d.turn, step: d.step,
          attempt: d.attempt, delayMs: d.delayMs, failure: d.failure,
        })
        return
      }
      case 'compaction/start': {
        const d = (event as EventOf<'compaction/start'>).data
        const turn = openTurn(draft)
        ;(turn ?? (draft as unknown as Container)).items.push({
          kind: 'compaction', seq: event.seq, time: event.time, compactionId: d.compactionId, turn: d.turn,
          summary: null, items: [], end: null,
        })
        return
      }
      case 'compaction/summary': {
        const bracket = container(draft) as unknown as TranscriptCompaction
        if (bracket.kind !== 'compaction') return
        const d = (event as EventOf<'compaction/summary'>).data
        bracket.summary = { seq: event.seq, summary: d.summary, shadowedSeqs: d.shadowedSeqs }
        if (d.usage !== undefined) bracket.summary.usage = d.usage
        return
      }
      case 'compaction/end': {
        const bracket = container(draft) as unknown as TranscriptCompaction
        if (bracket.kind !== 'compaction') return
        const d = (event as EventOf<'compaction/end'>).data
        bracket.end = { seq: event.seq, time: event.time }
        if (d.error !== undefined) bracket.end.error = d.error
        return
      }
      case 'compaction/prune': {
        const d = (event as EventOf<'compaction/prune'>).data
        container(draft).items.push({
          kind: 'prune', seq: event.seq, time: event.time, callId: d.callId, shadowedSeq: d.shadowedSeq,
          originalChars: d.originalChars,
        })
        return
      }
      case 'session/end-seed':
        draft.items.push({ kind: 'seed-end', seq: event.seq, time: event.time })
        return
    }
  },
}
