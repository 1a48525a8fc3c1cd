/**
 * The log builder: follows a `LogPlan` and writes the events the agent would write, in the
 * canonical order of docs/ARCHITECTURE.md, tracking the open turn and step, the inbox lists,
 * the surface, the last request header and the retry chain, so the log is valid by construction.
 */
import type { StreamChunk } from '../../events/chunks.js'
import type { CancelCause, RequestConfig, StepOutcome, ToolSpec, TurnEndReason } from '../../events/data.js'
import type { EventDraft, LogEvent, SurfaceOp } from '../../events/envelope.js'
import type { Block, Failure, ToolResultMessage, UserMessage } from '../../events/messages.js'
import {
  assembleContent, hasVisibleText, renderPartialStream, renderStream, TRANSIENT_FAILURE_CODES, type BlockPlan,
} from './blocks.js'
import type { CompactionPlan, IdleItem, InboxOpPlan, LogPlan, MsgSeed, StepPlan, TurnPlan } from './plan.js'

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

type Target = 'next-turn' | 'next-step'

interface SurfaceNode {
  seq: number
  type: 'user/message' | 'assistant/message' | 'tool/result'
  /** tool/result nodes: what a prune needs to write the replacement. */
  tool?: { turn: number; step: number; callId: string; message: ToolResultMessage; error?: { code: string; message: string }; pruned: boolean }
}

const DEFAULT_TEXT: MsgSeed = { content: [{ type: 'text', text: 'go on' }], source: { kind: 'user' } }

/** A step that just replies: used when a step is owed after the last planned one. */
export const DEFAULT_STEP: StepPlan = {
  preStep: 'enter', hookMessage: DEFAULT_TEXT, compaction: null, configChange: null, kind: 'stop',
  stream: { blocks: [{ type: 'text', parts: ['Done.'], name: '', id: '' }], interleave: [], usage: { inputTokens: 10, outputTokens: 2 }, usageAt: 99, cut: 0 },
  tools: [], pool: 1, schedule: [], concluded: false, failure: { code: 'UNKNOWN', message: 'x' }, inBandFinish: false,
  recovery: 'terminal', retryDelayMs: 0, persists: 0, cancel: { kind: 'user' }, keepInbox: false, cutAt: 0, sends: [],
  afterStop: 'complete', stopMessage: DEFAULT_TEXT, seedAfter: false,
}
const DEFAULT_TURN: TurnPlan = { idle: [], wake: 'followup', wakeMessage: DEFAULT_TEXT, steps: [DEFAULT_STEP] }
const DEFAULT_COMPACTION: CompactionPlan = { prunes: [0], summary: 'ok', rangeEnd: 0, summaryText: 'summary', summaryUsage: false }

type StepResult = 'tools' | 'stop' | 'concluded' | 'max-tokens' | 'retry' | 'ended'

export class LogBuilder {
  readonly events: LogEvent[] = []
  readonly #opts: BuildOptions
  #time: number
  #rng: number
  #lastTurn = 0
  #turnOpen = false
  #step = 0
  #stepOpen = false
  #inbox: Record<Target, UserMessage[]> = { 'next-turn': [], 'next-step': [] }
  #surface: SurfaceNode[] = []
  #ids = 0
  #calls = 0
  #compactions = 0
  #config: RequestConfig = { model: 'scripted' }
  #lastHeader: string | null = null
  #resumed = false
  #chainAttempt = 0
  #overflowUsed = false
  #lastTurnAborted = false
  #sends: Array<{ at: number; inbox: InboxOpPlan }> = []
  #stepEvents = 0
  #flushing = false
  /** A failure that persists into the next retry turn's first step. */
  #repeat: StepPlan | null = null

  constructor(opts: BuildOptions, startTime = 1_764_450_000_000, clockSeed = 1) {
    this.#opts = opts
    this.#time = startTime
    this.#rng = clockSeed | 0
  }

  // ---- emitting ------------------------------------------------------------------------------

