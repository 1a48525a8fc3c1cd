/**
 * The inspector page for the CLI (`report`, `inspect`, `reexec --report`): the template built from
 * inspector/ by `npm run build` (dist/inspector/template.html, shipped in the package) with the log
 * embedded in its data element: the page data as JSON, gzipped, in base64
 * (`data-encoding="gzip-base64"`). Why compressed: the browser parses a 17 MB inline script body
 * (a 100k-event log) at ~15 MB/s on a loaded machine; gzip makes it ~7× smaller and the page
 * inflates it with the native `DecompressionStream` (no request, works from file://). Base64 has no
 * `<`, so no log text can close the element or open another (issue "See a session", item 5);
 * `scriptJson` (every `<` as `\u003c`) stays for the uncompressed form (`encoding: 'json'`).
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

/** The page with `data` embedded: gzip + base64 by default, or plain JSON (`encoding: 'json'`). */
export async function renderPage(data: PageData, opts: { encoding?: 'gzip-base64' | 'json' } = {}): Promise<string> {
  const t = await loadTemplate()
  const i = t.indexOf(DATA_MARKER)
  let element: string
  if (opts.encoding === 'json') {
    element = `<script type="application/json" id="turnlog-data">${scriptJson(data)}</script>`
  } else {
    // level 6 (zlib's default): 100k events, 17 MB → 2.3 MB in ~0.4 s; the page inflates in ~0.1 s
    const packed = (await gzip(Buffer.from(JSON.stringify(data), 'utf8'))).toString('base64')
    element = `<script type="application/octet-stream" id="turnlog-data" data-encoding="gzip-base64">${packed}</script>`
  }
  return `${t.slice(0, i)}${element}${t.slice(i + DATA_MARKER.length)}`
}
