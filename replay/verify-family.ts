/**
 * L19 across a family of logs (docs/spec/invariants.md, docs/spec/lifecycle.md §10): `verify` checks one log; a parent
 * and the children its subagent calls ran are checked together here. For each `child/spawned` of
 * a log, recursively:
 * - `FAMILY_HEADER`: the child's header is its own id and names the parent session, the seq of the
 *   `child/spawned` and the call (`parent.session`, `parent.seq`, `parent.callId`). A log that is not
 *   this call's child is checked no further.
 * - `FAMILY_CHILD_MISSING`: a call whose result is an answer has a child log (a call closed with
 *   an error may have none: its process died before creating it). `FAMILY_CHILD_UNREADABLE`: the
 *   child's log exists and cannot be read (the read's coded error).
 * - `FAMILY_ANSWER`: a result without error is the text of the child's last answer, and the child's
 *   last turn completed (never a made-up answer).
 * - `FAMILY_END`: a result naming how the child ended ("the child session … ended 'budget'",
 *   agent/subagent.ts, replay/child-outcome.ts) names the end its log has.
 * - `FAMILY_ORPHAN`: once the call has its result (other than `TOOL_OUTCOME_UNKNOWN`, which repair
 *   gives a call whose child may still be resumed), the child has no open turn, and nothing starts
 *   in it (turn, step, request, tool call) timed after the result — unless the parent's turn ended
 *   `interrupted` (repair's closers are timed at the parent's last event, not when the child ended).
 * - `FAMILY_CASCADE`: a child ended `aborted {cause: parent}` only when its parent's call was cut
 *   off: the call's result is an error other than `TOOL_ERROR` (the cancel's, the timeout's,
 *   repair's), or a `TOOL_ERROR` in a turn that ended aborted. (A call still without a result is
 *   not judged: the parent may be live, or crashed before it logged the cancel.)
 * - `FAMILY_REPEATED`: a session id appears once in the family (no child spawned twice, no cycle).
 * - `FAMILY_UNSPAWNED`: a log in the same store whose header names a member of the family as its
 *   parent, at a seq that member's log holds, is a child some `child/spawned` names (an orphan
 *   child log, e.g. one copied in or left by a tool that is not this family's). One whose parent
 *   seq is past the end of the parent's log is what a crash between creating the child and making
 *   its `child/spawned` durable leaves: listed in `unspawned`, not a violation. Looked for among
 *   the ids a child of that member can have (`<parent>.c…`, agent/subagent.ts) when the source
 *   can be listed (a store or a directory).
 * - Every child's own log passes `verify` (each violation with code `INVARIANT`, its own id: L20 for
 *   a budget end among them); the root's own log too unless `root: false` (the CLI streams it).
 * Every violation names the session, its file when read from one, the seq (or line 1 for the
 * header) and the field.
 */
import { readdir } from 'node:fs/promises'
import type { EventOf, LogEvent } from '../events/index.js'
import type { CheckerOptions } from '../events/invariants/types.js'
import { TurnlogError } from '../events/errors.js'
import type { LogHeader } from '../events/jsonl.js'
import { lastAnswer } from '../agent/subagent.js'
import { readChild, type ChildLogSource } from './child-outcome.js'
import { verify } from './verify.js'

export type FamilyCode =
  | 'FAMILY_HEADER' | 'FAMILY_CHILD_MISSING' | 'FAMILY_CHILD_UNREADABLE' | 'FAMILY_ANSWER' | 'FAMILY_END'
  | 'FAMILY_ORPHAN' | 'FAMILY_CASCADE' | 'FAMILY_REPEATED' | 'FAMILY_UNSPAWNED' | 'INVARIANT'

/** A broken rule of the family, or of one member's own log (`code: 'INVARIANT'`). */
export interface FamilyViolation {
  /** 'L19' for the family rules; a member's own violation keeps its id (L5, L20, SCHEMA…). */
  invariant: string
  code: FamilyCode
  /** The session the violation is found in. */
  session: string
  /** That session's file, when it was read from one. */
  file?: string
  /** The seq of the event at fault; absent for the header (then `line: 1`). */
  seq?: number
  line?: number
  field?: string
  message: string
}

