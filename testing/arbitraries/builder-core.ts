/**
 * The log builder's state and its bookkeeping (part 1 of 3, see builder.ts): the clock and ids,
 * the open turn and step, the inbox lists and their splices, the surface, compaction brackets,
 * idle items, resume seeds, and closing a step or a turn. Members are `protected` so the step and
 * turn parts (builder-step.ts, builder.ts) extend it; none of them is public API.
 */
import type { RequestConfig, StepOutcome, ToolSpec, TurnEndReason } from '../../events/data.js'
import type { EventDraft, LogEvent, SurfaceOp } from '../../events/envelope.js'
import type { ToolResultMessage, UserMessage } from '../../events/messages.js'
import type { CompactionPlan, IdleItem, InboxOpPlan, MsgSeed, StepPlan, TurnPlan } from './plan.js'

export interface BuildOptions {
  /** The step budget the log obeys (`step-limit` turns have exactly this many steps). */
  maxStepsPerTurn: number
  /** The retry policy's maximum attempt (`llm/retry.attempt` never exceeds it). */
  maxRetries: number
}

export const SYSTEM_PROMPT = 'You are a helpful assistant.'
export const TOOL_SPECS: ToolSpec[] = [
  { name: 'weather', description: 'Current weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  { name: 'search', description: 'Search the web', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
  { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
]

export type Target = 'next-turn' | 'next-step'

export interface SurfaceNode {
  seq: number
  type: 'user/message' | 'assistant/message' | 'tool/result'
  /** tool/result nodes: what a prune needs to write the replacement. */
  tool?: { turn: number; step: number; callId: string; message: ToolResultMessage; error?: { code: string; message: string }; pruned: boolean }
}

export const DEFAULT_TEXT: MsgSeed = { content: [{ type: 'text', text: 'go on' }], source: { kind: 'user' } }

/** A step that just replies: used when a step is owed after the last planned one. */
export const DEFAULT_STEP: StepPlan = {
  preStep: 'enter', hookMessage: DEFAULT_TEXT, compaction: null, configChange: null, kind: 'stop',
  stream: { blocks: [{ type: 'text', parts: ['Done.'], name: '', id: '' }], interleave: [], usage: { inputTokens: 10, outputTokens: 2 }, usageAt: 99, cut: 0 },
  tools: [], pool: 1, schedule: [], concluded: false, failure: { code: 'UNKNOWN', message: 'x' }, inBandFinish: false,
  recovery: 'terminal', retryDelayMs: 0, persists: 0, cancel: { kind: 'user' }, keepInbox: false, cutAt: 0, sends: [],
  afterStop: 'complete', stopMessage: DEFAULT_TEXT, seedAfter: false,
}
export const DEFAULT_TURN: TurnPlan = { idle: [], wake: 'followup', wakeMessage: DEFAULT_TEXT, steps: [DEFAULT_STEP] }
export const DEFAULT_COMPACTION: CompactionPlan = { prunes: [0], summary: 'ok', rangeEnd: 0, summaryText: 'summary', summaryUsage: false }

export type StepResult = 'tools' | 'stop' | 'concluded' | 'max-tokens' | 'retry' | 'ended'

export abstract class BuilderCore {
  readonly events: LogEvent[] = []
  protected readonly opts: BuildOptions
  protected time: number
  protected rng: number
  protected lastTurn = 0
  protected turnOpen = false
  protected step = 0
  protected stepOpen = false
  protected inbox: Record<Target, UserMessage[]> = { 'next-turn': [], 'next-step': [] }
  protected surface: SurfaceNode[] = []
  protected ids = 0
  protected calls = 0
  protected compactions = 0
  protected config: RequestConfig = { model: 'scripted' }
  protected lastHeader: string | null = null
  protected resumed = false
  protected chainAttempt = 0
  protected overflowUsed = false
  protected lastTurnAborted = false
  protected sends: Array<{ at: number; inbox: InboxOpPlan }> = []
  protected stepEvents = 0
  protected flushing = false
  /** A failure that persists into the next retry turn's first step. */
  protected repeat: StepPlan | null = null

  constructor(opts: BuildOptions, startTime = 1_764_450_000_000, clockSeed = 1) {
    this.opts = opts
    this.time = startTime
    this.rng = clockSeed | 0
  }

  // ---- emitting ------------------------------------------------------------------------------

  protected emit(type: EventDraft['type'], data: unknown, extra: { surfaceOp?: SurfaceOp; sourceEventSeqs?: number[] } = {}): number {
    this.rng = (Math.imul(this.rng, 1103515245) + 12345) | 0
    const r = (this.rng >>> 16) & 0x7fff
    this.time += r % 3 === 0 ? 0 : r % 40
    const seq = this.events.length
    const e: Record<string, unknown> = { seq, time: this.time, type, data }
    if (extra.surfaceOp !== undefined) e.surfaceOp = extra.surfaceOp
    if (extra.sourceEventSeqs !== undefined) e.sourceEventSeqs = extra.sourceEventSeqs
    this.events.push(e as unknown as LogEvent)
    // Inbox operations planned inside the step land after this event (callers compute each
    // event's data right before emitting it, so they see the inbox as these leave it).
    if (this.stepOpen && !this.flushing && type !== 'step/end') {
      this.flushing = true
      this.stepEvents++
      while (this.sends.length > 0 && this.sends[0]!.at <= this.stepEvents) this.applyInbox(this.sends.shift()!.inbox)
      this.flushing = false
    }
    return seq
  }

  protected fresh(seed: MsgSeed, prefix = 'm'): UserMessage {
    return { id: `${prefix}${++this.ids}`, role: 'user', content: seed.content, source: seed.source }
  }

  // ---- the inbox ---------------------------------------------------------------------------

  protected splice(target: Target, start: number, removed: number, inserted: UserMessage[], canceled: boolean): void {
    const data: Record<string, unknown> = { target, start }
    if (removed > 0) data.removedCount = removed
    data.inserted = inserted
    if (canceled && removed > 0) data.outcome = 'canceled'
    // Update the lists first: the emit may run planned inbox operations right after this event.
    this.inbox[target].splice(start, removed, ...inserted)
    this.emit('agent/inbox/spliced', data)
  }

  protected send(target: Target, seed: MsgSeed, head = false): void {
    this.splice(target, head ? 0 : this.inbox[target].length, 0, [this.fresh(seed)], false)
  }

  protected pendingAt(pick: number): { target: Target; index: number } | null {
    const all: Array<{ target: Target; index: number }> = [
      ...this.inbox['next-step'].map((_, index) => ({ target: 'next-step' as const, index })),
      ...this.inbox['next-turn'].map((_, index) => ({ target: 'next-turn' as const, index })),
    ]
    return all.length === 0 ? null : all[pick % all.length]!
  }

  protected applyInbox(op: InboxOpPlan): void {
    switch (op.op) {
      case 'send':
        this.splice(op.target, op.head ? 0 : this.inbox[op.target].length, 0, op.messages.map((m) => this.fresh(m)), false)
        return
      case 'replace': {
        const at = this.pendingAt(op.pick)
        if (at) this.splice(at.target, at.index, 1, [this.fresh(op.message)], true)
        return
      }
      case 'remove': {
        const at = this.pendingAt(op.pick)
        if (at) this.splice(at.target, at.index, 1, [], true)
        return
      }
      case 'splice': {
        const len = this.inbox[op.target].length
        const start = op.start % (len + 1)
        const removed = op.deleteCount % (len - start + 1)
        if (removed === 0 && op.messages.length === 0) return // not logged
        this.splice(op.target, start, removed, op.messages.map((m) => this.fresh(m)), true)
        return
      }
      case 'clear':
        this.clear()
        return
    }
  }

  /** cancel-all: next-step first, then next-turn. */
  protected clear(): void {
    for (const t of ['next-step', 'next-turn'] as const) {
      if (this.inbox[t].length > 0) this.splice(t, 0, this.inbox[t].length, [], true)
    }
  }

  /** The driver's claim: all of next-step, then (at a turn boundary) the first of next-turn. */
  protected claim(withPrompt: boolean): UserMessage[] {
    const batch: UserMessage[] = []
    const ns = this.inbox['next-step']
    if (ns.length > 0) {
      batch.push(...ns)
      this.splice('next-step', 0, ns.length, [], false)
    }
    if (withPrompt && this.inbox['next-turn'].length > 0) {
      batch.push(this.inbox['next-turn'][0]!)
      this.splice('next-turn', 0, 1, [], false)
    }
    return batch
  }

  // ---- compaction ------------------------------------------------------------------------------

  /** Prunes (only with a turn open) and an optional summary bracket. True if the generation advanced. */
  protected compact(cp: CompactionPlan): boolean {
    let advanced = false
    if (this.turnOpen) {
      const candidates = this.surface.filter((n) => n.tool && !n.tool.pruned)
      for (const pick of cp.prunes) {
        if (candidates.length === 0) break
        const node = candidates.splice(pick % candidates.length, 1)[0]!
        const t = node.tool!
        const original = t.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
        const cps = Array.from(original)
        this.emit('compaction/prune', { callId: t.callId, shadowedSeq: node.seq, originalChars: original.length })
        const message: ToolResultMessage = {
          ...t.message,
          content: [{ type: 'text', text: `${cps.slice(0, 4).join('')}…[pruned ${original.length} chars]…${cps.slice(-4).join('')}` }],
        }
        const data: Record<string, unknown> = { turn: t.turn, step: t.step, callId: t.callId, message }
        if (t.error) data.error = t.error
        const seq = this.emit('tool/result', data, { surfaceOp: { op: 'replace', start: node.seq, end: node.seq }, sourceEventSeqs: [node.seq] })
        const i = this.surface.indexOf(node)
        this.surface[i] = { seq, type: 'tool/result', tool: { ...t, message, pruned: true } }
        advanced = true
      }
    }
    if (cp.summary === 'none') return advanced
    // Range ends: keep a tail of at least one node; never split an assistant message from its results.
    const ends: number[] = []
    for (let j = 0; j + 1 < this.surface.length; j++) if (this.surface[j + 1]!.type !== 'tool/result') ends.push(j)
    if (ends.length === 0 && cp.summary === 'ok') return advanced
    const compactionId = `cmp${++this.compactions}`
    this.emit('compaction/start', { compactionId, turn: this.lastTurn })
    if (cp.summary === 'fail') {
      this.emit('compaction/end', { compactionId, error: { code: 'SUMMARY_NOT_SMALLER', message: 'the summary is not smaller than the range' } })
      return advanced
    }
    const j = ends[cp.rangeEnd % ends.length]!
    const hidden = this.surface.slice(0, j + 1).map((n) => n.seq)
    const summary: Record<string, unknown> = { compactionId, summary: cp.summaryText, shadowedSeqs: hidden }
    if (cp.summaryUsage) summary.usage = { inputTokens: 100 * hidden.length, outputTokens: 20 }
    this.emit('compaction/summary', summary)
    const message: UserMessage = { id: `sum${++this.ids}`, role: 'user', content: [{ type: 'text', text: cp.summaryText }], source: { kind: 'compaction' } }
    const seq = this.emit('user/message', { message }, { surfaceOp: { op: 'replace', start: hidden[0]!, end: hidden[hidden.length - 1]! }, sourceEventSeqs: hidden })
    this.surface.splice(0, j + 1, { seq, type: 'user/message' })
    this.emit('compaction/end', { compactionId })
    return true
  }

  // ---- idle --------------------------------------------------------------------------------------

  protected idle(item: IdleItem): void {
    switch (item.op) {
      case 'inbox':
        this.applyInbox(item.inbox)
        return
      case 'compact':
        this.compact(item.compaction)
        return
      case 'seed':
        this.seed(item.fork)
        return
    }
  }

  /** A fork (empty inbox) or a resume continues here. */
  protected seed(fork: boolean): void {
    if (fork) this.clear()
    this.emit('session/end-seed', {})
    this.resumed = true
  }

  protected endTurn(reason: TurnEndReason): void {
    this.emit('turn/end', { turn: this.lastTurn, reason })
    this.turnOpen = false
    this.lastTurnAborted = reason.kind === 'aborted'
  }

  protected endStep(outcome: StepOutcome): void {
    this.emit('step/end', { turn: this.lastTurn, step: this.step, outcome })
    this.stepOpen = false
    this.sends = []
  }

  protected cancel(keepInbox: boolean): void {
    if (!keepInbox) this.clear()
  }

  /** After a crash (repair wrote `interrupted`) or a fork (`forked`): maybe a resume seed. */
  protected afterCut(kind: 'crash' | 'fork', seedAfter: boolean): void {
    if (kind === 'fork') this.seed(true)
    else if (seedAfter) this.seed(false)
  }
}
