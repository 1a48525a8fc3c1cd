/**
 * `turnlog schedules LOG [--json] [--cancel ID]` (docs/spec/lifecycle.md §10): a session's wakeups — pending
 * ones with their next due time, and those that fired or were canceled — from the log (the
 * schedules reducer; LOG a JSONL path or postgres://…#id).
 *
 * `--cancel ID` appends `schedule/canceled` through the store's single-writer handle, so it is
 * safe without an agent: it refuses (`SESSION_OWNED`, nothing written) while another process owns
 * the session (a running JSONL agent, a PostgreSQL worker's live lease) — cancel through that
 * agent (`agent.unschedule`) then — and refuses an id that is not pending (`INVALID_ARGUMENT` naming the pending ones,
 * W1). A later owner reads the cancel from the log like any event (PostgreSQL moves the session's
 * due time in the same append). Nothing else is written: no turn is opened.
 */
import { basename, dirname } from 'node:path'
import { TurnlogError } from '../../events/errors.js'
import type { LogEvent } from '../../events/index.js'
import { schedulesReducer, type SchedulesState } from '../../reducers/schedules.js'
import { jsonlStore } from '../../stores/jsonl/store.js'
import { isValidSessionId } from '../../stores/ids.js'
import type { LogStore } from '../../stores/types.js'
import { EXIT_OK } from '../errors.js'
import { inline, json } from '../escape.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { loadLog, resolveLogPath } from '../load.js'
import { displayLog, isStoreUrl, openUrlStore, parsePgLog } from '../pg.js'

export interface SchedulesCommandOptions {
  json?: boolean
  cancel?: string
}

interface History { scheduleId: string; createdSeq: number; fired: number; canceledSeq?: number; due: number; every?: number }

function fold(events: readonly LogEvent[]): { state: SchedulesState; all: History[] } {
  const state = schedulesReducer.initial()
  const all = new Map<string, History>()
  for (const e of events) {
    schedulesReducer.apply(state, e)
    const d = e.data as { scheduleId?: unknown; due?: unknown; every?: unknown }
    const id = typeof d?.scheduleId === 'string' ? d.scheduleId : undefined
    if (id === undefined) continue
    if (e.type === 'schedule/created' && !all.has(id)) {
      all.set(id, { scheduleId: id, createdSeq: e.seq, fired: 0, due: Number(d.due), ...(typeof d.every === 'number' ? { every: d.every } : {}) })
    } else if (e.type === 'schedule/fired' && all.has(id)) all.get(id)!.fired++
    else if (e.type === 'schedule/canceled' && all.has(id)) all.get(id)!.canceledSeq = e.seq
  }
  return { state, all: [...all.values()] }
}

export async function schedulesCommand(logArg: string, opts: SchedulesCommandOptions, io: CliIo): Promise<number> {
  const log = await loadLog(logArg, io)
  const { state, all } = fold(log.events)
  const c = colorsFor(io)
  if (opts.cancel !== undefined) return cancel(logArg, log.events.length, state, opts.cancel, io)
  if (opts.json) {
    io.stdout(json({ pending: state.pending, all }, 2) + '\n')
    return EXIT_OK
  }
  const iso = (t: number) => (Number.isFinite(t) ? new Date(t).toISOString() : '?')
  const lines = [`${inline(displayLog(logArg))}: ${state.pending.length} pending wakeup${state.pending.length === 1 ? '' : 's'}`]
  for (const p of state.pending) {
    lines.push(`  ${c.bold(inline(p.scheduleId))} due ${iso(p.due)}${p.every !== undefined ? ` every ${p.every} ms` : ''} ${c.dim(`${p.deliver}, when busy ${p.whenBusy} · fired ${p.fired}× · set at seq ${p.createdSeq}${p.callId !== undefined ? ` by call ${inline(p.callId)}` : ''}`)}`)
  }
  const done = all.filter((h) => !state.pending.some((p) => p.scheduleId === h.scheduleId))
  if (done.length > 0) {
    lines.push(c.dim(`${done.length} done:`))
    for (const h of done) lines.push(c.dim(`  ${inline(h.scheduleId)} ${h.canceledSeq !== undefined ? `canceled at seq ${h.canceledSeq}` : `fired ${h.fired}×`} (set at seq ${h.createdSeq})`))
  }
  writeHuman(io, lines)
  return EXIT_OK
}

async function cancel(logArg: string, length: number, state: SchedulesState, id: string, io: CliIo): Promise<number> {
  if (!state.pending.some((p) => p.scheduleId === id)) {
    throw new TurnlogError('INVALID_ARGUMENT', `no pending wakeup ${JSON.stringify(id)} in ${displayLog(logArg)} (pending: ${state.pending.map((p) => p.scheduleId).join(', ') || 'none'})`, { field: '--cancel' })
  }
  let store: LogStore & { close?: () => Promise<void> }
  let sessionId: string
  if (isStoreUrl(logArg)) {
    const { url, sessionId: sid } = parsePgLog(logArg)
    store = await openUrlStore(url)
    sessionId = sid
  } else {
    const path = resolveLogPath(logArg, io)
    sessionId = basename(path).replace(/\.jsonl$/, '')
    if (!path.endsWith('.jsonl') || !isValidSessionId(sessionId)) {
      throw new TurnlogError('INVALID_ARGUMENT', `--cancel needs a store's log file DIR/<session-id>.jsonl (its lock keeps one writer), not ${JSON.stringify(logArg)}`, { field: 'LOG', file: path })
    }
    store = jsonlStore(dirname(path))
  }
  try {
    const w = await store.open(sessionId, 'write')
    try {
      // the log may have grown since it was read: cancel only what is still pending at the tail
      const now = w.length
      if (now !== length) throw new TurnlogError('SESSION_OWNED', `${displayLog(logArg)} changed while it was read (${length} → ${now} events): run the command again`, { field: 'LOG' })
      const r = await w.append([{ seq: now, time: Date.now(), type: 'schedule/canceled', data: { scheduleId: id } } as LogEvent], { expectedSeq: now })
      void r
    } finally {
      await w.close()
    }
  } finally {
    await store.close?.()
  }
  writeHuman(io, [`${colorsFor(io).green('OK')} ${inline(id)}: canceled (seq ${length})`])
  return EXIT_OK
}
