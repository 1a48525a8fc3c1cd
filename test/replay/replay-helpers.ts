/** Helpers for the repair/fork/resume/reexecute tests: JSONL bytes, hand-built logs, small agents. */
import { encodeEvent, encodeHeader, type LogHeader } from '../../events/jsonl.js'
import type { LogEvent } from '../../events/index.js'
import { Session } from '../../events/session.js'

export const HEADER: LogHeader = { type: 'session', format: 1, id: 's1', createdAt: 1_764_450_000_000, checksums: 'crc32' }

/** The JSONL bytes of a log (with crcs unless told otherwise). */
export function jsonlBytes(events: readonly LogEvent[], header: LogHeader = HEADER, checksums = true): Uint8Array {
  const h: LogHeader = checksums ? { ...header, checksums: 'crc32' } : (({ checksums: _c, ...rest }) => rest)(header)
  const lines = [encodeHeader(h), ...events.map((e) => encodeEvent(e, { checksums }))]
  return new TextEncoder().encode(lines.join('\n') + '\n')
}

/** Builds a log through a checked `Session` (every append checked against L1–L16). */
export function build(drafts: ReadonlyArray<{ type: string; data: unknown; surfaceOp?: unknown; sourceEventSeqs?: number[] }>): LogEvent[] {
  let t = 1000
  const s = new Session({ id: 's1', clock: () => (t += 10) })
  for (const d of drafts) s.append(d as never)
  return [...s.events]
}

export const um = (id: string, text = id) => ({ id, role: 'user' as const, content: [{ type: 'text' as const, text }], source: { kind: 'user' as const } })

/** The common opening of a turn: a followup, turn/start, its claim, step/start, the user message. */
export function opening(id = 'u1', turn = 1): Array<{ type: string; data: unknown; surfaceOp?: unknown; sourceEventSeqs?: number[] }> {
  return [
    { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [um(id)] } },
    { type: 'turn/start', data: { turn } },
    { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } },
    { type: 'step/start', data: { turn, step: 1 } },
    { type: 'user/message', data: { message: um(id) }, surfaceOp: 'append' },
    { type: 'request/header', data: { reason: 'initial', config: { model: 'm' }, system: 'sys', tools: [] } },
  ]
}

export const chunk = (c: unknown, turn = 1, step = 1) => ({ type: 'assistant/chunk', data: { turn, step, chunk: c } })
