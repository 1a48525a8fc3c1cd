/**
 * Test helpers: a builder of valid logs in the canonical event order (docs/decisions/event-vocabulary.md), and a
 * small fast-check generator of valid logs built from it (used until `testing/arbitraries` offers
 * `arbValidLog`, and as a second source of logs after that).
 */
import fc from 'fast-check'
import {
  defaultRegistry, deepFreeze,
  type EventDraft, type Failure, type LogEvent, type StepOutcome, type TurnEndReason, type Usage, type UserMessage,
} from '../../events/index.js'

type SurfaceNode = { seq: number; type: string; callId?: string; turn?: number; step?: number }

export interface BuilderOptions {
  /** Validate each event's schema with the default registry (default true). */
  validate?: boolean
  /** Deep-freeze each event like a session does (default true). */
  freeze?: boolean
}

export class LogBuilder {
  readonly events: LogEvent[] = []
  time = 1_764_450_000_000
  ids = 0
  lastTurn = 0
  openTurn: number | null = null
  openStep: number | null = null
  lastStep = 0
  nextTurn: UserMessage[] = []
  nextStep: UserMessage[] = []
  /** Mirror of the surface, to pick valid replace ranges. */
  surface: SurfaceNode[] = []
  headerSystem: string | null = null
  compactions = 0
  readonly #validate: boolean
  readonly #freeze: boolean

  constructor(opts: BuilderOptions = {}) {
    this.#validate = opts.validate ?? true
    this.#freeze = opts.freeze ?? true
  }

  emit(draft: EventDraft): LogEvent {
    const raw = { seq: this.events.length, time: this.time++, ...draft } as LogEvent
    const e = this.#validate ? defaultRegistry.validate(raw) : raw
    this.events.push(this.#freeze ? deepFreeze(e) : e)
    const op = draft.surfaceOp
    if (op !== undefined) {
      const node: SurfaceNode = { seq: e.seq, type: e.type }
      const d = draft.data as { callId?: string; turn?: number; step?: number }
      if (d.callId !== undefined) Object.assign(node, { callId: d.callId, turn: d.turn, step: d.step })
      if (op === 'append') this.surface.push(node)
      else {
        const from = this.surface.findIndex((n) => n.seq === op.start)
        const to = this.surface.findIndex((n) => n.seq === op.end)
        this.surface.splice(from, to - from + 1, node)
      }
    }
    return e
  }

  message(text: string, source: UserMessage['source'] = { kind: 'user' }): UserMessage {
    return { id: `m${++this.ids}`, role: 'user', content: [{ type: 'text', text }], source }
  }

  send(text: string, target: 'next-turn' | 'next-step' = 'next-turn'): UserMessage {
    const m = this.message(text)
    const list = target === 'next-turn' ? this.nextTurn : this.nextStep
    this.emit({ type: 'agent/inbox/spliced', data: { target, start: list.length, inserted: [m] } })
    list.push(m)
    return m
  }

  cancelPending(target: 'next-turn' | 'next-step', index: number): void {
    const list = target === 'next-turn' ? this.nextTurn : this.nextStep
    this.emit({ type: 'agent/inbox/spliced', data: { target, start: index, removedCount: 1, inserted: [], outcome: 'canceled' } })
    list.splice(index, 1)
  }

  /** `turn/start` and the first claim (next-step items, then one next-turn prompt unless a retry turn). */
  startTurn(retryOf?: number): UserMessage[] {
    const turn = ++this.lastTurn
    this.emit({ type: 'turn/start', data: retryOf === undefined ? { turn } : { turn, cause: { kind: 'retry', of: retryOf } } })
    this.openTurn = turn
    this.lastStep = 0
    const claimed = this.claimNextStep()
    if (retryOf === undefined && this.nextTurn.length > 0) {
      this.emit({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } })
      claimed.push(this.nextTurn.shift()!)
    }
    return claimed
  }

  claimNextStep(): UserMessage[] {
    const n = this.nextStep.length
    if (n === 0) return []
    this.emit({ type: 'agent/inbox/spliced', data: { target: 'next-step', start: 0, removedCount: n, inserted: [] } })
    return this.nextStep.splice(0, n)
  }

  startStep(entered: UserMessage[], system = 'You are terse.'): void {
    const step = ++this.lastStep
    this.emit({ type: 'step/start', data: { turn: this.openTurn!, step } })
    this.openStep = step
    for (const m of entered) this.emit({ type: 'user/message', data: { message: m }, surfaceOp: 'append' })
    if (system !== this.headerSystem) {
      this.emit({
        type: 'request/header',
        data: {
          reason: this.headerSystem === null ? 'initial' : 'change',
          config: { model: 'scripted' },
          system,
          tools: [{ name: 'echo', description: 'echoes', parameters: { type: 'object' } }],
        },
      })
      this.headerSystem = system
    }
  }

