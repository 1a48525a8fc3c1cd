/**
 * `turnlog report LOG -o report.html`: one self-contained HTML file (the log embedded, no network
 * request, opens from file://): timeline, state at any seq, transcript, tokens, verify marks.
 */
import { basename, dirname, join, resolve } from 'node:path'
import type { LogHeader } from '../../events/jsonl.js'
import { relativeLog, spawnedChildren } from '../family.js'
import type { PageData } from '../page.js'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import { EXIT_OK, parseCount } from '../errors.js'
import type { CliIo } from '../io.js'
import { loadLog, resolveLogPath } from '../load.js'
import { checkOutput, writeOutput } from '../outputs.js'
import { displayLog, isStoreUrl } from '../pg.js'
import { renderPage } from '../page.js'

export interface ReportCommandOptions {
  output?: string
  at?: string
  maxSteps?: string
  maxRetries?: string
  /** Embed the log gzipped (≈7× smaller file, slower to open: cli/page.ts). */
  gzip?: boolean
  /** Replace an existing OUT (never an input: cli/outputs.ts). */
  force?: boolean
  /** Also write each child session's report beside OUT (`<child-id>.html`, recursively) and link them. */
  children?: boolean
}

export async function reportCommand(logArg: string, opts: ReportCommandOptions, io: CliIo): Promise<number> {
  if (opts.output === undefined || opts.output === '') {
    throw new TurnlogError('INVALID_ARGUMENT', 'report needs -o OUT (the HTML file to write)', { field: '-o' })
  }
  const out = resolve(io.cwd ?? process.cwd(), opts.output)
  const rule = { inputs: isStoreUrl(logArg) ? [] : [resolveLogPath(logArg, io)], force: opts.force === true, field: '-o' }
  await checkOutput(out, rule)
  const log = await loadLog(logArg, io)
  const select = opts.at !== undefined ? parseCount(opts.at, '--at') : undefined
  const written = await writeFamilyReport(logArg, log, out, opts, io, select, new Set([log.header.id]))
  io.stdout(`wrote ${opts.output} (${log.events.length} events, ${Math.round(written / 1024)} kB)\n`)
  return EXIT_OK
}

/** One page of a family report, planned before anything is written. */
interface PagePlan {
  logArg: string
  log: { file: string; header: LogHeader; events: readonly LogEvent[] }
  out: string
  /** How the page was named on the command line (for the "wrote" line). */
  shown: string
  select: number | undefined
  family: NonNullable<PageData['family']>
  rule: { inputs: string[]; force: boolean; field: string }
}

/**
 * Writes the report of `log` to `out` with its family (docs/spec/lifecycle.md §10): the parent's and each
 * child's log, and with `--children` each child's own report beside `out` (`<child-id>.html`,
 * recursively; `seen` stops a cycle a hostile store could hold). Every page is planned and every
 * target checked before the first is written (issue 38.14: a refused child page used to leave the
 * parent's page written). Returns the top page's size.
 */
async function writeFamilyReport(
  logArg: string, log: PagePlan['log'], out: string, opts: ReportCommandOptions, io: CliIo,
  select: number | undefined, seen: Set<string>,
): Promise<number> {
  const plans: PagePlan[] = []
  await planFamilyReport(logArg, log, out, opts.output ?? out, opts, io, select, undefined, seen, plans)
  const targets = new Map<string, string>()
  for (const p of plans) {
    const prev = targets.get(p.out)
    if (prev !== undefined) {
      throw new TurnlogError('INVALID_ARGUMENT', `--children: the reports of ${prev} and ${p.log.header.id} would both be written to ${p.shown}`, { field: '-o', file: p.out })
    }
    targets.set(p.out, p.log.header.id)
  }
  let size = 0
  for (const [i, p] of plans.entries()) {
    const html = await renderPage({
      // a postgres LOG is shown as the store read it: its URL without the password
      version: 1, mode: 'report', file: isStoreUrl(p.logArg) ? p.log.file : p.logArg, header: p.log.header, events: p.log.events,
      verifyOptions: verifyOptions(opts),
      ...(p.select !== undefined ? { select: p.select } : {}),
      ...(p.family.parent !== undefined || p.family.children !== undefined ? { family: p.family } : {}),
    }, { encoding: opts.gzip === true ? 'gzip-base64' : 'json' })
    await writeOutput(p.out, html, p.rule)
    if (i === 0) size = html.length
    else io.stdout(`wrote ${displayLog(p.shown)} (child ${p.log.header.id}, ${p.log.events.length} events)\n`)
  }
  return size
}

