/**
 * `turnlog verify LOG [--max-steps N] [--max-retries N] [--price MODULE] [--children] [--all]`: every event
 * against its schema and every L invariant. Exit 0 with one OK line; exit 1 listing the violations
 * (`L5 at seq 42: message (line 44)`); exit 2 when the file cannot be read as a log at all, or
 * MODULE is bad. The log streams through the checker (`Verifier`): its folded state is kept, not
 * the events.
 *
 * `--price MODULE` (cli/price-module.ts) gives the checker the session's price, so L20 re-prices a
 * cost budget's end (the log holds no prices: without it only the end's own numbers are checked),
 * and adds an accounting line on success: what the session's budgets count (tokens, model calls,
 * tool calls), its cost at that price, and the calls whose price is unknown.
 *
 * `--children` checks the family (L19 across logs, replay/verify-family.ts): the children LOG's
 * `child/spawned` events name are read from the same store (`<dir>/<child>.jsonl` beside a JSONL
 * LOG, the same database for `postgres://…#id`), recursively; each family rule broken is listed as
 * `L19 FAMILY_… FILE seq N (field): message`, each child's own violations as `Lx INVARIANT FILE …`.
 * Exit 1 when LOG or any member of its family has a violation.
 */
import { dirname } from 'node:path'
import { BudgetTracker, type LogEvent } from '../../events/index.js'
import { Verifier } from '../../replay/verify.js'
import { verifyFamily, type FamilyLog, type FamilyViolation, type VerifyFamilyResult } from '../../replay/verify-family.js'
import { inline } from '../escape.js'
import { displayLog, isStoreUrl, withPgStore } from '../pg.js'
import { EXIT_OK, EXIT_VIOLATIONS, parseCount } from '../errors.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { resolveLogPath, streamLog } from '../load.js'
import { loadPriceModule, sharedPrice } from '../price-module.js'

export interface VerifyCommandOptions {
  maxSteps?: string
  maxRetries?: string
  all?: boolean
  /** A module exporting `price(model, usage)` or a `prices` table (cli/price-module.ts). */
  price?: string
  /** Check LOG's family too: its children's logs from the same store (replay/verify-family.ts). */
  children?: boolean
}

/** Violations listed without `--all`. */
export const MAX_LISTED = 20

export async function verifyCommand(logArg: string, opts: VerifyCommandOptions, io: CliIo): Promise<number> {
  const checker = {
    ...(opts.maxSteps !== undefined ? { maxStepsPerTurn: parseCount(opts.maxSteps, '--max-steps', 1) } : {}),
    ...(opts.maxRetries !== undefined ? { maxRetries: parseCount(opts.maxRetries, '--max-retries') } : {}),
  }
  const priced = opts.price !== undefined ? await loadPriceModule(opts.price, io) : undefined
  const [forChecker, forAccount] = priced !== undefined ? sharedPrice(priced.price) : [undefined, undefined]
  const v = new Verifier({ ...checker, ...(forChecker !== undefined ? { price: forChecker } : {}), ...(opts.all ? {} : { maxViolations: MAX_LISTED }) })
  // the accounting line's fold: read only when every event passed (a bad record never reaches it then)
  let firstPriceError: string | undefined
  const account = forAccount !== undefined ? new BudgetTracker(forAccount, (err, model) => {
    firstPriceError ??= `${model}: ${err instanceof Error ? err.message : String(err)}`
  }) : undefined
  let accountable = true
  let turns = 0
  // --children: the family check needs the parent's events (kept only then)
  const kept: LogEvent[] | undefined = opts.children ? [] : undefined
  // the record-level read: bytes checked as replay checks them, events judged by the Verifier
  const read = await streamLog(logArg, io, { validate: false }, (batch) => {
    for (let i = 0; i < batch.length; i++) {
      const raw = batch[i]
      kept?.push(raw as LogEvent)
      if ((raw as { type?: unknown } | null)?.type === 'turn/start') turns++
      const before = v.violationCount
      v.push(raw)
      if (account === undefined || !accountable) continue
      if (v.violationCount !== before) accountable = false
      else account.apply(raw as LogEvent)
    }
  })
  const c = colorsFor(io)
  const events = v.eventCount
  const counts = `${events} event${events === 1 ? '' : 's'}, ${turns} turn${turns === 1 ? '' : 's'}`
  const name = inline(displayLog(logArg))
  const lines: string[] = []
  if (v.ok) {
    lines.push(`${c.green('OK')} ${name}: ${counts}, every invariant holds`)
    if (account !== undefined && priced !== undefined) lines.push(...accountLines(account, inline(opts.price!), firstPriceError))
  } else {
    const total = v.violationCount
    const shown = v.result().violations
    lines.push(`${c.red('FAIL')} ${name}: ${total} violation${total === 1 ? '' : 's'} (${counts})`)
    // the line of the event at position p is p + 2 (line 1 is the header; no blank lines in a log)
    for (const x of shown) lines.push(`  ${c.red(inline(x.invariant))} at seq ${x.seq}: ${inline(x.message)} ${c.dim(`(line ${x.seq + 2})`)}`)
    if (shown.length < total) lines.push(c.dim(`  … ${total - shown.length} more (--all lists every one)`))
  }
  let familyOk = true
  if (kept !== undefined) {
    if (!v.ok) lines.push(c.dim(`  family not checked: ${name} itself has violations (its child/spawned events cannot be trusted)`))
    else {
      const root: FamilyLog = { header: read.header, events: kept, ...(isStoreUrl(logArg) ? {} : { file: read.file }) }
      const checkOpts = { ...checker, ...(priced !== undefined ? { price: priced.price } : {}), root: false }
      const fam = isStoreUrl(logArg)
        ? await withPgStore(logArg, (store) => verifyFamily(root, store, checkOpts))
        : await verifyFamily(root, dirname(resolveLogPath(logArg, io)), checkOpts)
      familyOk = fam.ok
      lines.push(...familyLines(fam, name, logArg, opts.all === true, c))
    }
  }
  writeHuman(io, lines)
  return v.ok && familyOk ? EXIT_OK : EXIT_VIOLATIONS
}