  #emit(type: EventDraft['type'], data: unknown, extra: { surfaceOp?: SurfaceOp; sourceEventSeqs?: number[] } = {}): number {
    this.#rng = (Math.imul(this.#rng, 1103515245) + 12345) | 0
    const r = (this.#rng >>> 16) & 0x7fff
    this.#time += r % 3 === 0 ? 0 : r % 40
    const seq = this.events.length
    const e: Record<string, unknown> = { seq, time: this.#time, type, data }
    if (extra.surfaceOp !== undefined) e.surfaceOp = extra.surfaceOp
    if (extra.sourceEventSeqs !== undefined) e.sourceEventSeqs = extra.sourceEventSeqs
    this.events.push(e as unknown as LogEvent)
    // Inbox operations planned inside the step land after this event (callers compute each
    // event's data right before emitting it, so they see the inbox as these leave it).
    if (this.#stepOpen && !this.#flushing && type !== 'step/end') {
      this.#flushing = true
      this.#stepEvents++
      while (this.#sends.length > 0 && this.#sends[0]!.at <= this.#stepEvents) this.#applyInbox(this.#sends.shift()!.inbox)
      this.#flushing = false
    }
    return seq
  }

  #fresh(seed: MsgSeed, prefix = 'm'): UserMessage {
    return { id: `${prefix}${++this.#ids}`, role: 'user', content: seed.content, source: seed.source }
  }

  // ---- the inbox ---------------------------------------------------------------------------

  #splice(target: Target, start: number, removed: number, inserted: UserMessage[], canceled: boolean): void {
    const data: Record<string, unknown> = { target, start }
    if (removed > 0) data.removedCount = removed
    data.inserted = inserted
    if (canceled && removed > 0) data.outcome = 'canceled'
    // Update the lists first: the emit may run planned inbox operations right after this event.
    this.#inbox[target].splice(start, removed, ...inserted)
    this.#emit('agent/inbox/spliced', data)
  }