async function planFamilyReport(
  logArg: string, log: PagePlan['log'], out: string, shown: string, opts: ReportCommandOptions, io: CliIo,
  select: number | undefined, parentHref: string | undefined, seen: Set<string>, plans: PagePlan[],
): Promise<void> {
  const family: NonNullable<PageData['family']> = {}
  const p = log.header.parent
  if (p?.callId !== undefined) {
    const plog = relativeLog(logArg, p.session, io)
    family.parent = { session: p.session, seq: p.seq, callId: p.callId, ...(parentHref !== undefined ? { href: parentHref } : {}), ...(plog !== undefined ? { log: displayLog(plog) } : {}) }
  }
  const kids: Array<{ id: string; arg: string }> = []
  for (const k of spawnedChildren(log.events)) {
    const arg = relativeLog(logArg, k.child, io)
    const writes = opts.children === true && arg !== undefined && !seen.has(k.child)
    ;(family.children ??= {})[k.child] = { ...(arg !== undefined ? { log: displayLog(arg) } : {}), ...(writes ? { href: `${k.child}.html` } : {}) }
    if (writes) {
      seen.add(k.child)
      kids.push({ id: k.child, arg: arg! })
    }
  }
  const rule = { inputs: isStoreUrl(logArg) ? [] : [resolveLogPath(logArg, io)], force: opts.force === true, field: '-o' }
  await checkOutput(out, rule)
  plans.push({ logArg, log, out, shown, select, family, rule })
  for (const k of kids) {
    const childOut = join(dirname(out), `${k.id}.html`)
    const child = await loadLog(k.arg, io)
    await planFamilyReport(k.arg, child, childOut, join(dirname(opts.output ?? ''), `${k.id}.html`), opts, io, undefined, basename(out), seen, plans)
  }
}

export function verifyOptions(opts: { maxSteps?: string; maxRetries?: string }): { maxStepsPerTurn?: number; maxRetries?: number } {
  const v: { maxStepsPerTurn?: number; maxRetries?: number } = {}
  if (opts.maxSteps !== undefined) v.maxStepsPerTurn = parseCount(opts.maxSteps, '--max-steps', 1)
  if (opts.maxRetries !== undefined) v.maxRetries = parseCount(opts.maxRetries, '--max-retries')
  return v
}

/** `turnlog reexec … --report OUT`: the recorded log's page with the first divergence side by side,
 * its seq selected when the page opens; without a divergence, the page says the log re-executed
 * identically (`reexec: { ok: true }`) and opens at the last seq. Written in both cases. */
export async function writeReexecReport(
  outArg: string, logArg: string, log: { file: string; header: unknown; events: readonly LogEvent[] },
  divergence: { seq: number; kind: string; diff: string; expected: unknown; actual: unknown } | null, io: CliIo,
  eventCount = log.events.length, force = false,
): Promise<void> {
  const out = resolve(io.cwd ?? process.cwd(), outArg)
  const select = divergence ? Math.min(divergence.seq, Math.max(0, log.events.length - 1)) : undefined
  const html = await renderPage({
    version: 1, mode: 'report', file: isStoreUrl(logArg) ? log.file : logArg, header: log.header, events: log.events,
    divergence: divergence ? { seq: divergence.seq, kind: divergence.kind, diff: divergence.diff, expected: divergence.expected, actual: divergence.actual } : null,
    // no divergence: the page says the log re-executed identically (a banner, not silence)
    ...(divergence ? {} : { reexec: { ok: true, eventCount } }),
    ...(select !== undefined ? { select } : {}),
  })
  await writeOutput(out, html, reexecReportRule(logArg, io, force))
  io.stderr(`wrote ${outArg}\n`)
}

/** The output rule of `reexec --report OUT` (checked before the re-execution, and at the write). */
export function reexecReportRule(logArg: string, io: CliIo, force: boolean): { inputs: string[]; force: boolean; field: string } {
  return { inputs: isStoreUrl(logArg) ? [] : [resolveLogPath(logArg, io)], force, field: '--report' }
}
