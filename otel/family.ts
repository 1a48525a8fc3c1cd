/**
 * A parent session and its child sessions (docs/spec/lifecycle.md §10) as one span tree: each child's spans sit
 * under the parent's `execute_tool` span of the call that spawned it (`child/spawned`), so one
 * trace shows the parent's turn, the call, and inside it the child's turns, model calls and tools.
 * Each session keeps its own `gen_ai.conversation.id`. Pure (no OpenTelemetry types): OTLP/JSON
 * (`toOtlpJson(…, { children })`, `turnlog export --children`) and the SDK (`exportFamilySpans`)
 * both read these records.
 */
import type { LogEvent } from '../events/index.js'
import { logToSpans, type SpanRecord } from './log-to-spans.js'
import type { SpanFoldOptions } from './span-types.js'

/** A session's log and the logs of the children it spawned, by the spawning call. */
export interface SessionTree {
  sessionId: string
  events: Iterable<LogEvent>
  /** The children, each with the call id of its `child/spawned` in this session. */
  children?: ReadonlyArray<{ callId: string; tree: SessionTree }>
}

/**
 * Every span of the tree: the root's keys as `logToSpans` gives them, each child's prefixed with
 * `<child session id>/` (unique across the tree); a child's top spans (its turns) get the
 * spawning call's tool span as parent. A child whose call has no span (a hostile or cut log) keeps
 * its spans as roots.
 */
export function familyToSpans(tree: SessionTree, opts: Omit<SpanFoldOptions, 'sessionId'>): SpanRecord[] {
  const out: SpanRecord[] = []
  const walk = (t: SessionTree, prefix: string, parentKey: string | undefined, depth: number): void => {
    const records = logToSpans(t.events, { ...opts, sessionId: t.sessionId })
    const keys = new Set(records.map((r) => r.key))
    for (const r of records) {
      const rec: SpanRecord = { ...r, key: prefix + r.key }
      if (r.parentKey !== undefined && keys.has(r.parentKey)) rec.parentKey = prefix + r.parentKey
      else if (parentKey !== undefined) rec.parentKey = parentKey
      else delete rec.parentKey
      if (r.links !== undefined) rec.links = r.links.map((l) => ({ ...l, key: prefix + l.key }))
      out.push(rec)
    }
    if (depth >= 32) return // a store cannot nest deeper by accident; a cycle is cut by the caller's reader
    for (const c of t.children ?? []) {
      const toolKey = `tool-${c.callId}`
      walk(c.tree, `${prefix}${c.tree.sessionId}/`, keys.has(toolKey) ? prefix + toolKey : undefined, depth + 1)
    }
  }
  walk(tree, '', undefined, 0)
  return out
}
