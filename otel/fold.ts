/**
 * The log → spans mapping, as an incremental fold: `push(event)` returns the span actions that
 * event causes (start a span, end a span). Pure and deterministic: the same events give the same
 * actions, and every time comes from the log (`event.time`), never from a clock. The live plugin
 * and the after-the-fact export both drive this fold, so they produce the same spans; a
 * re-executed session (same events, served clock) gives the same spans again.
 *
 * Spans (OpenTelemetry GenAI semantic conventions):
 * - a turn → `invoke_agent` (or `invoke_agent {agentName}`), INTERNAL, `turn/start` → `turn/end`;
 *   error status when the turn ended `error` (`error.type` = the failure code).
 * - a step's model call → `chat {model}`, CLIENT, child of its turn, from `step/start` to its
 *   `assistant/message` (or to `step/end` when no message came: a failure or an abort): request
 *   model and settings from the last `request/header`, finish reasons, usage, time to first chunk
 *   (seconds from the request being frozen, i.e. the last event of the step before its first
 *   chunk, to that chunk).
 * - a tool call → `execute_tool {name}`, INTERNAL, child of its turn (a sibling of the chat span
 *   that asked for it), `tool/call` → its `tool/result`; error status for an error result. A call
 *   that needed approval starts at its request, and its wait is a child span `await_approval
 *   {name}` to the decision (approval-spans.ts). Each input round of a call is a child span
 *   `await_input {name}` from its request to its answer (input-spans.ts).
 * Every span carries `gen_ai.conversation.id` (the session id) and `turnlog.seq.start/end`.
 *
 * Retries: each attempt is its own turn, so its own spans; a retry turn's span links to the failed
 * turn's span, and its first chat span to the failed turn's last chat span (link attribute
 * `turnlog.link: retry_of`), so a backend can follow one request across its attempts.
 *
 * Usage: turnlog's buckets are disjoint; the conventions count cache reads and writes inside
 * `gen_ai.usage.input_tokens` and reasoning inside `gen_ai.usage.output_tokens`, so those are the
 * sums, with `cache_read.input_tokens`, `cache_creation.input_tokens` and
 * `reasoning.output_tokens` as the details.
 *
 * Content (off by default; `includeContent: true`): the chat span's `gen_ai.system_instructions`
 * and `gen_ai.output.messages`, the turn's `gen_ai.input.messages` (the user messages that entered
 * it), the tool span's arguments and result. The full model-visible history is not copied onto
 * spans: it is in the log.
 *
 * Spans still open when the log ends (a torn or live log) stay open: `openSpans()` lists them.
 */
import type { LogEvent } from '../events/index.js'
import { ATTR, semconvFromEnv } from './attributes.js'
import {
  FINISH_REASONS, PLACEHOLDER_MODEL, usageAttributes,
  type Attributes, type SpanAction, type SpanEnd, type SpanFoldOptions, type SpanStart,
} from './span-types.js'
import { conventionMessage, outputMessages, toolResultText } from './content.js'
import { ApprovalSpans, type ApprovalHost } from './approval-spans.js'
import { InputSpans } from './input-spans.js'

export {
  usageAttributes, type AttrValue, type Attributes, type SpanLink, type SpanStart, type SpanEnd, type SpanAction, type SpanFoldOptions,
} from './span-types.js'

type D = Record<string, any>

interface OpenChat {
  key: string
  startSeq: number
  startTime: number
  turn: number
  step: number
  /** whether the span's start action went out (it waits for the request: the model is known then) */
  started: boolean
  lastTime: number
  firstChunkTime?: number
  requestTime: number
  /** from `response-metadata` chunks (issue 23) */
  responseId?: string
  responseModel?: string
}