  #send(target: Target, seed: MsgSeed, head = false): void {
    this.#splice(target, head ? 0 : this.#inbox[target].length, 0, [this.#fresh(seed)], false)
  }

  #pendingAt(pick: number): { target: Target; index: number } | null {
    const all: Array<{ target: Target; index: number }> = [
      ...this.#inbox['next-step'].map((_, index) => ({ target: 'next-step' as const, index })),
      ...this.#inbox['next-turn'].map((_, index) => ({ target: 'next-turn' as const, index })),
    ]
    return all.length === 0 ? null : all[pick % all.length]!
  }

  #applyInbox(op: InboxOpPlan): void {
    switch (op.op) {
      case 'send':
        this.#splice(op.target, op.head ? 0 : this.#inbox[op.target].length, 0, op.messages.map((m) => this.#fresh(m)), false)
        return
      case 'replace': {
        const at = this.#pendingAt(op.pick)
        if (at) this.#splice(at.target, at.index, 1, [this.#fresh(op.message)], true)
        return
      }
      case 'remove': {
        const at = this.#pendingAt(op.pick)
        if (at) this.#splice(at.target, at.index, 1, [], true)
        return
      }
      case 'splice': {
        const len = this.#inbox[op.target].length
        const start = op.start % (len + 1)
        const removed = op.deleteCount % (len - start + 1)
        if (removed === 0 && op.messages.length === 0) return // not logged
        this.#splice(op.target, start, removed, op.messages.map((m) => this.#fresh(m)), true)
        return
      }
      case 'clear':
        this.#clear()
        return
    }
  }

  /** cancel-all: next-step first, then next-turn. */
  #clear(): void {
    for (const t of ['next-step', 'next-turn'] as const) {
      if (this.#inbox[t].length > 0) this.#splice(t, 0, this.#inbox[t].length, [], true)
    }
  }

  /** The driver's claim: all of next-step, then (at a turn boundary) the first of next-turn. */
  #claim(withPrompt: boolean): UserMessage[] {
    const batch: UserMessage[] = []
    const ns = this.#inbox['next-step']
    if (ns.length > 0) {
      batch.push(...ns)
      this.#splice('next-step', 0, ns.length, [], false)
    }
    if (withPrompt && this.#inbox['next-turn'].length > 0) {
      batch.push(this.#inbox['next-turn'][0]!)
      this.#splice('next-turn', 0, 1, [], false)
    }
    return batch
  }

  // ---- compaction ------------------------------------------------------------------------------

  /** Prunes (only with a turn open) and an optional summary bracket. True if the generation advanced. */
  #compact(cp: CompactionPlan): boolean {
    let advanced = false
    if (this.#turnOpen) {
      const candidates = this.#surface.filter((n) => n.tool && !n.tool.pruned)
      for (const pick of cp.prunes) {
        if (candidates.length === 0) break
        const node = candidates.splice(pick % candidates.length, 1)[0]!
        const t = node.tool!
        const original = t.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
        const cps = Array.from(original)
        this.#emit('compaction/prune', { callId: t.callId, shadowedSeq: node.seq, originalChars: original.length })
        const message: ToolResultMessage = {
          ...t.message,
          content: [{ type: 'text', text: `${cps.slice(0, 4).join('')}…[pruned ${original.length} chars]…${cps.slice(-4).join('')}` }],
        }
        const data: Record<string, unknown> = { turn: t.turn, step: t.step, callId: t.callId, message }
        if (t.error) data.error = t.error
        const seq = this.#emit('tool/result', data, { surfaceOp: { op: 'replace', start: node.seq, end: node.seq }, sourceEventSeqs: [node.seq] })
        const i = this.#surface.indexOf(node)
        this.#surface[i] = { seq, type: 'tool/result', tool: { ...t, message, pruned: true } }
        advanced = true
      }
    }
    if (cp.summary === 'none') return advanced
    // Range ends: keep a tail of at least one node; never split an assistant message from its results.
    const ends: number[] = []
    for (let j = 0; j + 1 < this.#surface.length; j++) if (this.#surface[j + 1]!.type !== 'tool/result') ends.push(j)
    if (ends.length === 0 && cp.summary === 'ok') return advanced
    const compactionId = `cmp${++this.#compactions}`
    this.#emit('compaction/start', { compactionId, turn: this.#lastTurn })
    if (cp.summary === 'fail') {
      this.#emit('compaction/end', { compactionId, error: { code: 'SUMMARY_NOT_SMALLER', message: 'the summary is not smaller than the range' } })
      return advanced
    }
    const j = ends[cp.rangeEnd % ends.length]!
    const hidden = this.#surface.slice(0, j + 1).map((n) => n.seq)
    const summary: Record<string, unknown> = { compactionId, summary: cp.summaryText, shadowedSeqs: hidden }
    if (cp.summaryUsage) summary.usage = { inputTokens: 100 * hidden.length, outputTokens: 20 }
    this.#emit('compaction/summary', summary)
    const message: UserMessage = { id: `sum${++this.#ids}`, role: 'user', content: [{ type: 'text', text: cp.summaryText }], source: { kind: 'compaction' } }
    const seq = this.#emit('user/message', { message }, { surfaceOp: { op: 'replace', start: hidden[0]!, end: hidden[hidden.length - 1]! }, sourceEventSeqs: hidden })
    this.#surface.splice(0, j + 1, { seq, type: 'user/message' })
    this.#emit('compaction/end', { compactionId })
    return true
  }

  // ---- idle --------------------------------------------------------------------------------------

  #idle(item: IdleItem): void {
    switch (item.op) {
      case 'inbox':
        this.#applyInbox(item.inbox)
        return
      case 'compact':
        this.#compact(item.compaction)
        return
      case 'seed':
        this.#seed(item.fork)
        return
    }
  }

  /** A fork (empty inbox) or a resume continues here. */
  #seed(fork: boolean): void {
    if (fork) this.#clear()
    this.#emit('session/end-seed', {})
    this.#resumed = true
  }

  // ---- turns -------------------------------------------------------------------------------------

  build(plan: LogPlan): LogEvent[] {
    let retryOf: number | null = null
    let i = 0
    while (i < plan.turns.length || retryOf !== null) {
      const tp = plan.turns[i++] ?? DEFAULT_TURN
      if (retryOf === null) {
        for (const item of tp.idle) this.#idle(item)
        const queued = this.#inbox['next-turn'].length > 0 && !this.#lastTurnAborted
        if (tp.wake === 'steer') this.#send('next-step', tp.wakeMessage)
        else if (tp.wake === 'followup' || !queued) this.#send('next-turn', tp.wakeMessage)
      }
      retryOf = this.#turn(tp, retryOf)
    }
    for (const item of plan.trailing) this.#idle(item)
    return this.events
  }

  #endTurn(reason: TurnEndReason): void {
    this.#emit('turn/end', { turn: this.#lastTurn, reason })
    this.#turnOpen = false
    this.#lastTurnAborted = reason.kind === 'aborted'
  }

  #endStep(outcome: StepOutcome): void {
    this.#emit('step/end', { turn: this.#lastTurn, step: this.#step, outcome })
    this.#stepOpen = false
    this.#sends = []
  }

  #cancel(keepInbox: boolean): void {
    if (!keepInbox) this.#clear()
  }

  /** After a crash (repair wrote `interrupted`) or a fork (`forked`): maybe a resume seed. */
  #afterCut(kind: 'crash' | 'fork', seedAfter: boolean): void {
    if (kind === 'fork') this.#seed(true)
    else if (seedAfter) this.#seed(false)
  }

  /** Runs one turn; returns the turn number to retry, or null. */
  #turn(tp: TurnPlan, retryOf: number | null): number | null {
    const turn = ++this.#lastTurn
    this.#emit('turn/start', retryOf === null ? { turn } : { turn, cause: { kind: 'retry', of: retryOf } })
    this.#turnOpen = true
    this.#step = 0
    if (retryOf === null) this.#chainAttempt = 0
    let first = true
    let owed = retryOf !== null
    let sticky = false
    let planIndex = 0
    const repeat = retryOf !== null ? this.#repeat : null
    this.#repeat = null
    for (;;) {
      const sp = (planIndex === 0 && repeat) || (tp.steps[planIndex++] ?? DEFAULT_STEP)
      if (sp === repeat) planIndex++
      if (this.#step >= this.#opts.maxStepsPerTurn) {
        this.#endTurn({ kind: 'step-limit' })
        return null
      }
      if ((sp.kind === 'crash' || sp.kind === 'fork') && sp.cutAt % 5 === 0 && !first) {
        // A crash or a fork between two steps.
        this.#endTurn({ kind: sp.kind === 'crash' ? 'interrupted' : 'forked' })
        this.#afterCut(sp.kind, sp.seedAfter)
        return null
      }
      const batch = this.#claim(first && retryOf === null)
      if (sp.compaction) this.#compact(sp.compaction)
      let entered: UserMessage[]
      switch (sp.preStep) {
        case 'reject':
          this.#endTurn({ kind: 'blocked' })
          return null
        case 'throw':
          this.#endTurn({ kind: 'error', failure: { code: 'HOOK_ERROR', message: 'agent/pre-step listener threw' } })
          return null
        case 'empty':
          if (!owed) {
            this.#endTurn(sticky ? { kind: 'max-tokens' } : { kind: 'completed' })
            return null
          }
          entered = []
          break
        case 'enter+hook':
          entered = [...batch, this.#fresh(sp.hookMessage, 'h')]
          break
        default:
          entered = batch
      }
      first = false
      const r = this.#runStep(sp, entered)
      switch (r) {
        case 'tools':
          owed = true
          continue
        case 'stop':
        case 'concluded':
        case 'max-tokens':
          if (r === 'max-tokens') sticky = true
          owed = false
          if (this.#inbox['next-step'].length > 0) continue
          if (sp.afterStop !== 'complete' && planIndex < tp.steps.length) {
            this.#send('next-step', sp.afterStop === 'steer' ? { ...sp.stopMessage, source: { kind: 'user' } } : sp.stopMessage)
            continue
          }
          this.#endTurn(sticky ? { kind: 'max-tokens' } : { kind: 'completed' })
          return null
        case 'retry':
          return turn
        case 'ended':
          return null
      }
    }
  }

  // ---- steps -----------------------------------------------------------------------------------

  #header(sp: StepPlan): void {
    if (sp.configChange) this.#config = { model: sp.configChange.model, temperature: sp.configChange.temperature }
    const key = JSON.stringify(this.#config)
    const reason = this.#lastHeader === null ? 'initial' : this.#resumed ? 'resume' : key !== this.#lastHeader ? 'change' : null
    if (reason === null) return
    this.#emit('request/header', { reason, config: { ...this.#config }, system: SYSTEM_PROMPT, tools: TOOL_SPECS })
    this.#lastHeader = key
    this.#resumed = false
  }

  #chunks(chunks: StreamChunk[]): number[] {
    return chunks.map((chunk) => this.#emit('assistant/chunk', { turn: this.#lastTurn, step: this.#step, chunk }))
  }

  #message(content: Block[], finish: 'stop' | 'tool-calls' | 'max-tokens', seqs: number[], usage: unknown, interrupted: boolean): void {
    const data: Record<string, unknown> = { turn: this.#lastTurn, step: this.#step, message: { role: 'assistant', content } }
    if (usage) data.usage = usage
    data.finish = finish
    if (interrupted) data.interrupted = true
    const seq = this.#emit('assistant/message', data, { surfaceOp: 'append', sourceEventSeqs: seqs })
    this.#surface.push({ seq, type: 'assistant/message' })
  }

  #runStep(sp: StepPlan, entered: UserMessage[]): StepResult {
    const turn = this.#lastTurn
    const step = ++this.#step
    this.#emit('step/start', { turn, step })
    this.#stepOpen = true
    this.#sends = [...sp.sends].sort((a, b) => a.at - b.at)
    this.#stepEvents = 0
    for (const message of entered) {
      const seq = this.#emit('user/message', { message }, { surfaceOp: 'append' })
      this.#surface.push({ seq, type: 'user/message' })
    }
    if (sp.kind === 'hook-fail' && sp.cutAt % 2 === 0) {
      // system-prompt/assemble or agent/request threw: no request was made.
      const failure: Failure = { code: 'HOOK_ERROR', message: 'agent/request listener threw' }
      this.#endStep({ kind: 'failed', failure })
      this.#endTurn({ kind: 'error', failure })
      return 'ended'
    }
    this.#header(sp)
    if (sp.kind === 'hook-fail') {
      // An llm/stream listener threw while the stream ran.
      this.#chunks(renderPartialStream(sp.stream))
      const failure: Failure = { code: 'HOOK_ERROR', message: 'llm/stream listener threw' }
      this.#endStep({ kind: 'failed', failure })
      this.#endTurn({ kind: 'error', failure })
      return 'ended'
    }

    // Fresh, unique tool-call ids; which blocks the response has depends on the kind.
    let blocks: BlockPlan[] = sp.stream.blocks.map((b) => (b.type === 'tool-call' ? { ...b, id: `call_${++this.#calls}` } : b))
    if (sp.kind === 'stop') blocks = blocks.filter((b) => b.type !== 'tool-call')
    const wantsTools = sp.kind === 'tools' || sp.kind === 'abort-tools' || ((sp.kind === 'crash' || sp.kind === 'fork') && sp.cutAt % 2 === 1)
    if (wantsTools && !blocks.some((b) => b.type === 'tool-call')) {
      blocks = [...blocks, { type: 'tool-call', parts: ['{"city":', '"Paris"}'], name: 'weather', id: `call_${++this.#calls}` }]
    }
    const stream = { ...sp.stream, blocks }

    switch (sp.kind) {
      case 'fail':
        return this.#fail(sp)
      case 'abort-stream': {
        const chunks = renderPartialStream(stream)
        const seqs = this.#chunks(chunks)
        this.#cancel(sp.keepInbox)
        if (hasVisibleText(chunks)) this.#message(assembleContent(chunks, { visibleOnly: true }), 'stop', seqs, null, true)
        return this.#aborted(sp.cancel)
      }
      case 'crash':
      case 'fork':
        if (!wantsTools) {
          this.#chunks(renderPartialStream(stream))
          this.#endStep({ kind: 'aborted' })
          this.#endTurn({ kind: sp.kind === 'crash' ? 'interrupted' : 'forked' })
          this.#afterCut(sp.kind, sp.seedAfter)
          return 'ended'
        }
        break
      default:
        break
    }
    const finish = sp.kind === 'max-tokens' ? 'max-tokens' : wantsTools ? 'tool-calls' : 'stop'
    const chunks = renderStream(stream, finish)
    const seqs = this.#chunks(chunks)
    const content = assembleContent(chunks, { dropToolCalls: finish === 'max-tokens' })
    this.#message(content, finish, seqs, stream.usage, false)
    this.#overflowUsed = false
    if (finish === 'max-tokens') {
      this.#endStep({ kind: 'max-tokens' })
      return 'max-tokens'
    }
    if (finish === 'stop') {
      this.#endStep({ kind: 'stop' })
      return 'stop'
    }
    return this.#tools(sp, content.filter((b) => b.type === 'tool-call'))
  }

  #aborted(cause: CancelCause): StepResult {
    this.#endStep({ kind: 'aborted' })
    this.#endTurn({ kind: 'aborted', cause })
    return 'ended'
  }

  #fail(sp: StepPlan): StepResult {
    let failure = sp.failure
    const transient = (TRANSIENT_FAILURE_CODES as readonly string[]).includes(failure.code)
    if ((sp.recovery === 'retry' || sp.recovery === 'retry-then-cancel') && !transient) {
      failure = { ...failure, code: TRANSIENT_FAILURE_CODES[failure.message.length % TRANSIENT_FAILURE_CODES.length]! }
    } else if (sp.recovery === 'overflow') {
      failure = { ...failure, code: 'CONTEXT_WINDOW_EXCEEDED' }
    } else if (sp.inBandFinish && failure.message.length % 3 === 0) {
      // The provider aborted the stream in band: `finish {reason: 'aborted'}`.
      failure = { ...failure, code: 'ABORTED' }
    }
    const stream = sp.stream
    const chunks = failure.code === 'EMPTY_RESPONSE' && sp.inBandFinish
      // The model finished `stop` with no content at all: the adapter reports EMPTY_RESPONSE.
      ? [...(stream.usage ? [{ type: 'usage' as const, usage: stream.usage }] : []), { type: 'finish' as const, reason: 'stop' as const }]
      : renderPartialStream(stream, sp.inBandFinish ? { reason: failure.code === 'ABORTED' ? 'aborted' : 'error', failure } : undefined)
    this.#chunks(chunks)
    this.#endStep({ kind: 'failed', failure })
    const turn = this.#lastTurn
    const step = this.#step
    const retryRecord = (): boolean => {
      if (this.#chainAttempt >= this.#opts.maxRetries) return false
      this.#emit('llm/retry', { turn, step, attempt: ++this.#chainAttempt, delayMs: sp.retryDelayMs, failure })
      return true
    }
    switch (sp.recovery) {
      case 'retry':
        if (retryRecord()) {
          this.#endTurn({ kind: 'error', failure })
          if (sp.persists > 0) this.#repeat = { ...sp, preStep: 'enter', compaction: null, persists: sp.persists - 1 }
          return 'retry'
        }
        break
      case 'retry-then-cancel':
        retryRecord()
        this.#cancel(sp.keepInbox)
        this.#endTurn({ kind: 'aborted', cause: sp.cancel })
        return 'ended'
      case 'cancel':
        this.#cancel(sp.keepInbox)
        this.#endTurn({ kind: 'aborted', cause: sp.cancel })
        return 'ended'
      case 'crash':
        // A crash after the failed step/end (e.g. during the retry wait): repair closes the turn.
        if (sp.retryDelayMs % 2 === 0) retryRecord()
        this.#endTurn({ kind: 'interrupted' })
        this.#afterCut('crash', sp.seedAfter)
        return 'ended'
      case 'overflow':
        if (!this.#overflowUsed && this.#compact(sp.compaction ?? DEFAULT_COMPACTION)) {
          this.#overflowUsed = true
          this.#endTurn({ kind: 'error', failure })
          return 'retry'
        }
        break
      default:
        break
    }
    this.#endTurn({ kind: 'error', failure })
    return 'ended'
  }

  #result(sp: StepPlan, i: number, call: { id: string; name: string }, callSeq: number, forced: string | null, contexts: boolean): void {
    const tp = sp.tools[i % Math.max(1, sp.tools.length)] ?? { error: null, output: 'ok', contexts: [], abortedWhileRunning: false }
    let code = forced ?? tp.error
    if (!forced && call.name === 'nope') code = 'UNKNOWN_TOOL'
    else if (!forced && call.name !== 'nope' && code === 'UNKNOWN_TOOL') code = 'TOOL_ERROR'
    const message: ToolResultMessage = code
      ? { role: 'tool', callId: call.id, content: [{ type: 'text', text: `${code}: ${tp.output}` }], isError: true }
      : { role: 'tool', callId: call.id, content: [{ type: 'text', text: tp.output }] }
    const data: Record<string, unknown> = { turn: this.#lastTurn, step: this.#step, callId: call.id, message }
    const error = code ? { code, message: `${code.toLowerCase().replaceAll('_', ' ')}` } : undefined
    if (error) data.error = error
    const seq = this.#emit('tool/result', data, { surfaceOp: 'append', sourceEventSeqs: [callSeq] })
    this.#surface.push({
      seq, type: 'tool/result',
      tool: { turn: this.#lastTurn, step: this.#step, callId: call.id, message, ...(error ? { error } : {}), pruned: false },
    })
    if (contexts && tp.contexts.length > 0) {
      const ns = this.#inbox['next-step']
      this.#splice('next-step', ns.length, 0, tp.contexts.map((c) => this.#fresh({ ...c, source: { kind: 'tool', callId: call.id } }, 'ctx')), false)
    }
  }

  #tools(sp: StepPlan, calls: Array<Extract<Block, { type: 'tool-call' }>>): StepResult {
    const n = calls.length
    const interrupted = sp.kind === 'abort-tools' || sp.kind === 'crash' || sp.kind === 'fork'
    const stopAfter = interrupted ? sp.cutAt % (2 * n + 1) : Infinity
    const callSeqs: number[] = []
    let started = 0
    let committed = 0
    let actions = 0
    let k = 0
    const start = (i: number): void => {
      const c = calls[i]!
      callSeqs[i] = this.#emit('tool/call', { turn: this.#lastTurn, step: this.#step, callId: c.id, name: c.name, arguments: c.arguments })
    }
    while (committed < n && actions < stopAfter) {
      const canStart = started < n && started - committed < sp.pool
      const canCommit = committed < started
      const doStart = canStart && (!canCommit || (sp.schedule[k++ % Math.max(1, sp.schedule.length)] ?? 0) % 2 === 0)
      if (doStart) start(started++)
      else {
        this.#result(sp, committed, calls[committed]!, callSeqs[committed]!, null, true)
        committed++
      }
      actions++
    }
    if (!interrupted || committed === n) {
      if (interrupted && sp.kind === 'abort-tools') {
        // Cancelled after the last result committed: nothing left to abort.
        this.#cancel(sp.keepInbox)
        return this.#aborted(sp.cancel)
      }
      if (interrupted) {
        this.#endStep({ kind: 'aborted' })
        this.#endTurn({ kind: sp.kind === 'crash' ? 'interrupted' : 'forked' })
        this.#afterCut(sp.kind as 'crash' | 'fork', sp.seedAfter)
        return 'ended'
      }
      const outcome = sp.concluded ? 'concluded' : 'tools'
      this.#endStep({ kind: outcome })
      return outcome
    }
    if (sp.kind === 'abort-tools') {
      this.#cancel(sp.keepInbox)
      // Started calls drain and commit in model order; the rest never start.
      for (let i = committed; i < started; i++) {
        const tp = sp.tools[i % Math.max(1, sp.tools.length)]
        this.#result(sp, i, calls[i]!, callSeqs[i]!, tp?.abortedWhileRunning ? 'ABORTED' : null, !tp?.abortedWhileRunning)
      }
      for (let i = started; i < n; i++) {
        start(i)
        this.#result(sp, i, calls[i]!, callSeqs[i]!, 'ABORTED_BEFORE_DISPATCH', false)
      }
      return this.#aborted(sp.cancel)
    }
    // A crash or a fork: repair (or the fork's synthetic closers) answer the started calls.
    for (let i = committed; i < started; i++) this.#result(sp, i, calls[i]!, callSeqs[i]!, 'TOOL_OUTCOME_UNKNOWN', false)
    this.#endStep({ kind: 'aborted' })
    this.#endTurn({ kind: sp.kind === 'crash' ? 'interrupted' : 'forked' })
    this.#afterCut(sp.kind as 'crash' | 'fork', sp.seedAfter)
    return 'ended'
  }
}

/** Builds the events of a plan. */
export function buildLog(plan: LogPlan, opts: BuildOptions): LogEvent[] {
  return new LogBuilder(opts, plan.startTime, plan.clockSeed).build(plan)
}
