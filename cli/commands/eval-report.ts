/**
 * `turnlog eval … --report OUT`: the inspector page of the first failing golden with its re-run side
 * by side — the golden is the page's log (its state, transcript and verify as in `turnlog report`),
 * the re-run is shown next to it as a second full timeline and event list (inspector/src/compare.ts),
 * the first divergence marked in both and selected when the page opens. One self-contained file
 * (cli/page.ts): no request, opens from file://.
 */
import { resolve } from 'node:path'
import type { RerunResult } from '../../evals/types.js'
import type { CliIo } from '../io.js'
import { writeOutput } from '../outputs.js'
import { renderPage, type PageData } from '../page.js'

/** The failing trial the report shows: the golden's name (as listed), its file, the trial (from 0), its re-run. */
export interface ReportedTrial {
  name: string
  file: string
  trial: number
  run: RerunResult
}

/** The page data of `eval --report` (exported for the tests: what the page is given). */
export function evalReportData(f: ReportedTrial): PageData {
  const g = f.run.golden
  const d = f.run.divergence
  return {
    // the golden as listed (relative to the goldens directory), never the server's absolute path
    version: 1, mode: 'report', file: f.name, header: g.header, events: g.events,
    divergence: d ? { seq: d.seq, kind: d.kind, diff: d.diff, expected: d.expected, actual: d.actual } : null,
    ...(d ? { select: Math.min(d.seq, Math.max(0, g.events.length - 1)) } : {}),
    compare: {
      label: `re-run (actual), trial ${f.trial + 1}`, file: `${f.name} re-run`, header: f.run.log.header, events: f.run.log.events,
      goldenLabel: 'golden (expected)', goldenFile: f.name,
    },
  }
}

export async function writeEvalReport(
  outArg: string, f: ReportedTrial, io: CliIo, rule: { inputs: string[]; force: boolean; field: string },
): Promise<void> {
  const out = resolve(io.cwd ?? process.cwd(), outArg)
  await writeOutput(out, await renderPage(evalReportData(f)), rule)
  io.stderr(`wrote ${outArg} (${f.name}, trial ${f.trial + 1}: the golden and its re-run side by side)\n`)
}