/** The incremental fold (see the module comment). Feed events in seq order. */
export class SpanFold {
  readonly #opts: Required<Omit<SpanFoldOptions, 'agentName'>> & { agentName?: string }
  #turn: { key: string; startSeq: number; turn: number; inputs: unknown[] } | undefined
  #chat: OpenChat | undefined
  readonly #tools = new Map<string, { key: string; startSeq: number }>()
  /** open compactions: id → start (a summary call becomes a chat span, issue 23) */
  readonly #compactions = new Map<string, { startSeq: number; startTime: number; done: boolean }>()
  #header: D | undefined
  #lastSeq = -1
  readonly #open = new Set<string>()
  /** span key → start time, to clamp ends: a log whose clock stepped back never ends a span before it starts */
  readonly #starts = new Map<string, number>()
  /** the last chat span of the last turn that ended (a retry turn's first chat span links to it) */
  #lastChat: { turn: number; key: string } | undefined
  /** the failed chat span the open retry turn's first chat span links to */
  #retryChatLink: string | undefined
  /** docs/spec/lifecycle.md §9: the waits for people, as child spans of their call's span (approval-spans.ts) */
  readonly #approvals = new ApprovalSpans()
  /** docs/spec/lifecycle.md §11: input rounds, as child spans of their call's span (input-spans.ts) */
  readonly #inputs = new InputSpans()
  readonly #host: ApprovalHost = {
    start: (out, s) => this.#start(out, s), end: (out, e) => this.#end(out, e), common: () => this.#common(),
    turnKey: () => this.#turn?.key, includeContent: false, tools: this.#tools,
    source: (name) => this.#source(name),
  }

  /** An MCP tool's server and name there, from the last `request/header` (docs/spec/lifecycle.md §12). */
  #source(name: string): Attributes {
    const tools = (this.#header as { tools?: unknown } | undefined)?.tools
    if (!Array.isArray(tools)) return {}
    const t = tools.find((x) => (x as { name?: unknown })?.name === name) as { source?: { mcp?: unknown; tool?: unknown } } | undefined
    const s = t?.source
    return typeof s?.mcp === 'string' && typeof s.tool === 'string' ? { [ATTR.mcpServer]: s.mcp, [ATTR.mcpTool]: s.tool } : {}
  }

  constructor(opts: SpanFoldOptions) {
    this.#opts = {
      sessionId: opts.sessionId,
      provider: opts.provider ?? '',
      includeContent: opts.includeContent ?? false,
      // the option, else the environment: the same rule as every other entry point (SEMCONV_SWITCH)
      semconv: opts.semconv ?? semconvFromEnv(),
      ...(opts.agentName !== undefined ? { agentName: opts.agentName } : {}),
    }
    this.#host.includeContent = this.#opts.includeContent
  }

  /** Keys of spans started and not yet ended. */
  openSpans(): string[] {
    return [...this.#open]
  }

  #common(): Attributes {
    return { [ATTR.conversation]: this.#opts.sessionId, ...this.#providerAttrs() }
  }

  /** The provider attribute(s): the option, else the one `request/header` recorded, else `_OTHER`. */
  #providerAttrs(): Attributes {
    const a: Attributes = {}
    const recorded = typeof this.#header?.provider === 'string' && this.#header.provider !== '' ? this.#header.provider : undefined
    const provider = this.#opts.provider !== '' ? this.#opts.provider : recorded ?? '_OTHER'
    const mode = this.#opts.semconv
    if (mode !== 'v1.36') a[ATTR.provider] = provider
    if (mode === 'v1.36' || mode === 'dup') a[ATTR.systemOld] = provider
    return a
  }

  #start(out: SpanAction[], s: SpanStart): void {
    this.#open.add(s.key)
    this.#starts.set(s.key, s.startTime)
    out.push({ op: 'start', ...s })
  }

  #end(out: SpanAction[], e: SpanEnd): void {
    if (!this.#open.delete(e.key)) return
    const start = this.#starts.get(e.key) ?? e.endTime
    this.#starts.delete(e.key)
    out.push({ op: 'end', ...e, endTime: Math.max(start, e.endTime) })
  }

  push(event: LogEvent): SpanAction[] {
    const out: SpanAction[] = []
    const d = (event.data ?? {}) as D
    const seq = event.seq
    const time = event.time
    this.#lastSeq = seq
    if (this.#chat !== undefined && event.type !== 'assistant/chunk' && this.#chat.firstChunkTime === undefined) {
      this.#chat.requestTime = time
    }
    switch (event.type) {
      case 'request/header':
        this.#header = d
        this.#startChat(out)
        break
      case 'turn/start': {
        const key = `turn-${d.turn}`
        this.#turn = { key, startSeq: seq, turn: d.turn, inputs: [] }
        const attributes: Attributes = { ...this.#common(), [ATTR.operation]: 'invoke_agent', [ATTR.turn]: d.turn }
        if (this.#opts.agentName !== undefined) attributes[ATTR.agentName] = this.#opts.agentName
        const retry = d.cause?.kind === 'retry'
        if (retry) attributes[ATTR.retryOf] = d.cause.of
        const last = this.#lastChat
        this.#retryChatLink = retry && last !== undefined && last.turn === d.cause.of ? last.key : undefined
        this.#start(out, {
          key,
          name: this.#opts.agentName !== undefined ? `invoke_agent ${this.#opts.agentName}` : 'invoke_agent',
          kind: 'internal',
          startTime: time,
          attributes,
          ...(retry ? { links: [{ key: `turn-${d.cause.of}`, attributes: { [ATTR.link]: 'retry_of' } }] } : {}),
        })
        break
      }
      case 'step/start':
        this.#inputs.step()
        this.#chat = {
          key: `turn-${d.turn}.step-${d.step}`, startSeq: seq, startTime: time, turn: d.turn, step: d.step,
          started: false, lastTime: time, requestTime: time,
        }
        break
      case 'user/message':
        if (this.#turn !== undefined && this.#opts.includeContent) this.#turn.inputs.push(conventionMessage(d.message))
        break
      case 'assistant/chunk':
        this.#startChat(out)
        if (this.#chat !== undefined && this.#chat.firstChunkTime === undefined) this.#chat.firstChunkTime = time
        if (this.#chat !== undefined && d.chunk?.type === 'response-metadata') {
          if (typeof d.chunk.id === 'string') this.#chat.responseId = d.chunk.id
          if (typeof d.chunk.model === 'string') this.#chat.responseModel = d.chunk.model
        }
        break
      case 'assistant/message':
        if (this.#chat !== undefined) this.#endChat(out, seq, time, d, undefined)
        this.#approvals.message(d)
        break
      case 'tool/approval-requested':
        this.#approvals.requested(out, d, seq, time, this.#host)
        break
      case 'tool/approval-decided':
        this.#approvals.decided(out, d, seq, time, this.#host)
        break
      case 'tool/input-requested':
        this.#inputs.requested(out, d, seq, time, this.#host)
        break
      case 'tool/input-provided':
        this.#inputs.provided(out, d, seq, time, this.#host)
        break
      case 'step/end':
        if (this.#chat !== undefined) this.#endChat(out, seq, time, undefined, d.outcome)
        break
      case 'tool/call': {
        this.#inputs.call(d)
        if (this.#tools.has(d.callId)) break // its span started at its approval request
        const key = `tool-${d.callId}`
        this.#tools.set(d.callId, { key, startSeq: seq })
        const attributes: Attributes = {
          ...this.#common(),
          [ATTR.operation]: 'execute_tool',
          [ATTR.toolName]: d.name,
          [ATTR.toolCallId]: d.callId,
          [ATTR.toolType]: 'function',
          [ATTR.turn]: d.turn,
          [ATTR.step]: d.step,
          ...this.#source(String(d.name)),
        }
        if (this.#opts.includeContent && typeof d.arguments === 'string') attributes[ATTR.toolArguments] = d.arguments
        this.#start(out, { key, parentKey: this.#turn?.key, name: `execute_tool ${d.name}`, kind: 'internal', startTime: time, attributes })
        break
      }
      case 'tool/result': {
        const open = this.#tools.get(d.callId)
        if (open === undefined) break // a compaction replacement of an old result, not a call ending
        this.#tools.delete(d.callId)
        const attributes: Attributes = { [ATTR.seqStart]: open.startSeq, [ATTR.seqEnd]: seq }
        const err = d.error as D | undefined
        // the conventions record the result of a successful call only
        if (this.#opts.includeContent && err === undefined && d.message?.isError !== true) attributes[ATTR.toolResult] = toolResultText(d.message?.content)
        if (err !== undefined) attributes[ATTR.errorType] = String(err.code)
        this.#end(out, {
          key: open.key,
          endTime: time,
          attributes,
          status: err !== undefined ? { code: 'error', message: String(err.message ?? err.code) } : { code: 'unset' },
        })
        break
      }
      case 'compaction/start':
        this.#compactions.set(String(d.compactionId), { startSeq: seq, startTime: time, done: false })
        break
      case 'compaction/summary':
        this.#summarySpan(out, d, seq, time, undefined)
        break
      case 'compaction/end':
        if (d.error !== undefined) this.#summarySpan(out, d, seq, time, d.error as D)
        this.#compactions.delete(String(d.compactionId))
        break
      case 'turn/end': {
        const turn = this.#turn
        if (turn === undefined) break
        // anything the turn still holds open ends with it (defensive: the L invariants close them first)
        this.#approvals.closeAll(out, seq, time, this.#host)
        this.#inputs.closeAll(out, seq, time, this.#host)
        for (const [callId, t] of this.#tools) {
          this.#end(out, { key: t.key, endTime: time, attributes: { [ATTR.seqStart]: t.startSeq, [ATTR.seqEnd]: seq }, status: { code: 'unset' } })
          this.#tools.delete(callId)
        }
        if (this.#chat !== undefined) this.#endChat(out, seq, time, undefined, undefined)
        const reason = d.reason as D
        // the provider again: the turn span started before the turn's first request/header named it
        const attributes: Attributes = { ...this.#providerAttrs(), [ATTR.seqStart]: turn.startSeq, [ATTR.seqEnd]: seq, [ATTR.turnEnd]: String(reason?.kind) }
        if (this.#opts.includeContent && turn.inputs.length > 0) attributes[ATTR.inputMessages] = JSON.stringify(turn.inputs)
        let status: SpanEnd['status'] = { code: 'unset' }
        if (reason?.kind === 'error') {
          attributes[ATTR.errorType] = String(reason.failure?.code)
          status = { code: 'error', message: String(reason.failure?.message ?? '') }
        }
        this.#end(out, { key: turn.key, endTime: time, attributes, status })
        this.#turn = undefined
        break
      }
      default:
        break
    }
    return out
  }

  /**
   * Starts the open step's chat span once its request is made (a `request/header` in the step, or
   * its first chunk, message or end): only then is the request's model known. The span still
   * starts at `step/start`'s time.
   */
  #startChat(out: SpanAction[]): void {
    const chat = this.#chat
    if (chat === undefined || chat.started) return
    chat.started = true
    const config = (this.#header?.config ?? {}) as D
    // no placeholder: a model nobody named is no model (the span is then `chat`)
    const model = typeof config.model === 'string' && config.model !== '' && config.model !== PLACEHOLDER_MODEL ? config.model : undefined
    const attributes: Attributes = {
      ...this.#common(),
      [ATTR.operation]: 'chat',
      [ATTR.requestStream]: true, // every turnlog model call streams
      [ATTR.turn]: chat.turn,
      [ATTR.step]: chat.step,
    }
    if (model !== undefined) attributes[ATTR.requestModel] = model
    if (typeof config.temperature === 'number') attributes[ATTR.temperature] = config.temperature
    if (typeof config.maxTokens === 'number') attributes[ATTR.maxTokens] = config.maxTokens
    if (typeof config.topP === 'number') attributes[ATTR.topP] = config.topP
    const link = this.#retryChatLink
    this.#retryChatLink = undefined
    this.#lastChat = { turn: chat.turn, key: chat.key }
    this.#start(out, {
      key: chat.key, parentKey: this.#turn?.key, name: model !== undefined ? `chat ${model}` : 'chat', kind: 'client', startTime: chat.startTime, attributes,
      ...(link !== undefined ? { links: [{ key: link, attributes: { [ATTR.link]: 'retry_of' } }] } : {}),
    })
  }

  #endChat(out: SpanAction[], seq: number, time: number, message: D | undefined, outcome: D | undefined): void {
    this.#startChat(out)
    const chat = this.#chat!
    this.#chat = undefined
    const attributes: Attributes = { [ATTR.seqStart]: chat.startSeq, [ATTR.seqEnd]: seq }
    if (chat.firstChunkTime !== undefined) attributes[ATTR.timeToFirstChunk] = Math.max(0, chat.firstChunkTime - chat.requestTime) / 1000
    if (chat.responseId !== undefined) attributes[ATTR.responseId] = chat.responseId
    if (chat.responseModel !== undefined) attributes[ATTR.responseModel] = chat.responseModel
    let status: SpanEnd['status'] = { code: 'unset' }
    if (message !== undefined) {
      attributes[ATTR.finishReasons] = [message.interrupted === true ? 'cancelled' : FINISH_REASONS[message.finish] ?? String(message.finish)]
      Object.assign(attributes, usageAttributes(message.usage))
      if (this.#opts.includeContent) {
        attributes[ATTR.outputMessages] = JSON.stringify(outputMessages(message))
        if (typeof this.#header?.system === 'string' && this.#header.system !== '') {
          attributes[ATTR.systemInstructions] = JSON.stringify([{ type: 'text', content: this.#header.system }])
        }
      }
    } else if (outcome !== undefined) {
      attributes[ATTR.stepOutcome] = String(outcome.kind)
      if (outcome.kind === 'failed') {
        attributes[ATTR.finishReasons] = ['error']
        attributes[ATTR.errorType] = String(outcome.failure?.code)
        status = { code: 'error', message: String(outcome.failure?.message ?? '') }
      } else if (outcome.kind === 'aborted') {
        attributes[ATTR.finishReasons] = ['cancelled']
      }
    }
    this.#end(out, { key: chat.key, endTime: time, attributes, status })
  }

  /**
   * A compaction's summary call as a chat span (issue 23): from `compaction/start` to its
   * `compaction/summary` (usage) or to a `compaction/end` with an error (error status); child of
   * the open turn, if any. One per compaction.
   */
  #summarySpan(out: SpanAction[], d: D, seq: number, time: number, error: D | undefined): void {
    const c = this.#compactions.get(String(d.compactionId))
    if (c === undefined || c.done) return
    c.done = true
    const config = (this.#header?.config ?? {}) as D
    const model = typeof config.model === 'string' && config.model !== '' && config.model !== PLACEHOLDER_MODEL ? config.model : undefined
    const key = `compaction-${String(d.compactionId)}`
    const attributes: Attributes = { ...this.#common(), [ATTR.operation]: 'chat', [ATTR.requestStream]: true, [ATTR.compactionId]: String(d.compactionId) }
    if (model !== undefined) attributes[ATTR.requestModel] = model
    this.#start(out, { key, parentKey: this.#turn?.key, name: model !== undefined ? `chat ${model}` : 'chat', kind: 'client', startTime: c.startTime, attributes })
    const end: Attributes = { ...usageAttributes(d.usage), [ATTR.seqStart]: c.startSeq, [ATTR.seqEnd]: seq }
    let status: SpanEnd['status'] = { code: 'unset' }
    if (error !== undefined) {
      end[ATTR.errorType] = String(error.code)
      status = { code: 'error', message: String(error.message ?? '') }
    }
    this.#end(out, { key, endTime: time, attributes: end, status })
  }

  /** The seq of the last event pushed (-1 before any). */
  get lastSeq(): number {
    return this.#lastSeq
  }
}