/** One member of the family as read. */
export interface FamilyLog {
  header: LogHeader
  events: readonly LogEvent[]
  file?: string
}

/** Reads a child's log by session id: undefined when it has none; a throw is its read error. */
export type FamilyReader = (id: string) => Promise<FamilyLog | undefined>

export interface VerifyFamilyOptions extends CheckerOptions {
  /** Check the root's own log with `verify` too (default true). */
  root?: boolean
}

export interface VerifyFamilyResult {
  ok: boolean
  /** Every session read (the root first), with its parent's id and call. */
  sessions: Array<{ id: string; file?: string; parent?: string; callId?: string; events: number }>
  violations: FamilyViolation[]
  /** Spawned children without a log whose call's result is an error (allowed: listed, not violations). */
  missing: Array<{ parent: string; callId: string; child: string }>
  /** Child logs naming a member as parent at a seq past its log's end (a crash before the spawn was durable: listed, not violations). */
  unspawned: Array<{ parent: string; child: string; file?: string; seq: number }>
}

const STARTS = new Set(['turn/start', 'step/start', 'request/header', 'tool/call'])
const ENDED = /the child session (\S+) (?:ended '([^']+)'|ran no turn)/

/** Checks the family under `root`, reading children through `from` (a store, a JSONL directory, or a reader). */
export async function verifyFamily(root: FamilyLog, from: ChildLogSource | FamilyReader, opts: VerifyFamilyOptions = {}): Promise<VerifyFamilyResult> {
  const read: FamilyReader = typeof from === 'function' ? from : (id) => readChild(from, id, true)
  const { root: checkRoot = true, ...checker } = opts
  const out: VerifyFamilyResult = { ok: true, sessions: [], violations: [], missing: [], unspawned: [] }
  const seen = new Set<string>([root.header.id])
  const own = (log: FamilyLog): void => {
    for (const v of verify(log.events, checker).violations) {
      out.violations.push({ invariant: v.invariant, code: 'INVARIANT', session: log.header.id, ...at(log), seq: v.seq, ...(v.field !== undefined ? { field: v.field } : {}), message: v.message })
    }
  }
  out.sessions.push({ id: root.header.id, ...at(root), events: root.events.length })
  if (checkRoot) own(root)
  const members: FamilyLog[] = []
  const walk = async (parent: FamilyLog): Promise<void> => {
    members.push(parent)
    for (const e of parent.events) {
      if (e.type !== 'child/spawned') continue
      const sp = e as EventOf<'child/spawned'>
      const id = sp.data.child
      if (seen.has(id)) {
        out.violations.push(l19('FAMILY_REPEATED', parent, sp.seq, 'data.child', `child/spawned names ${id}, already a session of this family (spawned twice, or a cycle)`))
        continue
      }
      seen.add(id)
      let child: FamilyLog | undefined
      try {
        child = await read(id)
      } catch (err) {
        const te = TurnlogError.is(err) ? err : undefined
        out.violations.push({
          invariant: 'L19', code: 'FAMILY_CHILD_UNREADABLE', session: id,
          ...(te?.file !== undefined ? { file: te.file } : {}), ...(te?.line !== undefined ? { line: te.line } : {}),
          message: `the log of child ${id} (call ${sp.data.callId} of ${parent.header.id}) cannot be read: ${te ? `${te.code}: ` : ''}${err instanceof Error ? err.message : String(err)}`,
        })
        continue
      }
      const result = resultOf(parent.events, sp)
      if (child === undefined) {
        if (result !== undefined && result.data.error === undefined) {
          out.violations.push(l19('FAMILY_CHILD_MISSING', parent, result.seq, 'data.message', `call ${sp.data.callId} has an answer as its result, but its child ${id} (spawned at seq ${sp.seq}) has no log`))
        } else out.missing.push({ parent: parent.header.id, callId: sp.data.callId, child: id })
        continue
      }
      out.sessions.push({ id, ...at(child), parent: parent.header.id, callId: sp.data.callId, events: child.events.length })
      const link = checkLink(parent, sp, child)
      out.violations.push(...link)
      if (link.some((v) => v.code === 'FAMILY_HEADER')) continue // not this call's child: nothing more to compare
      own(child)
      await walk(child)
    }
  }
  await walk(root)
  if (typeof from !== 'function') await findUnspawned(from, members, seen, read, out)
  out.ok = out.violations.length === 0
  return out
}

