/**
 * `turnlog verify LOG [--max-steps N] [--max-retries N] [--price MODULE] [--all]`: every event
 * against its schema and every L invariant. Exit 0 with one OK line; exit 1 listing the violations
 * (`L5 at seq 42: message (line 44)`); exit 2 when the file cannot be read as a log at all, or
 * MODULE is bad. The log streams through the checker (`Verifier`): its folded state is kept, not
 * the events.
 *
 * `--price MODULE` (cli/price-module.ts) gives the checker the session's price, so L20 re-prices a
 * cost budget's end (the log holds no prices: without it only the end's own numbers are checked),
 * and adds an accounting line on success: what the session's budgets count (tokens, model calls,
 * tool calls), its cost at that price, and the calls whose price is unknown.
 */
import { BudgetTracker, type LogEvent } from '../../events/index.js'
import { Verifier } from '../../replay/verify.js'
import { inline } from '../escape.js'
import { displayLog } from '../pg.js'
import { EXIT_OK, EXIT_VIOLATIONS, parseCount } from '../errors.js'
import { colorsFor, writeHuman, type CliIo } from '../io.js'
import { streamLog } from '../load.js'
import { loadPriceModule, sharedPrice } from '../price-module.js'

export interface VerifyCommandOptions {
  maxSteps?: string
  maxRetries?: string
  all?: boolean
  /** A module exporting `price(model, usage)` or a `prices` table (cli/price-module.ts). */
  price?: string
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
  // the record-level read: bytes checked as replay checks them, events judged by the Verifier
  await streamLog(logArg, io, { validate: false }, (batch) => {
    for (let i = 0; i < batch.length; i++) {
      const raw = batch[i]
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
  if (v.ok) {
    const lines = [`${c.green('OK')} ${name}: ${counts}, every invariant holds`]
    if (account !== undefined && priced !== undefined) lines.push(...accountLines(account, inline(opts.price!), firstPriceError))
    writeHuman(io, lines)
    return EXIT_OK
  }
  const total = v.violationCount
  const shown = v.result().violations
  const lines = [`${c.red('FAIL')} ${name}: ${total} violation${total === 1 ? '' : 's'} (${counts})`]
  // the line of the event at position p is p + 2 (line 1 is the header; no blank lines in a log)
  for (const x of shown) lines.push(`  ${c.red(inline(x.invariant))} at seq ${x.seq}: ${inline(x.message)} ${c.dim(`(line ${x.seq + 2})`)}`)
  if (shown.length < total) lines.push(c.dim(`  … ${total - shown.length} more (--all lists every one)`))
  writeHuman(io, lines)
  return EXIT_VIOLATIONS
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
