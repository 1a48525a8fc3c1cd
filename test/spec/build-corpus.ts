/**
 * Builds the conformance corpus, docs/spec/corpus/: `valid/*.jsonl`, `invalid/*.jsonl` and
 * `corpus.json`, the manifest another implementation reads (docs/spec/README.md "Conformance").
 * Run: `npm run docs:corpus`.
 *
 * Sources:
 * - the verify fixtures (test/fixtures/{valid,invalid}, built by test/fixtures/build-fixtures.mjs),
 *   whose expected results were written from construction;
 * - logs the real agent writes here (approvals, parking, a subagent, a budget end, input rounds) and hand-made
 *   wakeup logs, and one mutation of such a log per rule of L17–L21 and W1–W3, each with the
 *   invariant and seq it breaks stated from construction.
 * The builder refuses to write a corpus whose verdicts `verify` does not reproduce, so a wrong
 * construction is found here, not by a user.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { z } from 'zod'
import { createAgent, defineSubagent, type AgentOptions } from '../../agent/index.js'
import { TurnlogError, type LogEvent } from '../../events/index.js'
import { encodeEvent, encodeHeader } from '../../events/jsonl.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/index.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { recordsOf, type CorpusEntry } from './corpus-format.js'

/** The coded error `readLog` refuses these bytes with (null when it reads them). */
async function readBytes(bytes: Buffer): Promise<{ code: string; line: number | undefined } | null> {
  const dir = mkdtempSync(join(tmpdir(), 'turnlog-corpus-'))
  try {
    writeFileSync(join(dir, 'log.jsonl'), bytes)
    await readLog(join(dir, 'log.jsonl'))
    return null
  } catch (err) {
    if (!TurnlogError.is(err)) throw err
    return { code: err.code, line: err.line }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const ROOT = join(import.meta.dirname, '..', '..')
const OUT = join(ROOT, 'docs', 'spec', 'corpus')
const FIXTURES = join(ROOT, 'test', 'fixtures')
const START = 1764450000000

const entries: CorpusEntry[] = []

function describeName(name: string): string {
  return name.replace(/^(L\d+|W\d+|SCHEMA)-/, '').replace(/\.jsonl$/, '').replace(/-/g, ' ')
}

// ------------------------------------------------------------------ the verify fixtures
const expected = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as Record<
  string, { ok: boolean; firstViolation: { invariant: string; seq: number } | null }
>

// ------------------------------------------------------------------ logs the agent writes
function agentOptions(script: readonly ScriptedEntry[], extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    model: scriptedModel(script, { info: { name: 'scripted' } }),
    system: 'You are a helpful assistant.',
    clock: fakeClock(START),
    ids: counterIds('m'),
    timers: instantTimers(),
    ...extra,
  }
}

const deleteFile = () => defineTool({
  name: 'delete_file', description: 'Delete a file', parameters: z.object({ path: z.string() }),
  needsApproval: true,
  execute: ({ path }) => `deleted ${path}`,
})

async function approvalsLog(decision: 'approve' | 'deny' | 'none'): Promise<LogEvent[]> {
  const agent = createAgent(agentOptions(
    [{ toolCalls: [{ name: 'delete_file', args: { path: 'old.txt' }, id: 'c1' }] }, { text: 'Done.' }],
    { tools: [deleteFile()], sessionId: `approvals-${decision}` },
  ))
  agent.followup('Delete old.txt')
  await agent.whenSettled()
  const open = agent.approvals()
  if (decision === 'approve') await agent.decide(open[0]!.approvalId, { kind: 'approve' })
  if (decision === 'deny') await agent.decide(open[0]!.approvalId, { kind: 'deny', reason: 'keep it' })
  if (decision !== 'none') await agent.whenIdle()
  const events = [...agent.events] as LogEvent[]
  await agent.dispose()
  return events
}

async function subagentLog(): Promise<LogEvent[]> {
  const research = defineSubagent({
    name: 'research', description: 'Research a question', parameters: z.object({ q: z.string() }),
    agent: () => ({ model: scriptedModel([{ text: 'Paris is the capital of France.' }]), clock: fakeClock(START + 500) }),
  })
  const agent = createAgent(agentOptions(
    [{ toolCalls: [{ name: 'research', args: { q: 'capital of France' }, id: 'c1' }] }, { text: 'Paris.' }],
    { tools: [research], sessionId: 'subagent-parent' },
  ))
  agent.followup('What is the capital of France?')
  await agent.whenIdle()
  const events = [...agent.events] as LogEvent[]
  await agent.dispose()
  return events
}

async function budgetLog(): Promise<LogEvent[]> {
  const usage = { inputTokens: 100, outputTokens: 20 }
  const tool = defineTool({ name: 'look', description: 'Look', parameters: z.object({}), execute: () => 'seen' })
  const agent = createAgent(agentOptions(
    [{ toolCalls: [{ name: 'look', args: {}, id: 'c1' }], usage }, { text: 'never asked', usage }],
    { tools: [tool], sessionId: 'budget', budget: { outputTokens: 20, scope: 'turn' } },
  ))
  agent.followup('Look around')
  await agent.whenIdle()
  const events = [...agent.events] as LogEvent[]
  await agent.dispose()
  return events
}

/** Two input rounds of one call (a form, then a choice), each answered by a person (§11). */
async function inputsLog(): Promise<LogEvent[]> {
  const ship = defineTool({
    name: 'ship', description: 'Ship a parcel, asking where and how fast', parameters: z.object({ item: z.string() }),
    execute: ({ item }, ctx) => {
      const round = ctx.input?.round ?? 0
      if (round === 0) {
        return ctx.inputRequired({ requests: { address: { kind: 'form', message: 'Where to?', schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } } })
      }
      if (round === 1) return ctx.inputRequired({ requests: { speed: { kind: 'choice', message: 'How fast?', options: ['slow', 'fast'] } } })
      return `shipped ${item}`
    },
  })
  const agent = createAgent(agentOptions(
    [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }] }, { text: 'Shipped.' }],
    { tools: [ship], sessionId: 'inputs' },
  ))
  agent.followup('Ship the book')
  for (let i = 0; i < 4 && (await agent.whenSettled()) === 'parked'; i++) {
    const open = agent.inputs()[0]!
    await agent.answer(open.requestId, { action: 'accept', responses: open.round === 1 ? { address: { city: 'Pau' } } : { speed: 'fast' } })
  }
  await agent.whenIdle()
  const events = [...agent.events] as LogEvent[]
  await agent.dispose()
  return events
}

