/**
 * The log builder's steps (part 2 of 3, see builder.ts): the request header, the streamed chunks
 * and the assistant message, failures and retries, cancels and cuts, and the tool calls with their
 * results in model order.
 */
import type { StreamChunk } from '../../events/chunks.js'
import type { CancelCause } from '../../events/data.js'
import { isRunnableCall, type Block, type Failure, type ToolResultMessage, type UserMessage } from '../../events/messages.js'
import { assembleContent, hasVisibleText, renderPartialStream, renderStream, TRANSIENT_FAILURE_CODES, type BlockPlan } from './blocks.js'
import type { StepPlan } from './plan.js'
import { BuilderCore, DEFAULT_COMPACTION, SYSTEM_PROMPT, TOOL_SPECS, type StepResult } from './builder-core.js'

export abstract class StepBuilder extends BuilderCore {
  protected header(sp: StepPlan): void {
    if (sp.configChange) this.config = { model: sp.configChange.model, temperature: sp.configChange.temperature }
    const key = JSON.stringify(this.config)
    const reason = this.lastHeader === null ? 'initial' : this.resumed ? 'resume' : key !== this.lastHeader ? 'change' : null
    if (reason === null) return
    this.emit('request/header', { reason, config: { ...this.config }, system: SYSTEM_PROMPT, tools: TOOL_SPECS })
    this.lastHeader = key
    this.resumed = false
  }

  protected chunks(chunks: StreamChunk[]): number[] {
    return chunks.map((chunk) => this.emit('assistant/chunk', { turn: this.lastTurn, step: this.step, chunk }))
  }

  protected message(
    content: Block[], finish: 'stop' | 'tool-calls' | 'max-tokens' | 'refusal', seqs: number[], usage: unknown, interrupted: boolean, explanation?: string,
  ): void {
    const data: Record<string, unknown> = { turn: this.lastTurn, step: this.step, message: { role: 'assistant', content } }
    if (usage) data.usage = usage
    data.finish = finish
    if (explanation !== undefined) data.explanation = explanation
    if (interrupted) data.interrupted = true
    const seq = this.emit('assistant/message', data, { surfaceOp: 'append', sourceEventSeqs: seqs })
    this.surface.push({ seq, type: 'assistant/message' })
  }

