/**
 * What the CLI puts in the page (`<script type="application/json" id="turnlog-data">`): the log and
 * how to show it. `turnlog report` embeds everything; `turnlog inspect` embeds the log so far and
 * the page follows the rest over SSE (`events?from=N`, same origin).
 */
import type { LogEvent } from '../../events/envelope.js'

export interface Divergence {
  seq: number
  kind: string
  diff: string
  expected: unknown
  actual: unknown
}

/** `turnlog eval --report`: the re-run shown side by side with the golden (the page's own log). */
export interface Compare {
  /** What the re-run is called on the page ('re-run (actual)'). */
  label: string
  /** Where it came from (shown as text). */
  file: string
  header: Record<string, unknown> | null
  events: LogEvent[]
  /** What the golden (the page's log) is called, and its file. */
  goldenLabel?: string
  goldenFile?: string
}

/** A session's relatives as the CLI found them: `href` a sibling report file, `log` where the log is. */
export interface Family {
  parent?: { session: string; seq: number; callId?: string; href?: string; log?: string }
  children?: Record<string, { href?: string; log?: string }>
}

export interface PageData {
  version: 1
  mode: 'report' | 'live'
  /** The LOG argument as given (shown as text). */
  file: string
  header: Record<string, unknown> | null
  events: LogEvent[]
  /** `turnlog reexec --report`: the first divergence, shown side by side. */
  divergence?: Divergence | null
  verifyOptions?: { maxStepsPerTurn?: number; maxRetries?: number }
  /** The seq selected when the page opens (default: the last). */
  select?: number
  /** `turnlog reexec --report` without a divergence: the page says the log re-executed identically. */
  reexec?: { ok: boolean; eventCount: number }
  /** `turnlog eval --report`: the re-run, side by side with this log (compare.ts). */
  compare?: Compare | null
  /** Sub-agents (docs/spec/lifecycle.md §10): the child sessions' reports or logs, and the parent's (cli/family.ts). */
  family?: Family | null
  /** Events between two state checkpoints (cursor.ts; default 2,000). */
  checkpointEvery?: number
}

/**
 * Reads the embedded data; null when the template was opened without a log. The CLI writes it
 * gzipped in base64 (`data-encoding="gzip-base64"`, cli/page.ts): inflated here by the browser's own
 * `DecompressionStream` — a local stream, no request, so it works from file:// under the page's CSP.
 */
export async function readPageData(): Promise<PageData | null> {
  const el = document.getElementById('turnlog-data')
  const text = el?.textContent ?? ''
  // the template's placeholder (not filled in): no log
  if (text.trim() === '' || text.startsWith('__')) return null
  const json = el?.getAttribute('data-encoding') === 'gzip-base64' ? await inflate(text) : text
  document.body.dataset.inflatedMs = performance.now().toFixed(1)
  const data = JSON.parse(json) as PageData
  if (!data || !Array.isArray(data.events)) throw new Error('the embedded log is not { events: [...] }')
  return data
}

async function inflate(base64: string): Promise<string> {
  const bin = atob(base64.trim())
  const bytes = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i)
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))
  return new Response(stream).text()
}
