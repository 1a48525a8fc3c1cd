/**
 * The send side of the PostgreSQL store (`send`, `pendingSends`): durable input from any process
 * without the lease, in `turnlog_inbox` until the lease holder moves it into the log (schema.ts
 * `turnlog_send`, writer.ts). Structural over its store, so store.ts may import this file.
 */
import { checkInputSize } from '../../events/input-size.js'
import { randomUUID } from 'node:crypto'
import { TurnlogError } from '../../events/errors.js'
import { UserMessage } from '../../events/messages.js'
import { assertSessionId } from '../ids.js'
import { makeHeader } from '../memory.js'

/** `send` options. */
export interface SendOptions {
  /** Which inbox list the message joins: `'next-turn'` (a turn of its own, default) or `'next-step'`. */
  target?: 'next-turn' | 'next-step'
  /** Whether it wakes the agent (default true: `next-step` + wake is `steer`, without it `inject`). */
  wake?: boolean
}

/** A message to send: its text, or `{ content: Block[], id?, source? }`. */
export type MessageLike = string | { id?: string; content: unknown; source?: unknown }

/** What sending needs of its store (the PostgresStore). */
export interface PgSendHost {
  readonly clock: () => number
  query(sql: string, params: unknown[], sessionId: string | undefined, what: string): Promise<{ rows: unknown[] }>
}

/** `PostgresStore.send`: see there. */
export async function sendPg(store: PgSendHost, sessionId: string, message: MessageLike, opts: SendOptions = {}): Promise<string> {
  assertSessionId(sessionId)
  const target = opts.target ?? 'next-turn'
  if (target !== 'next-turn' && target !== 'next-step') {
    throw new TurnlogError('INVALID_ARGUMENT', `target must be 'next-turn' or 'next-step', got ${String(target)}`, { sessionId, field: 'target' })
  }
  const wake = opts.wake ?? true
  const m = toMessage(message, sessionId)
  const text = JSON.stringify(m)
  checkInputSize(text, 'message', sessionId)
  const header = makeHeader(sessionId, {}, store.clock)
  await store.query('SELECT turnlog_send($1, $2, $3, $4, $5, $6)', [
    sessionId, JSON.stringify(header), m.id, target, wake === true, text,
  ], sessionId, 'send failed')
  return m.id
}

/** `PostgresStore.pendingSends`: the unmoved rows' message ids, in send order. */
export async function pendingSendsPg(store: PgSendHost, sessionId: string): Promise<string[]> {
  assertSessionId(sessionId)
  const r = await store.query(
    'SELECT message_id FROM turnlog_inbox WHERE session_id = $1 AND moved_seq IS NULL ORDER BY n',
    [sessionId], sessionId, 'pendingSends failed',
  )
  return (r.rows as Array<{ message_id: string }>).map((x) => x.message_id)
}

export function toMessage(input: MessageLike, sessionId: string): UserMessage {
  if (typeof input === 'string') {
    return { id: randomUUID(), role: 'user', content: [{ type: 'text', text: input }], source: { kind: 'user' } }
  }
  if (typeof input !== 'object' || input === null) {
    throw new TurnlogError('INVALID_MESSAGE', 'a message is a string or { content: Block[], id?, source? }', { sessionId, field: 'message' })
  }
  const candidate = { id: input.id ?? randomUUID(), role: 'user', content: input.content, source: input.source ?? { kind: 'user' } }
  const r = UserMessage.safeParse(candidate)
  if (!r.success) {
    const issue = r.error.issues[0]!
    throw new TurnlogError('INVALID_MESSAGE', issue.message, { sessionId, field: ['message', ...issue.path.map(String)].join('.') })
  }
  return r.data
}
