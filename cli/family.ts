/**
 * A session's relatives, as the CLI finds them (docs/spec/lifecycle.md §10): a child session lives in the same
 * store as its parent, so a JSONL child is `<dir>/<child-id>.jsonl` beside the parent's file and a
 * PostgreSQL child is `postgres://…#<child-id>` in the same database. `turnlog replay` and the report
 * link to them; `turnlog export --children` reads them.
 */
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { LogEvent } from '../events/index.js'
import { isValidSessionId } from '../stores/ids.js'
import type { CliIo } from './io.js'
import { loadLog, resolveLogPath } from './load.js'
import { displayLog, isStoreUrl, parsePgLog } from './pg.js'

/**
 * The LOG argument naming session `id` in the same store as `logArg`, or undefined: a JSONL log
 * whose sibling file does not exist, or an id that is not a safe file name.
 */
export function relativeLog(logArg: string, id: string, io: CliIo): string | undefined {
  if (!isValidSessionId(id)) return undefined
  if (isStoreUrl(logArg)) {
    const { url } = parsePgLog(logArg)
    return `${url}#${encodeURIComponent(id)}`
  }
  const file = join(dirname(logArg), `${id}.jsonl`)
  return existsSync(resolveLogPath(file, io)) ? file : undefined
}

/** `relativeLog`, as printed (a postgres URL without its password). */
export function childLinker(logArg: string, io: CliIo): (id: string) => string | undefined {
  return (id) => {
    const arg = relativeLog(logArg, id, io)
    return arg !== undefined ? displayLog(arg) : undefined
  }
}

/** The child session ids a log spawned (`child/spawned`), with the spawning call, in log order. */
export function spawnedChildren(events: readonly LogEvent[]): Array<{ seq: number; callId: string; child: string }> {
  const out: Array<{ seq: number; callId: string; child: string }> = []
  for (const e of events) {
    if (e.type !== 'child/spawned') continue
    const d = e.data as { callId?: unknown; child?: unknown }
    if (typeof d.child === 'string' && typeof d.callId === 'string') out.push({ seq: e.seq, callId: d.callId, child: d.child })
  }
  return out
}

/** A session's child logs, read recursively from the same store (`turnlog export --children`). */
export interface ChildLogs {
  callId: string
  tree: { sessionId: string; events: readonly LogEvent[]; children: ChildLogs[] }
}

/**
 * Reads the children `events` spawned (and theirs), from beside `logArg`. A child whose log is not
 * there is reported through `missing` and left out; `seen` cuts a cycle a hostile store could hold.
 */
export async function loadChildren(
  logArg: string, events: readonly LogEvent[], io: CliIo, missing: (child: string, callId: string) => void, seen = new Set<string>(),
): Promise<ChildLogs[]> {
  const out: ChildLogs[] = []
  for (const k of spawnedChildren(events)) {
    if (seen.has(k.child)) continue
    seen.add(k.child)
    const arg = relativeLog(logArg, k.child, io)
    if (arg === undefined) {
      missing(k.child, k.callId)
      continue
    }
    const log = await loadLog(arg, io)
    out.push({ callId: k.callId, tree: { sessionId: log.header.id, events: log.events, children: await loadChildren(arg, log.events, io, missing, seen) } })
  }
  return out
}
