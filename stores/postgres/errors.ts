/** Mapping what `pg` throws to coded errors, and telling a lost connection from a refusal. */
import { TurnlogError } from '../../events/errors.js'
import { SQLSTATE } from './schema.js'

function sqlstate(err: unknown): string | undefined {
  const c = (err as { code?: unknown } | null)?.code
  return typeof c === 'string' ? c : undefined
}

/**
 * True when the statement's outcome is unknown or the server was unreachable: the connection
 * broke (terminated backend, server restart, network), so a commit may or may not have happened.
 * A refusal by the server (constraint, our own SQLSTATEs, syntax) is not transient.
 */
export function isConnectionError(err: unknown): boolean {
  const code = sqlstate(err)
  if (code === undefined) {
    const msg = String((err as Error | null)?.message ?? err)
    return /Connection terminated|connection.*(ended|closed|timeout)|Client has encountered a connection error|not queryable|ECONN|EPIPE|ETIMEDOUT|socket/i.test(msg)
  }
  // 08: connection exception; 57P01-03: admin shutdown, crash shutdown, cannot connect now
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' ||
    code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT'
}

/** A coded error for `err` thrown by a statement on session `sessionId`. */
export function pgError(err: unknown, sessionId: string | undefined, what: string): TurnlogError {
  if (TurnlogError.is(err)) return err
  const code = sqlstate(err)
  const message = String((err as Error | null)?.message ?? err)
  const details = { ...(sessionId !== undefined ? { sessionId } : {}), info: { sqlstate: code ?? null } }
  switch (code) {
    case SQLSTATE.leaseLost:
      return new TurnlogError('LEASE_LOST', message, details, { cause: err })
    case SQLSTATE.seqConflict:
      return new TurnlogError('SEQ_CONFLICT', message, details, { cause: err })
    case SQLSTATE.notFound:
      return new TurnlogError('SESSION_NOT_FOUND', sessionId !== undefined ? `no session ${JSON.stringify(sessionId)} in the store (${message})` : message, details, { cause: err })
    case SQLSTATE.inputMoved:
      return new TurnlogError('INPUT_MOVED', message, details, { cause: err })
    case SQLSTATE.decisionConflict:
      return new TurnlogError('APPROVAL_DECIDED', message, details, { cause: err })
    case '23505': // unique_violation: a duplicate seq can only come from a second writer
      return new TurnlogError('SEQ_CONFLICT', `${what}: ${message}`, details, { cause: err })
    default:
      return new TurnlogError('IO_ERROR', `${what}: ${message}`, details, { cause: err })
  }
}
