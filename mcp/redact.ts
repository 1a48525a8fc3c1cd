/**
 * Credentials never reach the log, an error message or a span (docs/spec/lifecycle.md §12): every
 * text that leaves a connection (an error's message) has each known secret replaced.
 */

/** The secrets of a server's config: its header values, its environment values, and the bearer tokens in them. */
export function secretsOf(config: { auth?: unknown; env?: Record<string, string> }): string[] {
  const out = new Set<string>()
  const auth = config.auth as { headers?: unknown } | undefined
  if (auth !== null && typeof auth === 'object' && typeof auth.headers === 'object' && auth.headers !== null) {
    for (const v of Object.values(auth.headers as Record<string, unknown>)) {
      if (typeof v !== 'string' || v.length < 4) continue
      out.add(v)
      const token = /^\S+\s+(\S{4,})$/.exec(v)?.[1]
      if (token !== undefined) out.add(token)
    }
  }
  for (const v of Object.values(config.env ?? {})) if (typeof v === 'string' && v.length >= 8) out.add(v)
  return [...out].sort((a, b) => b.length - a.length)
}

/** The text with every secret (and any `Bearer …` token) replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of secrets) out = out.split(s).join('[redacted]')
  return out.replace(/(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{4,}/g, '$1 [redacted]')
}
