/**
 * Input rounds as spans (docs/spec/lifecycle.md §11): each round of a call is a child span of the
 * call's `execute_tool {name}` span, `await_input {name}`, from its `tool/input-requested` to its
 * `tool/input-provided`, so a trace UI draws how long the call waited for a person (or the client).
 * What was asked: `turnlog.input.request_id`, `turnlog.input.round`, `turnlog.input.keys` and
 * `turnlog.input.kinds` (form, text, choice, url, client; one per key, in the same order),
 * `turnlog.input.expires_at`; the answer: `turnlog.input.action` (accept / decline / cancel),
 * `turnlog.input.answered_by` (user / expired / superseded / canceled) and the person's id as
 * `turnlog.input.user`. The requests' messages and the responses are content: never recorded here
 * (the log has them). A round still open when the log ends stays open, like every span.
 */
import { ATTR } from './attributes.js'
import type { ApprovalHost } from './approval-spans.js'
import type { Attributes, SpanAction } from './span-types.js'

type D = Record<string, any>

export const INPUT_ATTR = {
  requestId: 'turnlog.input.request_id',
  round: 'turnlog.input.round',
  keys: 'turnlog.input.keys',
  kinds: 'turnlog.input.kinds',
  expiresAt: 'turnlog.input.expires_at',
  action: 'turnlog.input.action',
  answeredBy: 'turnlog.input.answered_by',
  user: 'turnlog.input.user',
} as const

export class InputSpans {
  /** Open rounds: request id → span key and start seq. */
  readonly #open = new Map<string, { key: string; startSeq: number }>()
  /** The step's calls by id → tool name (a round names a call that has its `tool/call`: L21). */
  readonly #names = new Map<string, string>()

  /** A step starts: its calls are new. */
  step(): void {
    this.#names.clear()
  }

  call(d: D): void {
    this.#names.set(String(d.callId), String(d.name))
  }

  requested(out: SpanAction[], d: D, seq: number, time: number, host: ApprovalHost): void {
    const callId = String(d.callId)
    const name = this.#names.get(callId) ?? '?'
    const tool = host.tools.get(callId)
    const requestId = String(d.requestId)
    const key = `input-${requestId}`
    this.#open.set(requestId, { key, startSeq: seq })
    const requests = (typeof d.requests === 'object' && d.requests !== null ? d.requests : {}) as Record<string, D>
    const attributes: Attributes = {
      ...host.common(), [INPUT_ATTR.requestId]: requestId, [INPUT_ATTR.round]: typeof d.round === 'number' ? d.round : 0,
      [INPUT_ATTR.keys]: Object.keys(requests), [INPUT_ATTR.kinds]: Object.values(requests).map((q) => String(q?.kind)),
      [ATTR.toolName]: name, [ATTR.toolCallId]: callId,
    }
    if (typeof d.expiresAt === 'number') attributes[INPUT_ATTR.expiresAt] = new Date(d.expiresAt).toISOString()
    host.start(out, { key, parentKey: tool?.key ?? host.turnKey(), name: `await_input ${name}`, kind: 'internal', startTime: time, attributes })
  }

  provided(out: SpanAction[], d: D, seq: number, time: number, host: ApprovalHost): void {
    const open = this.#open.get(String(d.requestId))
    if (open === undefined) return
    this.#open.delete(String(d.requestId))
    const by = (d.by ?? {}) as D
    const attributes: Attributes = {
      [INPUT_ATTR.action]: String((d.answer ?? {}).action), [INPUT_ATTR.answeredBy]: String(by.kind),
      [ATTR.seqStart]: open.startSeq, [ATTR.seqEnd]: seq,
    }
    if (by.kind === 'user' && typeof by.id === 'string') attributes[INPUT_ATTR.user] = by.id
    host.end(out, { key: open.key, endTime: time, attributes, status: { code: 'unset' } })
  }

  /** Ends every open round (the turn ended with it open: defensive, L21 answers them first). */
  closeAll(out: SpanAction[], seq: number, time: number, host: ApprovalHost): void {
    for (const [, w] of this.#open) host.end(out, { key: w.key, endTime: time, attributes: { [ATTR.seqStart]: w.startSeq, [ATTR.seqEnd]: seq }, status: { code: 'unset' } })
    this.#open.clear()
  }
}
