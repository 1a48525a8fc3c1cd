/**
 * The token meter (docs/spec/lifecycle.md §7): how many tokens the request that the surface would produce now
 * costs, kept as a reducer-backed projection over the committed events, O(1) per event (a
 * replacement costs O(hidden nodes) plus one splice of the surface order).
 *
 * **Anchor and delta.** Every `assistant/message` that carries provider `usage` is an anchor: its
 * `inputTokens + cacheReadTokens + cacheWriteTokens` is what the provider counted for the request
 * that produced it (system prompt, tools and the messages then on the surface). From there on, the
 * meter adds a signed, estimated delta: + the estimate of every node appended to the surface
 * (the assistant message itself first), − the estimates of the nodes a replacement hides, + the
 * estimate of the replacing node. The anchor holds while the request header (system prompt, tool
 * set, model) stays the one it was measured with; after a header change, or before any anchor, the
 * measure is the full estimate: header + Σ node estimates (kept as a running sum too, never
 * re-folded).
 *
 * **The default tokenizer** is a character heuristic, `ceil(chars / 4)` per text, plus
 * `MESSAGE_OVERHEAD_TOKENS` (4) per visible message; a tool call counts its name and its raw
 * arguments, an image counts `IMAGE_TOKENS` (1,000), the header counts the system prompt and the
 * JSON of the tool specs. A custom `tokenizer(text)` replaces only the per-text count.
 *
 * The state also keeps, per current surface node, what the pruner and the summariser need: its
 * estimate, whether the model sees it, the tool-call ids of an assistant message, the call id and
 * text length of a tool result, and the set of tool results above the prune threshold.
 */
import type { EventOf, LogEvent, ModelMessage, ToolSpec, Usage } from '../events/index.js'
import { isRunnableCall } from '../events/index.js'
import { visibleMessage } from '../reducers/history.js'
import { replacedRange } from '../reducers/order.js'
import { isSurfaceEvent, surfaceReducer, type SurfaceState } from '../reducers/surface.js'
import type { Reducer } from '../reducers/types.js'

/** Counts the tokens of one text. */
export type Tokenizer = (text: string) => number

export const CHARS_PER_TOKEN = 4
export const MESSAGE_OVERHEAD_TOKENS = 4
export const IMAGE_TOKENS = 1_000

/** The default tokenizer: `ceil(chars / 4)` (UTF-16 code units). */
export const charTokenizer: Tokenizer = (text) => Math.ceil(text.length / CHARS_PER_TOKEN)

/** The estimated tokens of one message as the model sees it. */
export function estimateMessage(m: ModelMessage, tokenizer: Tokenizer = charTokenizer): number {
  let n = MESSAGE_OVERHEAD_TOKENS
  for (const b of m.content) {
    switch (b.type) {
      case 'text':
      case 'reasoning':
        n += tokenizer(b.text)
        break
      case 'tool-call':
        n += tokenizer(b.name) + tokenizer(b.arguments)
        break
      case 'image':
      case 'file':
        n += IMAGE_TOKENS
        break
      case 'tool-result': // a provider-executed call's result (issue 23): its JSON as sent
        n += tokenizer(JSON.stringify(b.result) ?? '')
        break
      case 'source': // never sent
        break
      case 'custom': // re-sent as provider options (AI SDK v4 `custom` content)
        n += tokenizer(JSON.stringify(b.providerData ?? {}))
        break
    }
  }
  return n
}

/** The estimated tokens of the request header: system prompt and tool specs. */
export function estimateHeader(system: string, tools: readonly ToolSpec[], tokenizer: Tokenizer = charTokenizer): number {
  return tokenizer(system) + (tools.length > 0 ? tokenizer(JSON.stringify(tools)) : 0)
}

/** Total characters of a message's text blocks (what the pruner compares with its threshold). */
export function textChars(m: ModelMessage): number {
  let n = 0
  for (const b of m.content) if (b.type === 'text') n += b.text.length
  return n
}

/** The provider's input count of a request: its disjoint input buckets. */
export function usageInputTokens(u: Usage): number {
  return u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0)
}

/** What the meter keeps per current surface node. */
export interface NodeInfo {
  type: 'user/message' | 'assistant/message' | 'tool/result'
  /** Estimated tokens (0 when the model does not see it: an empty assistant message). */
  tokens: number
  visible: boolean
  /** `assistant/message`: the ids of its tool-call blocks. */
  callIds?: string[]
  /** `tool/result`: its call id and the characters of its text. */
  callId?: string
  chars?: number
}

export interface MeterState {
  /** The surface order and the replacement generation (the surface reducer's state). */
  surface: SurfaceState
  /** Per current surface node (by seq). */
  nodes: Record<number, NodeInfo>
  /** Σ tokens of the current surface nodes. */
  estimate: number
  /** Estimated tokens of the last logged header (0 before any). */
  headerTokens: number
  /** Identity of the last logged header (system, tools, model), or null before any. */
  headerKey: string | null
  /** The last provider count and the header it was measured with, or null. */
  anchor: { tokens: number; seq: number; headerKey: string | null } | null
  /** Signed estimated change of the surface since the anchor. */
  delta: number
  /** Seqs of current tool results whose text is above the prune threshold. */
  large: Record<number, true>
}