/** The ids in `from` (a store's `list()`, a directory's `*.jsonl`); none when it cannot be listed. */
async function listIds(from: ChildLogSource): Promise<string[]> {
  try {
    if (typeof from !== 'string') return await from.list()
    const names = await readdir(from)
    return names.filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -'.jsonl'.length))
  } catch {
    return [] // an unlistable source: nothing more can be said of it
  }
}

/** `FAMILY_UNSPAWNED` (see the file comment): logs that name a member as parent but no `child/spawned` names. */
async function findUnspawned(from: ChildLogSource, members: readonly FamilyLog[], seen: ReadonlySet<string>, read: FamilyReader, out: VerifyFamilyResult): Promise<void> {
  const ids = await listIds(from)
  for (const m of members) {
    // a child's id starts with its parent's (cut to 96 characters for a long one): agent/subagent.ts childSessionId
    const prefix = `${m.header.id.slice(0, 96)}.c`
    for (const id of ids) {
      if (!id.startsWith(prefix) || seen.has(id)) continue
      let log: FamilyLog | undefined
      try {
        log = await read(id)
      } catch {
        continue // unreadable: not judged to be anyone's child
      }
      const p = log?.header.parent
      if (log === undefined || p === undefined || p.session !== m.header.id) continue
      if (p.seq >= m.events.length) {
        out.unspawned.push({ parent: m.header.id, child: id, ...at(log), seq: p.seq })
        continue
      }
      out.violations.push({
        invariant: 'L19', code: 'FAMILY_UNSPAWNED', session: id, ...at(log), line: 1, field: 'parent',
        message: `the log of ${id} names ${m.header.id} as its parent (seq ${p.seq}${p.callId !== undefined ? `, call ${p.callId}` : ''}), but no child/spawned of ${m.header.id} names it`,
      })
    }
  }
}

/**
 * The rules between one `child/spawned` of `parent` and the child's log (pure): header, answer,
 * end, orphan, cascade (see the file comment).
 */
