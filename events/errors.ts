/**
 * One error family for the whole library. Errors are data: a stable `code`, a human message, and
 * structured fields that name the place (file, line, seq, field, invariant). `TurnlogError.is`
 * recognises an error made by any copy of this package (it checks a global brand, not a class).
 */

const BRAND = Symbol.for('turnlog.error')

/** Every code the library throws or reports. Stable: tools may switch on them. */
export const ERROR_CODES = [
  // events and the session log
  'INVALID_EVENT',
  'UNKNOWN_EVENT_TYPE',
  'NOT_LOSSLESS',
  'INVARIANT',
  'REENTRANT_APPEND',
  'SESSION_CLOSED',
  'DUPLICATE_EVENT_TYPE',
  // JSONL and stored logs
  'EMPTY_LOG',
  'MISSING_HEADER',
  'INVALID_HEADER',
  'FUTURE_FORMAT',
  'MALFORMED_LINE',
  'TORN_TAIL',
  'CHECKSUM_MISMATCH',
  'BAD_SEQ',
  'INVALID_UTF8',
  'RECORD_TOO_LARGE',
  'IO_ERROR',
  'FILE_EXISTS',
  /** an optional peer dependency a feature needs is not installed (`pg` for a postgres:// LOG): the message names what to install */
  'MISSING_DEPENDENCY',
  // stores
  'SESSION_OWNED',
  'SEQ_CONFLICT',
  'FSYNC_FAILED',
  'SESSION_NOT_FOUND',
  'SESSION_EXISTS',
  'INVALID_SESSION_ID',
  /** a postgres writer's lease was taken over or expired: it never appends again (fencing) */
  'LEASE_LOST',
  /** a sent message (postgres `send`) was already moved into the log: refused, never duplicated */
  'INPUT_MOVED',
  'INPUT_TOO_LARGE',
  /** the agent stopped because its store failed (the cause is the store's coded error) */
  'PERSISTENCE_FAILED',
  // agent API
  'INVALID_MESSAGE',
  'DUPLICATE_PENDING_ID',
  'AGENT_BUSY',
  'AGENT_DISPOSED',
  'INVALID_OPTION',
  'INVALID_ARGUMENT',
  /** a hook or tool that had not settled when the cancel grace period ran out (it is ignored from then on) */
  'ABANDONED',
  /** an abandoned hook or tool settled after all: its answer is ignored */
  'LATE_SETTLEMENT',
  /** resume did not re-run an interrupted turn: its chain of resume runs reached `maxResumeRuns` (docs/spec/lifecycle.md §8) */
  'RESUME_LIMIT',
  // approvals (docs/spec/lifecycle.md §9): refusals of a decision, which log nothing
  /** the approval was already decided (the first decision wins; an expired one too) */
  'APPROVAL_DECIDED',
  /** no approval with that id was requested in the session */
  'UNKNOWN_APPROVAL',
  /** an approval's edited arguments do not fit the tool's schema */
  'INVALID_ARGS',
  // input requests (docs/spec/lifecycle.md §11): refusals of an answer, which log nothing
  /** the input request was already answered (the first answer wins; an expired one too) */
  'INPUT_ANSWERED',
  /** no input request with that id was asked in the session */
  'UNKNOWN_INPUT',
  /** an answer that does not fit its request (a form's schema, a choice's options, the requested keys) */
  'INVALID_INPUT',
  /** a budget's `price` function threw or returned something other than a finite number >= 0: the call's cost is unknown (docs/spec/lifecycle.md §10) */
  'BUDGET_PRICE',
  /** `turnlog import`: the input is not JSON / JSONL (names file and line) */
  'IMPORT_NOT_JSON',
  /** `turnlog import`: the input parses but is not the format's shape (names file, line and field) */
  'IMPORT_BAD_SHAPE',
  /** `turnlog/mcp`: an MCP server could not be started, reached or initialised within its bounds (names the server) */
  'MCP_CONNECT',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

/** Structured fields that locate an error. Every member is optional; set what is known. */
export interface ErrorDetails {
  file?: string
  line?: number
  seq?: number
  field?: string
  sessionId?: string
  invariant?: string
  expectedSeq?: number
  actualSeq?: number
  eventType?: string
  /** True when the defect is a torn tail that `repair` can fix without losing a complete record. */
  repairable?: boolean
  /** Byte offset in a file, when known. */
  offset?: number
  /** Free-form extra facts (zod issues, ids). JSON-safe. */
  info?: Record<string, unknown>
}

export class TurnlogError extends Error implements ErrorDetails {
  readonly [BRAND] = true
  readonly code: ErrorCode
  file?: string
  line?: number
  seq?: number
  field?: string
  sessionId?: string
  invariant?: string
  expectedSeq?: number
  actualSeq?: number
  eventType?: string
  repairable?: boolean
  offset?: number
  info?: Record<string, unknown>

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(formatMessage(code, message, details), options)
    this.name = 'TurnlogError'
    this.code = code
    for (const [k, v] of Object.entries(details)) {
      if (v !== undefined) (this as unknown as Record<string, unknown>)[k] = v
    }
  }

  /** True for any turnlog error, from this copy of the package or another; optionally of one code. */
  static is(e: unknown, code?: ErrorCode): e is TurnlogError {
    return (
      typeof e === 'object' &&
      e !== null &&
      (e as Record<symbol, unknown>)[BRAND] === true &&
      (code === undefined || (e as { code?: unknown }).code === code)
    )
  }

  /** The structured fields as plain JSON (for `--json` output and reports). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { code: this.code, message: this.message }
    for (const k of DETAIL_KEYS) {
      const v = (this as unknown as Record<string, unknown>)[k]
      if (v !== undefined) out[k] = v
    }
    return out
  }
}

const DETAIL_KEYS = [
  'file', 'line', 'seq', 'field', 'sessionId', 'invariant', 'expectedSeq', 'actualSeq',
  'eventType', 'repairable', 'offset', 'info',
] as const

/** The message names the place, so a bare `String(err)` is already useful. */
function formatMessage(code: ErrorCode, message: string, d: ErrorDetails): string {
  const where: string[] = []
  if (d.file !== undefined) where.push(d.line !== undefined ? `${d.file}:${d.line}` : d.file)
  else if (d.line !== undefined) where.push(`line ${d.line}`)
  if (d.seq !== undefined) where.push(`seq ${d.seq}`)
  if (d.field !== undefined) where.push(`field ${d.field}`)
  if (d.invariant !== undefined) where.push(`invariant ${d.invariant}`)
  return where.length ? `${code}: ${message} (${where.join(', ')})` : `${code}: ${message}`
}
