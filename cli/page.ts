/**
 * The inspector page for the CLI (`report`, `inspect`, `reexec --report`): the template built from
 * inspector/ by `npm run build` (dist/inspector/template.html, shipped in the package) with the log
 * embedded as JSON in a `<script type="application/json">` element. Every `<` of the JSON is written
 * as `\u003c`, so no log text can close that element or open another (issue "See a session", item 5).
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'

/** The data element of the template, exactly as inspector/template.html writes it. */
export const DATA_MARKER = '<script type="application/json" id="turnlog-data">__TURNLOG_DATA__</script>'

/** What the page reads (inspector/src/data.ts `PageData`). */
export interface PageData {
  version: 1
  mode: 'report' | 'live'
  file: string
  header: unknown
  events: readonly LogEvent[]
  divergence?: { seq: number; kind: string; diff: string; expected: unknown; actual: unknown } | null
  verifyOptions?: { maxStepsPerTurn?: number; maxRetries?: number }
  select?: number
}

/** Where the built template is: next to the compiled CLI (dist/cli → dist/inspector), or, when the
 * CLI runs from its TypeScript sources (tests), in the checkout's dist/. */
export function templatePath(): string {
  // the source layout first: from cli/page.ts, ../inspector/template.html is the unbuilt source
  const candidates = [
    new URL('../dist/inspector/template.html', import.meta.url),
    new URL('../inspector/template.html', import.meta.url),
  ].map((u) => fileURLToPath(u))
  const found = candidates.find((p) => existsSync(p))
  if (!found) {
    throw new TurnlogError('INVALID_ARGUMENT', 'the inspector page is not built: run `npm run build`', {
      file: candidates[1], info: { tried: candidates },
    })
  }
  return found
}

let cached: string | undefined

export async function loadTemplate(): Promise<string> {
  cached ??= await readFile(templatePath(), 'utf8')
  if (!cached.includes(DATA_MARKER)) throw new TurnlogError('INVALID_ARGUMENT', 'the inspector template has no data marker', { file: templatePath() })
  return cached
}

/** JSON safe inside a `<script>` element: `<` (so `</script>` and `<!--`), U+2028/9 escaped. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
}

/** The page with `data` embedded. */
export async function renderPage(data: PageData): Promise<string> {
  const t = await loadTemplate()
  const i = t.indexOf(DATA_MARKER)
  const open = DATA_MARKER.slice(0, DATA_MARKER.indexOf('>') + 1)
  return `${t.slice(0, i)}${open}${scriptJson(data)}</script>${t.slice(i + DATA_MARKER.length)}`
}