  protected runStep(sp: StepPlan, entered: UserMessage[]): StepResult {
    const turn = this.lastTurn
    const step = ++this.step
    this.emit('step/start', { turn, step })
    this.stepOpen = true
    this.sends = [...sp.sends].sort((a, b) => a.at - b.at)
    this.stepEvents = 0
    for (const message of entered) {
      const seq = this.emit('user/message', { message }, { surfaceOp: 'append' })
      this.surface.push({ seq, type: 'user/message' })
    }
    if (sp.kind === 'hook-fail' && sp.cutAt % 2 === 0) {
      // system-prompt/assemble or agent/request threw: no request was made.
      const failure: Failure = { code: 'HOOK_ERROR', message: 'agent/request listener threw' }
      this.endStep({ kind: 'failed', failure })
      this.endTurn({ kind: 'error', failure })
      return 'ended'
    }
    this.header(sp)
    if (sp.kind === 'hook-fail') {
      // An llm/stream listener threw while the stream ran.
      this.chunks(renderPartialStream(sp.stream))
      const failure: Failure = { code: 'HOOK_ERROR', message: 'llm/stream listener threw' }
      this.endStep({ kind: 'failed', failure })
      this.endTurn({ kind: 'error', failure })
      return 'ended'
    }

    // Fresh, unique tool-call ids; which blocks the response has depends on the kind.
    let blocks: BlockPlan[] = sp.stream.blocks.map((b) => (b.type === 'tool-call' ? { ...b, id: `call_${++this.calls}` } : b))
    if (sp.kind === 'stop') blocks = blocks.filter((b) => b.type !== 'tool-call')
    const wantsTools = sp.kind === 'tools' || sp.kind === 'abort-tools' || ((sp.kind === 'crash' || sp.kind === 'fork') && sp.cutAt % 2 === 1)
    if (wantsTools && !blocks.some((b) => b.type === 'tool-call')) {
      blocks = [...blocks, { type: 'tool-call', parts: ['{"city":', '"Paris"}'], name: 'weather', id: `call_${++this.calls}` }]
    }
    const stream = { ...sp.stream, blocks }

    switch (sp.kind) {
      case 'fail':
        return this.fail(sp)
      case 'abort-stream': {
        const chunks = renderPartialStream(stream)
        const seqs = this.chunks(chunks)
        this.cancel(sp.keepInbox)
        if (hasVisibleText(chunks)) this.message(assembleContent(chunks, { visibleOnly: true }), 'stop', seqs, null, true)
        return this.aborted(sp.cancel)
      }
      case 'crash':
      case 'fork':
        if (!wantsTools) {
          this.chunks(renderPartialStream(stream))
          this.endStep({ kind: 'aborted' })
          this.endTurn({ kind: sp.kind === 'crash' ? 'interrupted' : 'forked' })
          this.afterCut(sp.kind, sp.seedAfter)
          return 'ended'
        }
        break
      default:
        break
    }
    // a plain answer may be a refusal (issue 23): the model's answer all the same, the step stops
    const finish = sp.kind === 'max-tokens' ? 'max-tokens' : wantsTools ? 'tool-calls' : sp.kind === 'stop' && stream.refusal ? 'refusal' : 'stop'
    const chunks = renderStream(stream, finish)
    const seqs = this.chunks(chunks)
    const content = assembleContent(chunks, { dropToolCalls: finish === 'max-tokens' || finish === 'refusal' })
    this.message(content, finish, seqs, stream.usage, false, finish === 'refusal' ? stream.refusal?.explanation : undefined)
    this.overflowUsed = false
    if (finish === 'max-tokens') {
      this.endStep({ kind: 'max-tokens' })
      return 'max-tokens'
    }
    if (finish === 'stop' || finish === 'refusal') {
      this.endStep({ kind: 'stop' })
      return 'stop'
    }
    // a provider-executed call (whole, issue 23) already ran at the provider: never ours to run
    return this.tools(sp, content.filter(isRunnableCall))
  }

  protected aborted(cause: CancelCause): StepResult {
    this.endStep({ kind: 'aborted' })
    this.endTurn({ kind: 'aborted', cause })
    return 'ended'
  }

  protected fail(sp: StepPlan): StepResult {
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
    this.chunks(chunks)
    this.endStep({ kind: 'failed', failure })
    const turn = this.lastTurn
    const step = this.step
    const retryRecord = (): boolean => {
      if (this.chainAttempt >= this.opts.maxRetries) return false
      this.emit('llm/retry', { turn, step, attempt: ++this.chainAttempt, delayMs: sp.retryDelayMs, failure })
      return true
    }
    switch (sp.recovery) {
      case 'retry':
        if (retryRecord()) {
          this.endTurn({ kind: 'error', failure })
          if (sp.persists > 0) this.repeat = { ...sp, preStep: 'enter', compaction: null, persists: sp.persists - 1 }
          return 'retry'
        }
        break
      case 'retry-then-cancel':
        retryRecord()
        this.cancel(sp.keepInbox)
        this.endTurn({ kind: 'aborted', cause: sp.cancel })
        return 'ended'
      case 'cancel':
        this.cancel(sp.keepInbox)
        this.endTurn({ kind: 'aborted', cause: sp.cancel })
        return 'ended'
      case 'crash':
        // A crash after the failed step/end (e.g. during the retry wait): repair closes the turn.
        if (sp.retryDelayMs % 2 === 0) retryRecord()
        this.endTurn({ kind: 'interrupted' })
        this.afterCut('crash', sp.seedAfter)
        return 'ended'
      case 'overflow':
        if (!this.overflowUsed && this.compact(sp.compaction ?? DEFAULT_COMPACTION)) {
          this.overflowUsed = true
          this.endTurn({ kind: 'error', failure })
          return 'retry'
        }
        break
      default:
        break
    }
    this.endTurn({ kind: 'error', failure })
    return 'ended'
  }