// ------------------------------------------------------------------ hand-made wakeup logs
const text = (t: string) => [{ type: 'text', text: t }]
function handLog(...drafts: Array<[string, unknown, number?]>): LogEvent[] {
  return drafts.map(([type, data, time], seq) => ({ seq, time: time ?? START + seq, type, data }) as LogEvent)
}
const created = (id: string, due: number, extra: Record<string, unknown> = {}): [string, unknown] =>
  ['schedule/created', { scheduleId: id, due, content: text('Check the build again.'), deliver: 'followup', whenBusy: 'queue', ...extra }]
const delivered = (id: string, sched: string, start = 0): [string, unknown] =>
  ['agent/inbox/spliced', { target: 'next-turn', start, inserted: [{ id, role: 'user', content: text('Check the build again.'), source: { kind: 'schedule', scheduleId: sched } }] }]

// ------------------------------------------------------------------ edits (seqs renumbered)
const d = (e: LogEvent) => e.data as Record<string, any>
const renumber = (events: LogEvent[]) => events.map((e, i) => ({ ...e, seq: i }) as LogEvent)
const clone = (events: readonly LogEvent[]) => structuredClone(events) as LogEvent[]
function at(events: readonly LogEvent[], type: string, pred: (e: LogEvent) => boolean = () => true): number {
  const i = events.findIndex((e) => e.type === type && pred(e))
  if (i < 0) throw new Error(`build-corpus: no ${type} in the log`)
  return i
}

