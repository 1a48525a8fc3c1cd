/**
 * The inspector page for the CLI (`report`, `inspect`, `reexec --report`): the template built from
 * inspector/ by `npm run build` (dist/inspector/template.html, shipped in the package) with the log
 * embedded in its data element as JSON where every `<` is written as `\u003c`, so no log text can
 * close that element or open another (issue "See a session", item 5).
 *
 * `encoding: 'gzip-base64'` (`turnlog report --gzip`) embeds it gzipped in base64 instead
 * (`data-encoding="gzip-base64"`; base64 has no `<`): ~7× smaller, but slower to open — the page
 * inflates with the browser's DecompressionStream, measured at 1.5–2.3 s for a 100k-event log on
 * the loaded 2-core machine against ~1.1 s for the HTML parser to read the 17 MB of plain JSON
 * (decision record "inspector" (docs/decisions/ in the repository)). Plain JSON is the default.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { gzip as gzipCb } from 'node:zlib'
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
  /** `turnlog reexec --report` without a divergence: the page says the log re-executed identically. */
  reexec?: { ok: boolean; eventCount: number }
  /** `turnlog eval --report`: the re-run, shown side by side with `events` (the golden). */
  compare?: { label: string; file: string; header: unknown; events: readonly LogEvent[]; goldenLabel?: string; goldenFile?: string } | null
  /** Sub-agents (docs/spec/lifecycle.md §10): relatives' report files (`href`) or logs (inspector/src/data.ts `Family`). */
  family?: { parent?: { session: string; seq: number; callId?: string; href?: string; log?: string }; children?: Record<string, { href?: string; log?: string }> } | null
  /** Events between two state checkpoints in the page (default 2,000; tests set it small). */
  checkpointEvery?: number
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

const gzip = promisify(gzipCb)

/** The page with `data` embedded: plain JSON by default, or gzip + base64 (`encoding: 'gzip-base64'`). */
export async function renderPage(data: PageData, opts: { encoding?: 'gzip-base64' | 'json' } = {}): Promise<string> {
  const t = await loadTemplate()
  const i = t.indexOf(DATA_MARKER)
  let element: string
  if (opts.encoding !== 'gzip-base64') {
    element = `<script type="application/json" id="turnlog-data">${scriptJson(data)}</script>`
  } else {
    // level 6 (zlib's default): 100k events, 17 MB → 2.3 MB in ~0.4 s; the page inflates in ~0.1 s
    const packed = (await gzip(Buffer.from(JSON.stringify(data), 'utf8'))).toString('base64')
    element = `<script type="application/octet-stream" id="turnlog-data" data-encoding="gzip-base64">${packed}</script>`
  }
  return `${t.slice(0, i)}${element}${t.slice(i + DATA_MARKER.length)}`
}