export interface Measurement {
  /** The measure: anchor + delta when the anchor holds, else the full estimate. */
  tokens: number
  source: 'usage' | 'estimate'
  /** The full estimate (header + surface), whatever the source. */
  estimate: number
  /** Seq of the anchoring `assistant/message`, when `source` is `usage`. */
  anchorSeq?: number
}

export interface MeterOptions {
  tokenizer?: Tokenizer
  /** Tool results whose text has more characters than this are tracked in `large`. */
  pruneThresholdChars?: number
}

/** The meter as a reducer (pure given a deterministic tokenizer). */
export function createMeterReducer(opts: MeterOptions = {}): Reducer<MeterState> {
  const tokenizer = opts.tokenizer ?? charTokenizer
  const threshold = opts.pruneThresholdChars ?? Infinity
  const nodeOf = (event: LogEvent): NodeInfo => {
    const type = event.type as NodeInfo['type']
    const message = visibleMessage(event)
    const info: NodeInfo = { type, tokens: message ? estimateMessage(message, tokenizer) : 0, visible: message !== null }
    const m = (event.data as { message: ModelMessage }).message
    if (type === 'assistant/message') {
      const ids = m.content.flatMap((b) => (isRunnableCall(b) ? [b.id] : []))
      if (ids.length > 0) info.callIds = ids
    } else if (type === 'tool/result') {
      info.callId = (event as EventOf<'tool/result'>).data.callId
      info.chars = textChars(m)
    }
    return info
  }
  const remove = (s: MeterState, seq: number) => {
    const n = s.nodes[seq]
    if (n === undefined) return
    s.estimate -= n.tokens
    s.delta -= n.tokens
    delete s.nodes[seq]
    delete s.large[seq]
  }
  return {
    name: 'meter',
    initial: () => ({
      surface: surfaceReducer.initial(),
      nodes: {},
      estimate: 0,
      headerTokens: 0,
      headerKey: null,
      anchor: null,
      delta: 0,
      large: {},
    }),
    apply(s, event) {
      if (event.type === 'request/header') {
        const d = (event as EventOf<'request/header'>).data
        s.headerTokens = estimateHeader(d.system, d.tools, tokenizer)
        s.headerKey = JSON.stringify([d.system, d.tools, d.config.model])
        return
      }
      if (!isSurfaceEvent(event)) return
      const op = event.surfaceOp!
      if (op === 'append' && event.type === 'assistant/message') {
        const usage = (event as EventOf<'assistant/message'>).data.usage
        if (usage !== undefined) {
          s.anchor = { tokens: usageInputTokens(usage), seq: event.seq, headerKey: s.headerKey }
          s.delta = 0
        }
      }
      if (op !== 'append') {
        const { from, to } = replacedRange(s.surface.seqs, s.surface.anchors, op.start, op.end)
        for (let i = from; i < to; i++) remove(s, s.surface.seqs[i]!)
      }
      surfaceReducer.apply(s.surface, event)
      const info = nodeOf(event)
      s.nodes[event.seq] = info
      s.estimate += info.tokens
      s.delta += info.tokens
      if (info.chars !== undefined && info.chars > threshold) s.large[event.seq] = true
    },
  }
}

/** Reads the measure off a meter state. O(1). */
export function measure(s: MeterState): Measurement {
  const estimate = s.headerTokens + s.estimate
  const a = s.anchor
  if (a !== null && a.headerKey === s.headerKey) {
    return { tokens: Math.max(0, a.tokens + s.delta), source: 'usage', estimate, anchorSeq: a.seq }
  }
  return { tokens: estimate, source: 'estimate', estimate }
}

/**
 * A live meter: folds each committed event once (`apply`), answers `measure()` in O(1).
 * `ContextMeter.fromLog(events)` folds a whole log (tests compare it with the live one).
 */
export class ContextMeter {
  readonly #reducer: Reducer<MeterState>
  readonly state: MeterState

  constructor(opts: MeterOptions = {}) {
    this.#reducer = createMeterReducer(opts)
    this.state = this.#reducer.initial()
  }

  static fromLog(events: readonly LogEvent[], opts: MeterOptions = {}): ContextMeter {
    const m = new ContextMeter(opts)
    for (const e of events) m.apply(e)
    return m
  }

  apply(event: LogEvent): void {
    this.#reducer.apply(this.state, event)
  }

  measure(): Measurement {
    return measure(this.state)
  }

  /** The replacement generation (committed replacements; only grows). */
  get generation(): number {
    return this.state.surface.generation
  }

  /** The current surface seqs, in model order (the live array: do not mutate). */
  get seqs(): readonly number[] {
    return this.state.surface.seqs
  }

  node(seq: number): NodeInfo | undefined {
    return this.state.nodes[seq]
  }
}
