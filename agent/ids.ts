/**
 * The default id source. Node builds `crypto.randomUUID()` by concatenating its hex groups, so
 * each id is a tree of 14 cons strings (about 500 bytes of heap) until something flattens it; an
 * id kept in the log or as a session id is then paid for for as long as the agent lives. A
 * property lookup flattens (and internalizes) it once, leaving one flat string of about 70 bytes
 * (benchmark B6, bench/README.md).
 */
const FLAT: Record<string, never> = Object.create(null) as Record<string, never>

/** A fresh random UUID as one flat string. */
export function randomId(): string {
  const id = globalThis.crypto.randomUUID()
  // the lookup's result is irrelevant: it makes V8 flatten the concatenation in place
  if (id in FLAT) return id
  return id
}
