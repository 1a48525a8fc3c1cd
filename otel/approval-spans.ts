/**
 * The wait for a person as spans (docs/spec/lifecycle.md §9): a call that needs approval has its
 * `execute_tool {name}` span from its `tool/approval-requested` (a `needsApproval` request comes
 * before the call's `tool/call`) to its `tool/result`, and the wait is a child span of it,
 * `await_approval {name}`, from the request to the decision: who decided
 * (`turnlog.approval.decided_by`: user / expired / superseded / canceled, and the person's id as
 * `turnlog.approval.user`), the outcome (`turnlog.approval.decision`: approve / deny), whether the
 * person edited the arguments. An `ask` request (after its `tool/call`) is a child of the span
 * that is already open. The question, the reason and edited arguments are content (only with
 * `includeContent`). A wait still open when the log ends stays open, like every span.
 *
 * A child span rather than span events: the wait has a length (hours, while parked) that a trace
 * UI should draw, and the fold's actions stay start/end only, so the SDK sink, OTLP/JSON and the
 * live plugin need nothing new.
 */
import { isRunnableCall } from '../events/index.js'
import { ATTR } from './attributes.js'
import type { Attributes, SpanAction, SpanEnd, SpanStart } from './span-types.js'

type D = Record<string, any>

/** What the fold lends the approval part: its span starts and ends, common attributes, open spans. */
export interface ApprovalHost {
  start(out: SpanAction[], s: SpanStart): void
  end(out: SpanAction[], e: SpanEnd): void
  common(): Attributes
  turnKey(): string | undefined
  includeContent: boolean
  /** The open tool spans by call id (the fold's own map: a span opened here is ended at the call's result). */
  tools: Map<string, { key: string; startSeq: number }>
  /** The MCP attributes of a tool by name, from the last logged definitions (none for the app's own). */
  source?(name: string): Attributes
}

export const APPROVAL_ATTR = {
  id: 'turnlog.approval.id',
  decision: 'turnlog.approval.decision',
  decidedBy: 'turnlog.approval.decided_by',
  user: 'turnlog.approval.user',
  edited: 'turnlog.approval.arguments_edited',
  expiresAt: 'turnlog.approval.expires_at',
  question: 'turnlog.approval.question',
  reason: 'turnlog.approval.reason',
  arguments: 'turnlog.approval.arguments',
} as const

/** The tool span's start attributes (the fold's `tool/call` ones), for a span opened at a request. */
export function toolAttributes(common: Attributes, d: { name: string; callId: string; turn: unknown; step: unknown }): Attributes {
  return {
    ...common, [ATTR.operation]: 'execute_tool', [ATTR.toolName]: d.name, [ATTR.toolCallId]: d.callId, [ATTR.toolType]: 'function',
    [ATTR.turn]: d.turn as number, [ATTR.step]: d.step as number,
  }
}

export class ApprovalSpans {
  /** The open step's calls (from its assistant message): call id → name, raw arguments. */
  readonly #calls = new Map<string, { name: string; arguments: string }>()
  /** Open waits: approval id → span key and start seq. */
  readonly #open = new Map<string, { key: string; startSeq: number }>()

  message(d: D): void {
    this.#calls.clear()
    const content = d?.message?.content
    if (!Array.isArray(content)) return
    for (const b of content) if (isRunnableCall(b)) this.#calls.set(b.id, { name: b.name, arguments: b.arguments })
  }

  requested(out: SpanAction[], d: D, seq: number, time: number, host: ApprovalHost): void {
    const callId = String(d.callId)
    const call = this.#calls.get(callId) ?? { name: '?', arguments: '' }
    let tool = host.tools.get(callId)
    if (tool === undefined) {
      // a needsApproval request: the call's span starts with the wait
      tool = { key: `tool-${callId}`, startSeq: seq }
      host.tools.set(callId, tool)
      const attributes = { ...toolAttributes(host.common(), { name: call.name, callId, turn: d.turn, step: d.step }), ...host.source?.(call.name) }
      if (host.includeContent) attributes[ATTR.toolArguments] = call.arguments
      host.start(out, { key: tool.key, parentKey: host.turnKey(), name: `execute_tool ${call.name}`, kind: 'internal', startTime: time, attributes })
    }
    const key = `approval-${String(d.approvalId)}`
    this.#open.set(String(d.approvalId), { key, startSeq: seq })
    const attributes: Attributes = { ...host.common(), [APPROVAL_ATTR.id]: String(d.approvalId), [ATTR.toolName]: call.name, [ATTR.toolCallId]: callId }
    if (typeof d.expiresAt === 'number') attributes[APPROVAL_ATTR.expiresAt] = new Date(d.expiresAt).toISOString()
    if (host.includeContent && typeof d.question === 'string') attributes[APPROVAL_ATTR.question] = d.question
    host.start(out, { key, parentKey: tool.key, name: `await_approval ${call.name}`, kind: 'internal', startTime: time, attributes })
  }

  decided(out: SpanAction[], d: D, seq: number, time: number, host: ApprovalHost): void {
    const open = this.#open.get(String(d.approvalId))
    if (open === undefined) return
    this.#open.delete(String(d.approvalId))
    const decision = (d.decision ?? {}) as D
    const by = (d.by ?? {}) as D
    const attributes: Attributes = {
      [APPROVAL_ATTR.decision]: String(decision.kind), [APPROVAL_ATTR.decidedBy]: String(by.kind),
      [ATTR.seqStart]: open.startSeq, [ATTR.seqEnd]: seq,
    }
    if (by.kind === 'user' && typeof by.id === 'string') attributes[APPROVAL_ATTR.user] = by.id
    if (decision.kind === 'approve') attributes[APPROVAL_ATTR.edited] = typeof decision.arguments === 'string'
    if (host.includeContent && typeof decision.arguments === 'string') attributes[APPROVAL_ATTR.arguments] = decision.arguments
    if (host.includeContent && typeof decision.reason === 'string') attributes[APPROVAL_ATTR.reason] = decision.reason
    host.end(out, { key: open.key, endTime: time, attributes, status: { code: 'unset' } })
  }

  /** Ends every open wait (the turn ended with it still open: defensive, L17 decides them first). */
  closeAll(out: SpanAction[], seq: number, time: number, host: ApprovalHost): void {
    for (const [, w] of this.#open) host.end(out, { key: w.key, endTime: time, attributes: { [ATTR.seqStart]: w.startSeq, [ATTR.seqEnd]: seq }, status: { code: 'unset' } })
    this.#open.clear()
  }
}