  chunks(list: Array<Record<string, unknown>>): number[] {
    return list.map((chunk) =>
      this.emit({
        type: 'assistant/chunk',
        data: { turn: this.openTurn!, step: this.openStep!, chunk: chunk as never },
      }).seq,
    )
  }

  /** A successful response: text (possibly empty) and tool calls; returns the call ids. */
  respond(opts: { text?: string; calls?: number; usage?: Usage; maxTokens?: boolean; omitUsage?: boolean }): string[] {
    const turn = this.openTurn!
    const step = this.openStep!
    const chunks: Array<Record<string, unknown>> = []
    const content: Array<Record<string, unknown>> = []
    let index = 0
    if (opts.text !== undefined && opts.text !== '') {
      chunks.push({ type: 'block-start', index, blockType: 'text' }, { type: 'text-delta', index, text: opts.text }, { type: 'block-end', index })
      content.push({ type: 'text', text: opts.text })
      index++
    }
    const ids: string[] = []
    const calls = opts.maxTokens ? 0 : (opts.calls ?? 0)
    for (let c = 0; c < calls; c++) {
      const id = `call_${turn}_${step}_${c}`
      const args = JSON.stringify({ n: c })
      chunks.push(
        { type: 'block-start', index, blockType: 'tool-call' },
        { type: 'tool-call-delta', index, id, name: 'echo', argumentsDelta: args },
        { type: 'block-end', index },
      )
      content.push({ type: 'tool-call', id, name: 'echo', arguments: args })
      ids.push(id)
      index++
    }
    const usage = opts.usage ?? { inputTokens: 10 + this.events.length, outputTokens: 3 }
    chunks.push({ type: 'usage', usage })
    const finish = opts.maxTokens ? 'max-tokens' : calls > 0 ? 'tool-calls' : 'stop'
    chunks.push({ type: 'finish', reason: finish })
    const seqs = this.chunks(chunks)
    this.emit({
      type: 'assistant/message',
      data: {
        turn, step, message: { role: 'assistant', content: content as never }, finish,
        ...(opts.omitUsage ? {} : { usage }),
      },
      surfaceOp: 'append',
      sourceEventSeqs: seqs,
    })
    ids.forEach((id, c) => {
      this.emit({ type: 'tool/call', data: { turn, step, callId: id, name: 'echo', arguments: JSON.stringify({ n: c }) } })
    })
    return ids
  }

  /** Tool calls and results, interleaved per call (the calls must have been announced by respond). */
  runTools(ids: string[], opts: { errorAt?: number } = {}): void {
    // respond() already wrote the tool/calls; results follow in model order.
    const turn = this.openTurn!
    const step = this.openStep!
    ids.forEach((id, i) => {
      const callSeq = this.events.findLast((e) => e.type === 'tool/call' && (e.data as { callId: string }).callId === id)!.seq
      const isError = opts.errorAt === i
      this.emit({
        type: 'tool/result',
        data: {
          turn, step, callId: id,
          message: {
            role: 'tool', callId: id, content: [{ type: 'text', text: `result of ${id} `.repeat(3) }],
            ...(isError ? { isError: true as const } : {}),
          },
          ...(isError ? { error: { code: 'TOOL_ERROR', message: 'boom' } } : {}),
        },
        surfaceOp: 'append',
        sourceEventSeqs: [callSeq],
      })
    })
  }

