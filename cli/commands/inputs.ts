/**
 * `turnlog inputs LOG` (the open input rounds of a session and of its running children) and
 * `turnlog answer LOG ID --json RESPONSES | --decline [--by NAME]` (docs/spec/lifecycle.md §11), with the
 * conventions of `turnlog approvals` / `turnlog decide`: a JSONL LOG is answered through its
 * directory's store (`jsonlStore(dir).answer`: claimed, first answer wins, durable when the command
 * exits 0, logged by this command or by the running owner); a `postgres://…#id` or
 * `sqlite:FILE#id` LOG is recorded in the store and logged by the process that runs or next
 * claims the session. `--json` is the responses by request key (decision record "cli-answer"
 * (docs/decisions/ in the repository)). Refusals (unknown id, answered already or expired, an
 * answer its request refuses, naming the field) are coded errors, exit 2; nothing is written then.
 */
import { basename, dirname } from 'node:path'
import { TurnlogError, type EventOf, type InputRequest, type LogEvent } from '../../events/index.js'
import { inputsReducer } from '../../reducers/inputs.js'
import { approvalsReducer } from '../../reducers/approvals.js'
import { jsonlStore } from '../../stores/jsonl/store.js'
import { readAnswers } from '../../stores/jsonl/decisions.js'
import type { AnswerRecord } from '../../stores/types.js'
import type { StoreAnswered } from '../../stores/answer.js'
import { isValidSessionId } from '../../stores/ids.js'
import { inline } from '../escape.js'
import { EXIT_OK, UsageError } from '../errors.js'
import { relativeLog } from '../family.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { loadLog, resolveLogPath } from '../load.js'
import { displayLog, isStoreUrl, withPgStore } from '../pg.js'

/** How deep `inputs` follows running children (grandchildren and below). */
const MAX_DEPTH = 8

/** One open round as `turnlog inputs --json` prints it (`agent.inputs()`'s shape). */
export interface ListedInput {
  requestId: string
  callId: string
  name: string
  arguments: string
  round: number
  requests: Record<string, InputRequest>
  session: string
  turn: number
  step: number
  seq: number
  expiresAt?: number
  /** The LOG argument of the session that asked it (a child's sibling log). */
  log: string
}

export async function inputsCommand(logArg: string, opts: { json?: boolean }, io: CliIo): Promise<number> {
  const all: ListedInput[] = []
  const answered = new Map<string, AnswerRecord>()
  let parkedSeq: number | null = null
  const seen = new Set<string>()
  const visit = async (arg: string, depth: number): Promise<void> => {
    const log = await loadLog(arg, io)
    const events = log.events as readonly LogEvent[]
    const sessionId = log.header.id
    if (seen.has(sessionId)) return
    seen.add(sessionId)
    const s = inputsReducer.initial()
    const a = approvalsReducer.initial()
    for (const e of events) {
      inputsReducer.apply(s, e)
      approvalsReducer.apply(a, e)
    }
    if (depth === 0) parkedSeq = a.waiting?.parkedSeq ?? null
    for (const [id, rec] of await answersNotLogged(arg, sessionId, io)) answered.set(id, rec)
    for (const id of s.open) {
      const r = s.byId[id]!
      all.push({
        requestId: r.requestId, callId: r.callId, name: r.name, arguments: r.arguments, round: r.round, requests: r.requests,
        session: sessionId, turn: r.turn, step: r.step, seq: r.seq, ...(r.expiresAt !== undefined ? { expiresAt: r.expiresAt } : {}), log: arg,
      })
    }
    if (depth >= MAX_DEPTH) return
    // a child's open rounds surface in its parent's list (docs/spec/lifecycle.md §11, as approvals do)
    for (const child of runningChildren(events)) {
      const rel = relativeLog(arg, child, io)
      if (rel === undefined) continue
      try {
        await visit(rel, depth + 1)
      } catch {
        // a child not created yet, or unreadable: the parent's own list stands
      }
    }
  }
  await visit(logArg, 0)
  const open = all.filter((r) => !answered.has(r.requestId))
  const claimed = all.filter((r) => answered.has(r.requestId))
  if (opts.json) {
    io.stdout(`${JSON.stringify(open.map((r) => ({ ...r, log: displayLog(r.log) })), null, 2)}\n`)
    return EXIT_OK
  }
  const c = colorsFor(io)
  if (claimed.length > 0) {
    const who = isStoreUrl(logArg) ? 'the process that runs the session or next claims it logs it' : 'its owner logs it'
    writeHuman(io, claimed.map((r) => {
      const d = answered.get(r.requestId)!
      const when = Number.isFinite(d.time) ? new Date(d.time).toISOString() : '?'
      return `  ${inline(r.requestId)} ${inline(r.name)}: answered (${d.answer.action}) by ${inline(d.by.kind === 'user' ? (d.by.id ?? 'a user') : d.by.kind)} at ${when}, not logged yet: ${who}`
    }))
  }
  if (open.length === 0) {
    writeHuman(io, [`${inline(displayLog(logArg))}: no open input requests`])
    return EXIT_OK
  }
  const lines = [`${inline(displayLog(logArg))}: ${open.length} open input request${open.length === 1 ? '' : 's'}${parkedSeq !== null ? c.dim(` (parked at seq ${parkedSeq})`) : ''}`]
  const root = open[0] === undefined ? '' : all.find((r) => r.log === logArg)?.session ?? ''
  for (const r of open) {
    const expires = r.expiresAt !== undefined ? c.dim(` expires ${new Date(r.expiresAt).toISOString()}`) : ''
    const child = r.log !== logArg && r.session !== root ? c.dim(` in child ${inline(r.session)}`) : ''
    lines.push(`  ${c.bold(inline(r.requestId))} ${inline(r.name)} ${inline(r.arguments)} ${c.dim(`round ${r.round} turn ${r.turn} step ${r.step} call ${inline(r.callId)} seq ${r.seq}`)}${expires}${child}`)
    for (const [key, q] of Object.entries(r.requests)) lines.push(`    ${inline(key)} (${q.kind}): ${inline(describe(q))}`)
  }
  writeHuman(io, lines)
  return EXIT_OK
}