/** The `--children` lines: the family's size and verdict, each violation, the children without a log. */
function familyLines(fam: VerifyFamilyResult, name: string, logArg: string, all: boolean, c: ReturnType<typeof colorsFor>): string[] {
  const kids = fam.sessions.length - 1
  const size = `${fam.sessions.length} session${fam.sessions.length === 1 ? '' : 's'} (${kids} child${kids === 1 ? '' : 'ren'})`
  const lines: string[] = []
  if (fam.ok) lines.push(`${c.green('OK')} family of ${name}: ${size}, every family rule holds (L19)`)
  else {
    const n = fam.violations.length
    lines.push(`${c.red('FAIL')} family of ${name}: ${n} violation${n === 1 ? '' : 's'} in ${size}`)
    const shown = all ? fam.violations : fam.violations.slice(0, MAX_LISTED)
    for (const x of shown) lines.push(`  ${c.red(inline(x.invariant))} ${inline(x.code)} ${where(x, logArg)}: ${inline(x.message)}`)
    if (shown.length < n) lines.push(c.dim(`  … ${n - shown.length} more (--all lists every one)`))
  }
  for (const m of fam.missing) lines.push(c.dim(`  child ${inline(m.child)} of ${inline(m.parent)} (call ${inline(m.callId)}) has no log; its call's result is an error`))
  for (const u of fam.unspawned) lines.push(c.dim(`  ${inline(u.file !== undefined ? displayLog(u.file) : u.child)} names ${inline(u.parent)} as its parent at seq ${u.seq}, past the end of its log (a crash before the spawn was logged)`))
  return lines
}

/** `FILE seq N (field)`, or `FILE line 1 (field)` for a header; a database session as `postgres://…#id`. */
function where(x: FamilyViolation, logArg: string): string {
  const file = x.file !== undefined ? displayLog(x.file) : isStoreUrl(logArg) ? displayLog(`${logArg.slice(0, logArg.indexOf('#'))}#${x.session}`) : x.session
  const pos = x.seq !== undefined ? ` seq ${x.seq}` : x.line !== undefined ? ` line ${x.line}` : ''
  return `${inline(file)}${pos}${x.field !== undefined ? ` (${inline(x.field)})` : ''}`
}

/** The accounting line of `--price`: what the session's budgets count, and its cost at that price. */
function accountLines(t: BudgetTracker, module: string, firstError: string | undefined): string[] {
  const usd = t.used('costUsd', 'session')
  const unpriced = t.unpriced('session')
  const n = (x: number) => x.toLocaleString('en-US')
  const s = t.state.session
  const lines = [
    `  usage: ${n(s.inputTokens)} input + ${n(s.outputTokens)} output tokens in ${n(s.requests)} model call${s.requests === 1 ? '' : 's'}, `
      + `${n(s.toolCalls)} tool call${s.toolCalls === 1 ? '' : 's'}; `
      + `cost $${usd.toFixed(6)} at ${module}${unpriced > 0 ? ` (${unpriced} call${unpriced === 1 ? '' : 's'} with no known price)` : ''}`,
  ]
  if (firstError !== undefined) lines.push(`  first unknown price: ${inline(firstError)}`)
  return lines
}