/** The log with its first `type` event written twice in a row (renumbered), and the copy's seq. */
function doubled(events: readonly LogEvent[], type: string): { log: LogEvent[]; seq: number } {
  const log = clone(events)
  const x = at(log, type)
  log.splice(x + 1, 0, structuredClone(log[x]!))
  return { log: renumber(log), seq: x + 1 }
}

// ------------------------------------------------------------------ write
function jsonl(id: string, events: readonly LogEvent[], header: Record<string, unknown> = {}): string {
  return [encodeHeader({ type: 'session', format: 1, id, createdAt: START, ...header } as never), ...events.map((e) => encodeEvent(e))].join('\n') + '\n'
}

const pending: Array<{ entry: CorpusEntry; text: string }> = []
const unreadable: Array<{ entry: CorpusEntry; bytes: Buffer }> = []
function add(entry: CorpusEntry, events: readonly LogEvent[], header: Record<string, unknown> = {}): void {
  const id = entry.file.replace(/^.*\//, '').replace(/\.jsonl$/, '')
  pending.push({ entry, text: jsonl(id, events, header) })
}

async function main(): Promise<void> {
  const approved = await approvalsLog('approve')
  const denied = await approvalsLog('deny')
  const parked = await approvalsLog('none')
  const parent = await subagentLog()
  const budget = await budgetLog()
  const inputs = await inputsLog()
  const wakeups = handLog(
    created('w1', START + 5), ['schedule/fired', { scheduleId: 'w1', due: START + 5 }, START + 5], delivered('m1', 'w1'),
    created('w2', START + 1000, { every: 100 }), ['schedule/fired', { scheduleId: 'w2', due: START + 1300, missed: 3 }, START + 1350],
    delivered('m2', 'w2', 1), ['schedule/canceled', { scheduleId: 'w2' }],
  )

  add({ file: 'valid/approval-approved.jsonl', valid: true, description: 'a call that needs approval, approved by a person; then the call runs (docs/spec/lifecycle.md §9)' }, approved)
  add({ file: 'valid/approval-denied.jsonl', valid: true, description: 'a call that needs approval, denied: its tool/call and a DENIED result (§9)' }, denied)
  add({ file: 'valid/approval-parked.jsonl', valid: true, description: 'a session that stands parked: an undecided approval, step/parked, no step/end (§9)' }, parked)
  add({ file: 'valid/subagent-parent.jsonl', valid: true, description: 'a parent whose call ran a child session: child/spawned between the call and its result (§10)' }, parent)
  add({ file: 'valid/budget-turn-end.jsonl', valid: true, description: 'a turn ended by its output-token budget before a second request (§10)' }, budget)
  add({ file: 'valid/input-rounds.jsonl', valid: true, description: 'a call that asks a person in two rounds (a form, then a choice), each answered; then its result (§11)' }, inputs)
  add({ file: 'valid/wakeups.jsonl', valid: true, description: 'wakeups: a one-shot and a repeating schedule fired (missed periods coalesced) and delivered, then canceled (§10)' }, wakeups)

  // L17: approvals
  {
    const log = clone(approved)
    const x = at(log, 'tool/approval-decided')
    log.splice(x, 1)
    add({ file: 'invalid/L17-call-before-its-decision.jsonl', valid: false, expect: { code: 'L17', seq: x },
      description: 'the decision is missing: the call that needed approval has a tool/call anyway' }, renumber(log))
  }
  {
    const { log, seq } = doubled(approved, 'tool/approval-decided')
    add({ file: 'invalid/L17-second-decision.jsonl', valid: false, expect: { code: 'L17', seq },
      description: 'an approval decided twice' }, log)
  }
  {
    const log = clone(denied)
    const r = at(log, 'tool/result')
    d(log[r]!).error.code = 'TOOL_ERROR'
    add({ file: 'invalid/L17-denied-call-result-not-denied.jsonl', valid: false, expect: { code: 'L17', seq: r },
      description: "a denied call's result carries another code than DENIED" }, log)
  }
  // L18: parking
  {
    const log = clone(approved)
    const p = at(log, 'step/parked')
    // only inbox splices and schedule events may stand between step/parked and the next decision
    log.splice(p + 1, 0, structuredClone(log[at(log, 'request/header')]!))
    add({ file: 'invalid/L18-request-header-while-parked.jsonl', valid: false, expect: { code: 'L18', seq: p + 1 },
      description: 'a request/header between step/parked and the decision the step waits for' }, renumber(log))
  }
  {
    const log = clone(budget)
    const s = at(log, 'step/end')
    const e = d(log[s]!)
    log.splice(s, 0, { seq: 0, time: log[s]!.time, type: 'step/parked', data: { turn: e.turn, step: e.step, approvals: ['a1'] } } as LogEvent)
    add({ file: 'invalid/L18-parked-with-nothing-undecided.jsonl', valid: false, expect: { code: 'L18', seq: s },
      description: 'step/parked in a step with no undecided request' }, renumber(log))
  }
  // L19: the parent's side of child sessions
  {
    const log = clone(parent)
    const sp = at(log, 'child/spawned')
    const r = at(log, 'tool/result')
    const [spawned] = log.splice(sp, 1)
    log.splice(r, 0, spawned!) // now right after the call's result
    add({ file: 'invalid/L19-child-spawned-after-the-result.jsonl', valid: false, expect: { code: 'L19', seq: r },
      description: "child/spawned after its call's tool/result (the call no longer runs)" }, renumber(log))
  }
  {
    const log = clone(parent)
    const sp = at(log, 'child/spawned')
    log.splice(sp + 1, 0, structuredClone(log[sp]!))
    add({ file: 'invalid/L19-child-spawned-twice-for-a-call.jsonl', valid: false, expect: { code: 'L19', seq: sp + 1 },
      description: 'a second child/spawned for the same call' }, renumber(log))
  }
  // L20: budgets
  {
    const log = clone(budget)
    const end = at(log, 'turn/end', (e) => d(e).reason.kind === 'budget')
    d(log[end]!).reason.used = 25
    add({ file: 'invalid/L20-budget-used-not-derived.jsonl', valid: false, expect: { code: 'L20', seq: end },
      description: "a budget turn end whose used is not the usage derived from the log (25 where the log gives 20)" }, log)
  }
  {
    const log = clone(budget)
    const end = at(log, 'turn/end', (e) => d(e).reason.kind === 'budget')
    d(log[end]!).reason.limit = 21
    d(log[end]!).reason.used = 21
    add({ file: 'invalid/L20-budget-limit-not-reached.jsonl', valid: false, expect: { code: 'L20', seq: end },
      description: 'a budget turn end whose limit the usage derived from the log does not reach' }, log)
  }
  // L21: input rounds
  {
    const { log, seq } = doubled(inputs, 'tool/input-provided')
    add({ file: 'invalid/L21-round-answered-twice.jsonl', valid: false, expect: { code: 'L21', seq },
      description: 'an input round answered a second time' }, log)
  }
  {
    const log = clone(inputs)
    const a = at(log, 'tool/input-provided')
    d(log[a]!).answer.responses = { city: 'Pau' }
    add({ file: 'invalid/L21-answer-names-other-fields.jsonl', valid: false, expect: { code: 'L21', seq: a },
      description: 'an accepted answer whose responses do not name the fields the round asked' }, log)
  }
  {
    const log = clone(inputs)
    const q = at(log, 'tool/input-requested', (e) => d(e).round === 2)
    d(log[q]!).round = 3
    add({ file: 'invalid/L21-round-number-skipped.jsonl', valid: false, expect: { code: 'L21', seq: q },
      description: 'a call whose second round is numbered 3' }, log)
  }
  // W1–W3: wakeups
  add({ file: 'invalid/W1-fired-unknown-schedule.jsonl', valid: false, expect: { code: 'W1', seq: 0 },
    description: 'a firing of a schedule the log never created' },
  handLog(['schedule/fired', { scheduleId: 'nope', due: START }], delivered('m1', 'nope')))
  add({ file: 'invalid/W2-fired-before-due.jsonl', valid: false, expect: { code: 'W2', seq: 1 },
    description: 'a firing logged before its due time' },
  handLog(created('w1', START + 5000), ['schedule/fired', { scheduleId: 'w1', due: START + 5000 }, START + 4999], delivered('m1', 'w1')))
  add({ file: 'invalid/W3-firing-without-its-delivery.jsonl', valid: false, expect: { code: 'W3', seq: 2 },
    description: "a firing not followed by the splice of its message" },
  handLog(created('w1', START), ['schedule/fired', { scheduleId: 'w1', due: START }, START + 1], delivered('m1', 'other')))

  // files a reader must refuse before any invariant is checked: each breaks the JSONL format once
  {
    const base = readFileSync(join(FIXTURES, 'valid', 'example.jsonl'), 'utf8').trimEnd().split('\n')
    const events = base.slice(1).map((l) => JSON.parse(l) as LogEvent)
    const header = JSON.parse(base[0]!) as Record<string, unknown>
    const withCrc = [encodeHeader({ ...header, checksums: 'crc32' } as never), ...events.map((e) => encodeEvent(e, { checksums: true }))]
    const bad = (name: string, code: string, line: number | undefined, description: string, lines: string[], end = '\n') =>
      unreadable.push({
        entry: { file: `unreadable/${name}.jsonl`, valid: false, expect: line === undefined ? { code } : { code, line }, description },
        bytes: Buffer.from(lines.join('\n') + end, 'utf8'),
      })
    add({ file: 'valid/example-with-checksums.jsonl', valid: true, description: 'the example log with a crc32 member on every record, as the stores write it' }, [])
    pending.at(-1)!.text = withCrc.join('\n') + '\n'
    bad('EMPTY_LOG-empty-file', 'EMPTY_LOG', undefined, 'an empty file: no header', [], '')
    bad('MISSING_HEADER-event-on-line-1', 'MISSING_HEADER', 1, 'line 1 is an event, not the session header', base.slice(1))
    bad('FUTURE_FORMAT-format-2', 'FUTURE_FORMAT', 1, 'the header says format 2, newer than format 1 (docs/spec/versioning.md)', [JSON.stringify({ ...header, format: 2 }), ...base.slice(1)])
    bad('INVALID_HEADER-format-0', 'INVALID_HEADER', 1, 'the header says format 0', [JSON.stringify({ ...header, format: 0 }), ...base.slice(1)])
    {
      const lines = [...withCrc]
      lines[2] = lines[2]!.replace('"turn":1', '"turn":2')
      bad('CHECKSUM_MISMATCH-record-changed', 'CHECKSUM_MISMATCH', 3, 'a record whose bytes no longer match its crc (a changed turn number that still parses)', lines)
    }
    {
      const lines = [...base]
      lines[3] = lines[3]!.slice(0, 20)
      bad('MALFORMED_LINE-cut-record-mid-file', 'MALFORMED_LINE', 4, 'a record cut short in the middle of the file (corruption, not a torn tail)', lines)
    }
    {
      const lines = [...base]
      lines[lines.length - 1] = lines[lines.length - 1]!.slice(0, 25)
      bad('TORN_TAIL-last-record-cut', 'TORN_TAIL', lines.length, 'the last record cut short by a crash (repairable)', lines, '')
    }
    {
      const lines = [...base]
      lines[1] = lines[1]!.replace('What is the weather in Paris?', 'What is the weather in \\ud800?')
      // a value defect inside a line that parses: `verify` names it SCHEMA at its seq; `readLog` refuses the line (INVALID_UTF8)
      pending.push({ entry: { file: 'invalid/SCHEMA-lone-surrogate.jsonl', valid: false, expect: { code: 'SCHEMA', seq: 0 },
        description: 'a message text holding a lone UTF-16 surrogate (\\ud800), which is not lossless; a reader refuses the line with INVALID_UTF8' }, text: lines.join('\n') + '\n' })
    }
    {
      const lines = [...base]
      const at = base.findIndex((l) => l.includes('"type":"assistant/message"'))
      lines[at] = lines[at]!.replace(/"inputTokens":\d+/, '"inputTokens":-0')
      pending.push({ entry: { file: 'invalid/SCHEMA-negative-zero.jsonl', valid: false, expect: { code: 'SCHEMA', seq: at - 1 },
        description: 'a usage count written as -0, which is not lossless JSON; a reader refuses the line with NOT_LOSSLESS' }, text: lines.join('\n') + '\n' })
    }
    // a line that is JSON but not a valid event (INVALID_EVENT, UNKNOWN_EVENT_TYPE) is refused by a
    // reader too; `verify` reports it as a SCHEMA violation instead, so those logs are in invalid/
  }

  // the verdicts, checked before anything is written
  const bad: string[] = []
  for (const { entry, text } of pending) {
    const v = verify(recordsOf(text))
    const got = v.violations[0]
    const ok = entry.valid ? v.ok : got !== undefined && got.invariant === entry.expect!.code && got.seq === entry.expect!.seq
    if (!ok) bad.push(`${entry.file}: expected ${entry.valid ? 'valid' : JSON.stringify(entry.expect)}, verify says ${JSON.stringify(v.violations.slice(0, 3))}`)
  }
  for (const { entry, bytes } of unreadable) {
    const want = entry.expect!
    const got = await readBytes(bytes)
    if (got?.code !== want.code || got.line !== want.line) bad.push(`${entry.file}: expected ${JSON.stringify(want)}, readLog says ${JSON.stringify(got)}`)
  }
  if (bad.length) throw new Error(`build-corpus: verify disagrees with the construction:\n${bad.join('\n')}`)

  rmSync(join(OUT, 'valid'), { recursive: true, force: true })
  rmSync(join(OUT, 'invalid'), { recursive: true, force: true })
  rmSync(join(OUT, 'unreadable'), { recursive: true, force: true })
  for (const dir of ['valid', 'invalid', 'unreadable']) mkdirSync(join(OUT, dir), { recursive: true })
  for (const dir of ['valid', 'invalid']) {
    for (const f of readdirSync(join(FIXTURES, dir)).filter((n) => n.endsWith('.jsonl')).sort()) {
      const rel = `${dir}/${f}`
      const want = expected[rel]
      if (want === undefined) throw new Error(`build-corpus: ${rel} has no entry in test/fixtures/expected.json`)
      copyFileSync(join(FIXTURES, rel), join(OUT, rel))
      entries.push(want.ok
        ? { file: rel, valid: true, description: f === 'example.jsonl' ? 'one turn with a tool call: the reference for every JSON shape (examples/weather.jsonl)' : `a valid log with ${describeName(f)} events` }
        : { file: rel, valid: false, expect: { code: want.firstViolation!.invariant, seq: want.firstViolation!.seq }, description: describeName(f) })
    }
  }
  for (const { entry, text } of pending) {
    writeFileSync(join(OUT, entry.file), text)
    entries.push(entry)
  }
  for (const { entry, bytes } of unreadable) {
    writeFileSync(join(OUT, entry.file), bytes)
    entries.push(entry)
  }
  entries.sort((a, b) => a.file.localeCompare(b.file, 'en', { numeric: true }))
  const manifest = {
    format: 1,
    description: 'The turnlog conformance corpus (docs/spec/README.md "For another implementation"): run your reader and checker over every file. A valid log reads and has no violation; an invalid one (invalid/) reads and must get `expect.code` at `expect.seq` as its first violation, with the default checker options (maxStepsPerTurn 64, maxRetries 5, maxResumeRuns 3) unless `options` says otherwise; an unreadable one (unreadable/) must be refused by the reader with the error `expect.code` at line `expect.line`.',
    logs: entries,
  }
  writeFileSync(join(OUT, 'corpus.json'), JSON.stringify(manifest, null, 2) + '\n')
  const counts: Record<string, number> = {}
  for (const e of entries) {
    const k = e.valid ? 'valid' : e.file.startsWith('unreadable/') ? 'unreadable' : e.expect!.code
    counts[k] = (counts[k] ?? 0) + 1
  }
  process.stdout.write(`wrote ${entries.length} logs to docs/spec/corpus: ${JSON.stringify(counts)}\n`)
}

await main()
