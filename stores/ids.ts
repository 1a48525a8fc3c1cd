/**
 * Session ids as store keys. A session id becomes a file name (`<id>.jsonl`), a table key or a
 * URL fragment, so it must never escape the store's directory: ASCII letters, digits, `.`, `_`,
 * `-`; first character a letter or digit; 1–128 characters; no `..` anywhere. So no path
 * separator (`/`, `\`), no drive letter (`:`), no NUL, no leading dot (hidden files, `.`/`..`).
 * UUIDs (the agent's default ids) pass.
 */
import { TurnlogError } from '../events/errors.js'

export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

export function isValidSessionId(id: unknown): id is string {
  return typeof id === 'string' && SESSION_ID_PATTERN.test(id) && !id.includes('..')
}

export function assertSessionId(id: unknown): asserts id is string {
  if (!isValidSessionId(id)) {
    const shown = typeof id === 'string' ? JSON.stringify(id.length > 80 ? id.slice(0, 80) + '…' : id) : typeof id
    throw new TurnlogError(
      'INVALID_SESSION_ID',
      `invalid session id ${shown}: use 1–128 of [A-Za-z0-9._-], starting with a letter or digit, without '..'`,
      { field: 'sessionId', ...(typeof id === 'string' && id.length <= 200 ? { info: { id } } : {}) },
    )
  }
}