  protected result(sp: StepPlan, i: number, call: { id: string; name: string }, callSeq: number, forced: string | null, contexts: boolean): void {
    const tp = sp.tools[i % Math.max(1, sp.tools.length)] ?? { error: null, output: 'ok', contexts: [], abortedWhileRunning: false }
    let code = forced ?? tp.error
    if (!forced && call.name === 'nope') code = 'UNKNOWN_TOOL'
    else if (!forced && call.name !== 'nope' && code === 'UNKNOWN_TOOL') code = 'TOOL_ERROR'
    const message: ToolResultMessage = code
      ? { role: 'tool', callId: call.id, content: [{ type: 'text', text: `${code}: ${tp.output}` }], isError: true }
      : { role: 'tool', callId: call.id, content: [{ type: 'text', text: tp.output }] }
    const data: Record<string, unknown> = { turn: this.lastTurn, step: this.step, callId: call.id, message }
    const error = code ? { code, message: `${code.toLowerCase().replaceAll('_', ' ')}` } : undefined
    if (error) data.error = error
    const seq = this.emit('tool/result', data, { surfaceOp: 'append', sourceEventSeqs: [callSeq] })
    this.surface.push({
      seq, type: 'tool/result',
      tool: { turn: this.lastTurn, step: this.step, callId: call.id, message, ...(error ? { error } : {}), pruned: false },
    })
    if (contexts && tp.contexts.length > 0) {
      const ns = this.inbox['next-step']
      this.splice('next-step', ns.length, 0, tp.contexts.map((c) => this.fresh({ ...c, source: { kind: 'tool', callId: call.id } }, 'ctx')), false)
    }
  }

  protected tools(sp: StepPlan, calls: Array<Extract<Block, { type: 'tool-call' }>>): StepResult {
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
      callSeqs[i] = this.emit('tool/call', { turn: this.lastTurn, step: this.step, callId: c.id, name: c.name, arguments: c.arguments })
    }
    while (committed < n && actions < stopAfter) {
      const canStart = started < n && started - committed < sp.pool
      const canCommit = committed < started
      const doStart = canStart && (!canCommit || (sp.schedule[k++ % Math.max(1, sp.schedule.length)] ?? 0) % 2 === 0)
      if (doStart) start(started++)
      else {
        this.result(sp, committed, calls[committed]!, callSeqs[committed]!, null, true)
        committed++
      }
      actions++
    }
    if (!interrupted || committed === n) {
      if (interrupted && sp.kind === 'abort-tools') {
        // Cancelled after the last result committed: nothing left to abort.
        this.cancel(sp.keepInbox)
        return this.aborted(sp.cancel)
      }
      if (interrupted) {
        this.endStep({ kind: 'aborted' })
        this.endTurn({ kind: sp.kind === 'crash' ? 'interrupted' : 'forked' })
        this.afterCut(sp.kind as 'crash' | 'fork', sp.seedAfter)
        return 'ended'
      }
      const outcome = sp.concluded ? 'concluded' : 'tools'
      this.endStep({ kind: outcome })
      return outcome
    }
    if (sp.kind === 'abort-tools') {
      this.cancel(sp.keepInbox)
      // Started calls drain and commit in model order; the rest never start.
      for (let i = committed; i < started; i++) {
        const tp = sp.tools[i % Math.max(1, sp.tools.length)]
        this.result(sp, i, calls[i]!, callSeqs[i]!, tp?.abortedWhileRunning ? 'ABORTED' : null, !tp?.abortedWhileRunning)
      }
      for (let i = started; i < n; i++) {
        start(i)
        this.result(sp, i, calls[i]!, callSeqs[i]!, 'ABORTED_BEFORE_DISPATCH', false)
      }
      return this.aborted(sp.cancel)
    }
    // A crash or a fork: repair (or the fork's synthetic closers) answer the started calls.
    for (let i = committed; i < started; i++) this.result(sp, i, calls[i]!, callSeqs[i]!, 'TOOL_OUTCOME_UNKNOWN', false)
    this.endStep({ kind: 'aborted' })
    this.endTurn({ kind: sp.kind === 'crash' ? 'interrupted' : 'forked' })
    this.afterCut(sp.kind as 'crash' | 'fork', sp.seedAfter)
    return 'ended'
  }
}
