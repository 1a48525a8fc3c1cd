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
}

/** Reads the embedded data; null when the template was opened without a log. */
export function readPageData(): PageData | null {
  const el = document.getElementById('turnlog-data')
  const text = el?.textContent ?? ''
  // the template's placeholder (not filled in): no log
  if (text.trim() === '' || text.startsWith('__')) return null
  const data = JSON.parse(text) as PageData
  if (!data || !Array.isArray(data.events)) throw new Error('the embedded log is not { events: [...] }')
  return data
}
