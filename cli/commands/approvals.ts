/**
 * `turnlog approvals LOG` (the open approval requests of a session) and `turnlog decide LOG ID
 * --approve|--deny [--reason TEXT] [--arguments JSON] [--by NAME]` (docs/spec/lifecycle.md §9). A JSONL LOG is
 * decided through its directory's store (`jsonlStore(dir).decide`): claimed (first decision
 * wins), durable when the command exits 0, logged by this command or by the running owner. A
 * postgres://…#id LOG is recorded in the store (`postgresStore.decide`) and logged by the worker
 * that runs or claims the session.
 * Refusals (unknown id, already decided, invalid arguments) are coded errors, exit 2; nothing is
 * written then.
 */
import { basename, dirname } from 'node:path'
import { TurnlogError } from '../../events/index.js'
import { approvalsReducer, openApprovals } from '../../reducers/approvals.js'
import { jsonlStore } from '../../stores/jsonl/store.js'
import { readDecisions } from '../../stores/jsonl/decisions.js'
import type { DecisionRecord } from '../../stores/types.js'
import { isValidSessionId } from '../../stores/ids.js'
import { inline } from '../escape.js'
import { EXIT_OK, UsageError } from '../errors.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { loadLog, resolveLogPath } from '../load.js'
import { decidePgLog, displayLog, isStoreUrl, pgDecisionsNotLogged } from '../pg.js'

export async function approvalsCommand(logArg: string, opts: { json?: boolean }, io: CliIo): Promise<number> {
  const log = await loadLog(logArg, io)
  const s = approvalsReducer.initial()
  for (const e of log.events) approvalsReducer.apply(s, e)
  // decisions the store accepted that the log does not hold yet: JSONL claims (the running owner
  // or the next one logs them), PostgreSQL `turnlog_decisions` rows (a worker or the next owner)
  const claims = isStoreUrl(logArg) ? await pgDecisionsNotLogged(logArg) : claimedOf(logArg, io)
  const open = openApprovals(s).filter((r) => !claims.has(r.approvalId))
  const claimed = openApprovals(s).filter((r) => claims.has(r.approvalId))
  if (opts.json) {
    io.stdout(`${JSON.stringify(open.map((r) => ({ ...r, decision: undefined })), null, 2)}\n`)
    return EXIT_OK
  }
  if (claimed.length > 0) {
    const who = isStoreUrl(logArg) ? 'a worker or the next owner logs it' : 'its owner logs it'
    writeHuman(io, claimed.map((r) => {
      const d = claims.get(r.approvalId)!
      const when = Number.isFinite(d.time) ? new Date(d.time).toISOString() : '?'
      return `  ${inline(r.approvalId)} ${inline(r.name)}: decided (${d.decision.kind}) by ${inline(byText(d.by))} at ${when}, not logged yet: ${who}`
    }))
  }
  const c = colorsFor(io)
  if (open.length === 0) {
    writeHuman(io, [`${inline(displayLog(logArg))}: no open approvals${s.waiting ? '' : ''}`])
    return EXIT_OK
  }
  const lines = [`${inline(displayLog(logArg))}: ${open.length} open approval${open.length === 1 ? '' : 's'}${s.waiting ? c.dim(` (parked at seq ${s.waiting.parkedSeq})`) : ''}`]
  for (const r of open) {
    const expires = r.expiresAt !== undefined ? c.dim(` expires ${new Date(r.expiresAt).toISOString()}`) : ''
    lines.push(`  ${c.bold(inline(r.approvalId))} ${inline(r.name)} ${inline(r.arguments)} ${c.dim(`turn ${r.turn} step ${r.step} call ${inline(r.callId)} seq ${r.seq}`)}${expires}`)
    if (r.question !== undefined) lines.push(`    ${inline(r.question)}`)
  }
  writeHuman(io, lines)
  return EXIT_OK
}

/** Who decided, as a person reads it: the user's id, else the kind (`expired`, `canceled`, …). */
function byText(by: DecisionRecord['by']): string {
  return by.kind === 'user' ? (by.id ?? 'a user') : by.kind
}

function claimedOf(logArg: string, io: CliIo): Map<string, DecisionRecord> {
  const path = resolveLogPath(logArg, io)
  const id = basename(path).replace(/\.jsonl$/, '')
  if (!path.endsWith('.jsonl') || !isValidSessionId(id)) return new Map()
  try {
    return readDecisions(dirname(path), id)
  } catch {
    return new Map() // an unreadable claims directory: the log's own view stands
  }
}

export interface DecideCommandOptions {
  approve?: boolean
  deny?: boolean
  reason?: string
  arguments?: string
  by?: string
}

export async function decideCommand(logArg: string, approvalId: string, opts: DecideCommandOptions, io: CliIo): Promise<number> {
  if (opts.approve === opts.deny) throw new UsageError('decide needs exactly one of --approve and --deny')
  if (opts.approve && opts.reason !== undefined) throw new UsageError('--reason goes with --deny')
  if (opts.deny && opts.arguments !== undefined) throw new UsageError('--arguments goes with --approve')
  let args: unknown
  if (opts.arguments !== undefined) {
    try {
      args = JSON.parse(opts.arguments)
    } catch (err) {
      throw new TurnlogError('INVALID_ARGS', `--arguments is not JSON: ${err instanceof Error ? err.message : String(err)}`, { field: '--arguments' })
    }
  }
  const decision = opts.approve ? (args === undefined ? { kind: 'approve' as const } : { kind: 'approve' as const, arguments: args }) : (opts.reason === undefined ? { kind: 'deny' as const } : { kind: 'deny' as const, reason: opts.reason })
  const by = opts.by !== undefined ? { kind: 'user' as const, id: opts.by } : undefined
  const c = colorsFor(io)
  if (isStoreUrl(logArg)) {
    const e = await decidePgLog(logArg, approvalId, decision, by)
    const where = e.seq !== null ? `seq ${e.seq}` : 'recorded; the worker that runs the session logs it'
    writeHuman(io, [`${c.green('OK')} ${inline(approvalId)}: ${decision.kind === 'approve' ? 'approved' : 'denied'} (${where}, call ${inline(e.callId)})`])
    return EXIT_OK
  }
  const path = resolveLogPath(logArg, io)
  const id = basename(path).replace(/\.jsonl$/, '')
  if (!path.endsWith('.jsonl') || !isValidSessionId(id)) {
    throw new TurnlogError('INVALID_ARGUMENT', `decide needs a store's log file DIR/<session-id>.jsonl (the lock beside it serialises deciders), not ${JSON.stringify(logArg)}`, { field: 'LOG', file: path })
  }
  const store = jsonlStore(dirname(path))
  const e = await store.decide(id, approvalId, decision, by ? { by } : {})
  // who carries the session on (issue 38.16): only a decision this call logged itself waits for a resume
  const where = e.seq === null ? 'claimed; its running owner logs it' : e.loggedHere ? `seq ${e.seq}` : `seq ${e.seq}, logged by its running owner`
  const next = e.loggedHere ? '; no process runs the session: resume it to continue' : ''
  writeHuman(io, [`${c.green('OK')} ${inline(approvalId)}: ${decision.kind === 'approve' ? 'approved' : 'denied'} (${where}, call ${inline(e.callId)})${next}`])
  return EXIT_OK
}