  /** A request that fails after streaming some text and a usage chunk (no assistant/message). */
  failRequest(failure: Failure, usage: Usage | null = { inputTokens: 5, outputTokens: 1 }): void {
    const chunks: Array<Record<string, unknown>> = [
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'partial' },
      { type: 'block-end', index: 0 },
    ]
    if (usage) chunks.push({ type: 'usage', usage })
    chunks.push({ type: 'finish', reason: 'error', failure })
    this.chunks(chunks)
  }

  endStep(outcome: StepOutcome): void {
    this.emit({ type: 'step/end', data: { turn: this.openTurn!, step: this.openStep!, outcome } })
    this.openStep = null
  }

  retry(attempt: number, failure: Failure): void {
    this.emit({ type: 'llm/retry', data: { turn: this.openTurn!, step: this.lastStep, attempt, delayMs: 500 * attempt, failure } })
  }

  endTurn(reason: TurnEndReason): void {
    this.emit({ type: 'turn/end', data: { turn: this.openTurn!, reason } })
    this.openTurn = null
  }

  /** Prune the tool result at surface index `i`: `compaction/prune`, then its replacing `tool/result`. */
  prune(i: number): void {
    const node = this.surface[i]!
    if (node.type !== 'tool/result') throw new Error('not a tool result')
    this.emit({ type: 'compaction/prune', data: { callId: node.callId!, shadowedSeq: node.seq, originalChars: 42 } })
    this.emit({
      type: 'tool/result',
      data: {
        turn: node.turn!, step: node.step!, callId: node.callId!,
        message: { role: 'tool', callId: node.callId!, content: [{ type: 'text', text: 'res…[pruned]…ult' }] },
      },
      surfaceOp: { op: 'replace', start: node.seq, end: node.seq },
      sourceEventSeqs: [node.seq],
    })
  }

  /** Summarise surface indexes `[from, to]` in one bracket. */
  compact(from: number, to: number, error = false): void {
    const id = `c${++this.compactions}`
    const hidden = this.surface.slice(from, to + 1).map((n) => n.seq)
    this.emit({ type: 'compaction/start', data: { compactionId: id, turn: this.openTurn ?? this.lastTurn } })
    if (error) {
      this.emit({ type: 'compaction/end', data: { compactionId: id, error: { code: 'SUMMARY_FAILED', message: 'no' } } })
      return
    }
    this.emit({
      type: 'compaction/summary',
      data: { compactionId: id, summary: `summary of ${hidden.length}`, shadowedSeqs: hidden, usage: { inputTokens: 100, outputTokens: 20 } },
    })
    this.emit({
      type: 'user/message',
      data: { message: this.message(`summary of ${hidden.length}`, { kind: 'compaction' }) },
      surfaceOp: { op: 'replace', start: hidden[0]!, end: hidden[hidden.length - 1]! },
      sourceEventSeqs: hidden,
    })
    this.emit({ type: 'compaction/end', data: { compactionId: id } })
  }

  seedEnd(): void {
    this.emit({ type: 'session/end-seed', data: {} })
  }

  /** Indexes `[from, to]` of a summarisable range: starts at a non-tool-result, ends before a tool/call is split. */
  summarisableRanges(): Array<[number, number]> {
    const out: Array<[number, number]> = []
    const s = this.surface
    for (let from = 0; from < s.length; from++) {
      if (s[from]!.type === 'tool/result') continue
      for (let to = from; to < s.length; to++) {
        const next = s[to + 1]
        if (next === undefined || next.type !== 'tool/result') out.push([from, to])
      }
    }
    return out
  }
}

// ---------------------------------------------------------------------------------------------
// A small generator of valid logs: a list of operations, interpreted by the builder in the
// canonical order. Operations that do not fit the current position are skipped.

export type StepKind = 'text' | 'tools' | 'empty' | 'fail' | 'max' | 'abort' | 'no-usage'
export type Op =
  | { op: 'send'; target: 'next-turn' | 'next-step'; text: string }
  | { op: 'cancel'; target: 'next-turn' | 'next-step'; pick: number }
  | { op: 'turn'; steps: Array<{ kind: StepKind; calls: number; steer: boolean; prune: number | null; compact: number | null }> }
  | { op: 'compact-idle'; pick: number; error: boolean }
  | { op: 'seed-end' }

const text = fc.string({ maxLength: 12 })
export const arbOp: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('send' as const), target: fc.constantFrom('next-turn' as const, 'next-step' as const), text }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('cancel' as const), target: fc.constantFrom('next-turn' as const, 'next-step' as const), pick: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('turn' as const),
      steps: fc.array(
        fc.record({
          kind: fc.constantFrom<StepKind>('text', 'tools', 'tools', 'empty', 'fail', 'max', 'abort', 'no-usage'),
          calls: fc.integer({ min: 1, max: 3 }),
          steer: fc.boolean(),
          prune: fc.option(fc.nat(), { nil: null }),
          compact: fc.option(fc.nat(), { nil: null }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ op: fc.constant('compact-idle' as const), pick: fc.nat(), error: fc.boolean() }), weight: 1 },
  { arbitrary: fc.constant({ op: 'seed-end' as const }), weight: 1 },
)

export const arbOps = fc.array(arbOp, { maxLength: 12 })

export function buildFromOps(ops: Op[], opts: BuilderOptions = {}): LogEvent[] {
  const b = new LogBuilder(opts)
  let retryBudget = 0
  for (const o of ops) {
    switch (o.op) {
      case 'send':
        b.send(o.text, o.target)
        break
      case 'cancel': {
        const list = o.target === 'next-turn' ? b.nextTurn : b.nextStep
        if (list.length > 0) b.cancelPending(o.target, o.pick % list.length)
        break
      }
      case 'seed-end':
        b.seedEnd()
        break
      case 'compact-idle': {
        const ranges = b.summarisableRanges()
        if (ranges.length > 0) {
          const [from, to] = ranges[o.pick % ranges.length]!
          b.compact(from, to, o.error)
        }
        break
      }
      case 'turn':
        retryBudget = 2
        runTurn(b, o.steps, undefined, () => retryBudget-- > 0)
        break
    }
  }
  return b.events
}