export function checkLink(parent: FamilyLog, sp: EventOf<'child/spawned'>, child: FamilyLog): FamilyViolation[] {
  const out: FamilyViolation[] = []
  const d = sp.data
  const h = child.header
  const head = (field: string, message: string) =>
    out.push({ invariant: 'L19', code: 'FAMILY_HEADER', session: d.child, ...at(child), line: 1, field, message: `child ${d.child}: ${message}` })
  if (h.id !== d.child) head('id', `its log's header is session ${h.id}`)
  const p = h.parent
  if (p === undefined) head('parent', 'its header names no parent')
  else {
    if (p.session !== parent.header.id) head('parent.session', `its header names parent ${p.session}, not ${parent.header.id}`)
    if (p.seq !== sp.seq) head('parent.seq', `its header names the parent's seq ${p.seq}, its child/spawned is seq ${sp.seq}`)
    if (p.callId !== d.callId) head('parent.callId', `its header names call ${p.callId ?? '(none)'}, the parent's child/spawned call ${d.callId}`)
  }
  if (out.length > 0) return out

  const ev = child.events
  let starts = 0
  let lastStart: LogEvent | undefined
  let lastEnd: EventOf<'turn/end'> | undefined
  for (const e of ev) {
    if (e.type === 'turn/start') {
      starts++
      lastStart = e
    } else if (e.type === 'turn/end') lastEnd = e as EventOf<'turn/end'>
  }
  const ends = ev.filter((e) => e.type === 'turn/end').length
  const open = starts > ends
  const endKind = open ? 'open' : lastEnd?.data.reason.kind ?? 'no turn'
  const result = resultOf(parent.events, sp)
  const parentEnd = turnEnd(parent.events, d.turn)
  const bad = (code: FamilyCode, where: 'parent' | 'child', seq: number, field: string, message: string) =>
    out.push(l19(code, where === 'parent' ? parent : child, seq, field, message))

  if (result !== undefined) {
    const r = result.data
    if (r.error === undefined) {
      if (endKind !== 'completed') {
        bad('FAMILY_ANSWER', 'parent', result.seq, 'data.message', `call ${d.callId}'s result is an answer, but its child ${d.child}'s last turn ${endKind === 'open' ? 'is open' : endKind === 'no turn' ? 'never ran' : `ended '${endKind}'`}`)
      } else {
        const text = r.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')
        const answer = lastAnswer(ev, d.child)
        if (text !== answer) bad('FAMILY_ANSWER', 'parent', result.seq, 'data.message.content', `call ${d.callId}'s result is ${JSON.stringify(clip(text))}, its child ${d.child} answered ${JSON.stringify(clip(answer))}`)
      }
    } else {
      const m = ENDED.exec(r.error.message)
      if (m !== null && m[1] === d.child) {
        const named = m[2] ?? 'no turn'
        if (named !== endKind) bad('FAMILY_END', 'parent', result.seq, 'data.error.message', `call ${d.callId}'s result says its child ${named === 'no turn' ? 'ran no turn' : `ended '${named}'`}, the child's log shows ${endKind === 'open' ? 'an open turn' : endKind === 'no turn' ? 'no turn' : `'${endKind}'`}`)
      }
    }
    if (r.error?.code !== 'TOOL_OUTCOME_UNKNOWN') {
      if (open) bad('FAMILY_ORPHAN', 'child', lastStart!.seq, 'turn/end', `call ${d.callId} of ${parent.header.id} has its result (seq ${result.seq}), but its child's turn from seq ${lastStart!.seq} never ended`)
      else if (parentEnd?.data.reason.kind !== 'interrupted') {
        const late = ev.find((c) => STARTS.has(c.type) && c.time > result.time)
        if (late !== undefined) bad('FAMILY_ORPHAN', 'child', late.seq, 'time', `${late.type} at ${late.time} is after its parent's call ${d.callId} got its result (seq ${result.seq}, at ${result.time})`)
      }
    }
  }
  if (result !== undefined && lastEnd !== undefined && !open && lastEnd.data.reason.kind === 'aborted' && (lastEnd.data.reason as { cause?: { kind?: string } }).cause?.kind === 'parent') {
    // cut off: the call's result is an error of the cancel (or timeout, or repair), or a TOOL_ERROR
    // in a turn that was cancelled; an answer, or a TOOL_ERROR in a turn that went on, was not
    const err = result.data.error
    const cutOff = err !== undefined && (err.code !== 'TOOL_ERROR' || parentEnd?.data.reason.kind === 'aborted')
    if (!cutOff) {
      bad('FAMILY_CASCADE', 'child', lastEnd.seq, 'data.reason.cause', `the child ended aborted by its parent, but ${parent.header.id}'s call ${d.callId} was not cancelled (its result is ${err === undefined ? 'an answer' : err.code}, turn ${d.turn} ended '${parentEnd?.data.reason.kind ?? 'open'}')`)
    }
  }
  return out
}

/** The spawning call's first `tool/result` after its `child/spawned`. */
function resultOf(events: readonly LogEvent[], sp: EventOf<'child/spawned'>): EventOf<'tool/result'> | undefined {
  for (let i = sp.seq + 1; i < events.length; i++) {
    const e = events[i]!
    if (e.type !== 'tool/result') continue
    const r = e as EventOf<'tool/result'>
    if (r.data.callId === sp.data.callId && r.data.turn === sp.data.turn && r.data.step === sp.data.step) return r
  }
  return undefined
}

function turnEnd(events: readonly LogEvent[], turn: number): EventOf<'turn/end'> | undefined {
  for (const e of events) if (e.type === 'turn/end' && (e as EventOf<'turn/end'>).data.turn === turn) return e as EventOf<'turn/end'>
  return undefined
}

function l19(code: FamilyCode, log: FamilyLog, seq: number, field: string, message: string): FamilyViolation {
  return { invariant: 'L19', code, session: log.header.id, ...at(log), seq, field, message }
}

function at(log: FamilyLog): { file?: string } {
  return log.file !== undefined ? { file: log.file } : {}
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}…` : s
}