/** A request as a person reads it: its message, and the options, URL or schema it names. */
function describe(q: InputRequest): string {
  const message = 'message' in q && typeof q.message === 'string' ? q.message : ''
  if (q.kind === 'choice') return `${message} [${q.options.map((o) => (typeof o === 'string' ? o : JSON.stringify(o))).join(' | ')}]`
  if (q.kind === 'url') return `${message} ${q.url}`
  if (q.kind === 'form') return `${message} ${JSON.stringify(q.schema)}`
  return message
}

/** The answers the store accepted that the log does not hold yet (claims; recorded rows). */
async function answersNotLogged(arg: string, sessionId: string, io: CliIo): Promise<Map<string, AnswerRecord>> {
  try {
    if (isStoreUrl(arg)) return await withPgStore(arg, (store) => store.answersNotLogged(sessionId))
    const path = resolveLogPath(arg, io)
    if (!path.endsWith('.jsonl') || !isValidSessionId(sessionId)) return new Map()
    return readAnswers(dirname(path), sessionId)
  } catch {
    return new Map() // unreadable side records: the log's own view stands
  }
}

/** The children of the log's subagent calls that have no result yet, in spawn order. */
function runningChildren(events: readonly LogEvent[]): string[] {
  const running = new Map<string, string>()
  for (const e of events) {
    if (e.type === 'child/spawned') {
      const d = (e as EventOf<'child/spawned'>).data
      running.set(`${d.turn}/${d.step}/${d.callId}`, d.child)
    } else if (e.type === 'tool/result') {
      const d = (e as EventOf<'tool/result'>).data
      running.delete(`${d.turn}/${d.step}/${d.callId}`)
    }
  }
  return [...running.values()]
}

export interface AnswerCommandOptions {
  json?: string
  decline?: boolean
  by?: string
}

export async function answerCommand(logArg: string, requestId: string, opts: AnswerCommandOptions, io: CliIo): Promise<number> {
  if ((opts.json !== undefined) === (opts.decline === true)) throw new UsageError('answer needs exactly one of --json and --decline')
  let answer: { action: 'accept'; responses: unknown } | { action: 'decline' }
  if (opts.json !== undefined) {
    let responses: unknown
    try {
      responses = JSON.parse(opts.json)
    } catch (err) {
      throw new TurnlogError('INVALID_INPUT', `--json is not JSON: ${err instanceof Error ? err.message : String(err)}`, { field: '--json' })
    }
    if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
      throw new TurnlogError('INVALID_INPUT', '--json is the responses by request key: a JSON object such as {"address": {"city": "Gent"}}', { field: '--json' })
    }
    answer = { action: 'accept', responses }
  } else answer = { action: 'decline' }
  const by = opts.by !== undefined ? { kind: 'user' as const, id: opts.by } : undefined
  const c = colorsFor(io)
  const what = answer.action === 'accept' ? 'accepted' : 'declined'
  if (isStoreUrl(logArg)) {
    const [e, own] = await withPgStore(logArg, async (store, sid) => [await store.answer(sid, requestId, answer, { ...(by ? { by } : {}), waitMs: 1000 }), sid] as const)
    const where = e.seq !== null ? `seq ${e.seq}` : 'recorded; the process that runs the session or next claims it logs it'
    writeHuman(io, [`${c.green('OK')} ${inline(requestId)}: ${what} (${where}, call ${inline(e.callId)}, round ${e.round}${child(e, own)})`])
    return EXIT_OK
  }
  const path = resolveLogPath(logArg, io)
  const id = basename(path).replace(/\.jsonl$/, '')
  if (!path.endsWith('.jsonl') || !isValidSessionId(id)) {
    throw new TurnlogError('INVALID_ARGUMENT', `answer needs a store's log file DIR/<session-id>.jsonl (the claims beside it decide the first answer), not ${JSON.stringify(logArg)}`, { field: 'LOG', file: path })
  }
  const e = await jsonlStore(dirname(path)).answer(id, requestId, answer, by ? { by } : {})
  const where = e.seq === null ? 'claimed; its running owner logs it' : e.loggedHere ? `seq ${e.seq}` : `seq ${e.seq}, logged by its running owner`
  const next = e.loggedHere ? '; no process runs the session: resume it to continue' : ''
  writeHuman(io, [`${c.green('OK')} ${inline(requestId)}: ${what} (${where}, call ${inline(e.callId)}, round ${e.round}${child(e, id)})${next}`])
  return EXIT_OK
}

/** ", in child X" when the request was a running child's (answered there). */
function child(e: StoreAnswered, own: string): string {
  return e.sessionId !== own ? `, in child ${inline(e.sessionId)}` : ''
}