function runTurn(b: LogBuilder, steps: Extract<Op, { op: 'turn' }>['steps'], retryOf: number | undefined, mayRetry: () => boolean): void {
  let entered = b.startTurn(retryOf)
  const turn = b.openTurn!
  let reason: TurnEndReason = { kind: 'completed' }
  let retry = false
  let owed = retryOf !== undefined
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!
    {
      // pre-step: compaction (prune, summary) may run before any step; later proposals claim next-step input.
      if (s.prune !== null) {
        const results = b.surface.map((n, k) => [n, k] as const).filter(([n]) => n.type === 'tool/result')
        if (results.length > 0) b.prune(results[s.prune % results.length]![1])
      }
      if (s.compact !== null) {
        const ranges = b.summarisableRanges()
        if (ranges.length > 0) {
          const [from, to] = ranges[s.compact % ranges.length]!
          b.compact(from, to)
        }
      }
      if (i > 0) entered = b.claimNextStep()
    }
    if (i === 0 && entered.length === 0 && !owed) break // enter([]) on the first proposal: completed, no step
    b.startStep(entered, i % 2 === 0 ? 'You are terse.' : 'You are terse!')
    owed = false
    let outcome: StepOutcome
    switch (s.kind) {
      case 'text':
        b.respond({ text: `answer ${turn}.${i}` })
        outcome = { kind: 'stop' }
        break
      case 'no-usage':
        b.respond({ text: `answer ${turn}.${i}`, omitUsage: true })
        outcome = { kind: 'stop' }
        break
      case 'empty':
        b.respond({ text: '' })
        outcome = { kind: 'stop' }
        break
      case 'max':
        b.respond({ text: 'trunc', maxTokens: true })
        outcome = { kind: 'max-tokens' }
        reason = { kind: 'max-tokens' }
        break
      case 'tools': {
        const ids = b.respond({ text: i % 2 ? 'calling' : '', calls: s.calls })
        b.runTools(ids, { errorAt: s.calls > 1 ? 1 : undefined })
        if (s.steer) b.send('more context', 'next-step')
        outcome = { kind: 'tools' }
        owed = true
        break
      }
      case 'abort':
        b.chunks([{ type: 'block-start', index: 0, blockType: 'text' }, { type: 'text-delta', index: 0, text: 'half' }])
        b.emit({
          type: 'assistant/message',
          data: { turn, step: b.openStep!, message: { role: 'assistant', content: [{ type: 'text', text: 'half' }] }, finish: 'stop', interrupted: true },
          surfaceOp: 'append',
          sourceEventSeqs: b.events.slice(-2).map((e) => e.seq),
        })
        outcome = { kind: 'aborted' }
        break
      case 'fail': {
        const failure: Failure = { code: 'RATE_LIMIT', message: 'slow down', status: 429 }
        b.failRequest(failure, s.steer ? null : { inputTokens: 7, outputTokens: 2 })
        outcome = { kind: 'failed', failure }
        break
      }
    }
    b.endStep(outcome)
    if (outcome.kind === 'failed') {
      reason = { kind: 'error', failure: outcome.failure }
      retry = mayRetry()
      if (retry) b.retry(1, outcome.failure)
      break
    }
    if (outcome.kind === 'aborted') {
      reason = { kind: 'aborted', cause: { kind: 'user' } }
      break
    }
    if (outcome.kind === 'stop' && i < steps.length - 1 && b.nextStep.length === 0) {
      // A later step after `stop` needs next-step input: steer one in (turn-stopping checkpoint).
      b.send('keep going', 'next-step')
    }
    if (outcome.kind === 'max-tokens') break
  }
  if (reason.kind === 'completed' && b.lastStep > 0) {
    // `completed` needs the last step to have ended stop/concluded; a trailing `tools` step owes a request.
    const lastEnd = b.events.findLast((e) => e.type === 'step/end')!.data as { outcome: StepOutcome }
    if (lastEnd.outcome.kind === 'tools') {
      b.startStep(b.claimNextStep())
      b.respond({ text: 'done' })
      b.endStep({ kind: 'stop' })
    }
  }
  b.endTurn(reason)
  if (retry) runTurn(b, [{ kind: 'text', calls: 1, steer: false, prune: null, compact: null }], turn, mayRetry)
}
