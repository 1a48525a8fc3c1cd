/**
 * The views of input rounds (docs/spec/lifecycle.md §11; invariant L21): `turnlog replay` shows each
 * round (what it asked: keys and kinds; a client tool's round as such), each answer (accepted,
 * declined, cancelled; by whom; how long it waited) and the parked time between, in log order inside
 * their step, and a summary line; `--json` holds the same facts in the transcript; the OTel spans
 * have each round as an `await_input {name}` child span of its call's `execute_tool` span, from
 * the request to the answer, with what was asked and who answered (the report and inspect page:
 * test/browser/report-inputs.test.ts).
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { logToSpans } from '../../otel/index.js'
import { writeLog } from '../../replay/write-log.js'
import { inputSession } from '../fixtures/input-logs.js'
import { cli, tempDir } from './helpers.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())
let path: string
let events: LogEvent[]

beforeAll(async () => {
  events = (await inputSession()).events
  path = join(tmp.dir, 'in1.jsonl')
  await writeLog(path, { header: { type: 'session', format: 1, id: 'in1', createdAt: 0 }, events })
})

function inOrder(out: string, fragments: string[]): void {
  const lines = out.split('\n')
  let at = -1
  for (const f of fragments) {
    const i = lines.findIndex((l, k) => k > at && l.includes(f))
    expect(i, `missing or out of order: ${f}\n${out}`).toBeGreaterThan(at)
    at = i
  }
}
const seqOf = (type: string, n = 0): number => events.filter((e) => e.type === type)[n]!.seq

describe('input rounds in the views', () => {
  it('L21 turnlog replay: rounds asked (keys, kinds), answers (how, by whom, after how long), parked time, in log order; a summary line', async () => {
    const r = await cli(['replay', path])
    expect(r.code).toBe(0)
    inOrder(r.stdout, [
      'Turn 1',
      '→ ship({"item":"books"})  c1',
      `? input q2 round 1 asked by ship({"item":"books"}): address (form) c1 #${seqOf('tool/input-requested', 0)}`,
      '⏸ parked, waiting for q2 · 2 h',
      `✓ input q2 accepted by ann after 2 h, at 2025-11-29T`,
      `? input q3 round 2 asked by ship({"item":"books"}): speed (choice) c1`,
      `✗ input q3 declined by bob after 2 h`,
      'tool       ship c1 ← not shipped: decline by user',
      '? input q4: client tool pick_color({"palette":"sea"}) waits for the client c2',
      '✓ input q4 accepted by ann after 2 h',
      'tool       pick_color c2 ← {"color":"blue"}',
      'Turn 2',
      '? input q6 round 1 asked by ship({"item":"lamp"}): address (form) c3',
      '⏸ parked, waiting for q6 · still parked: the log ends here',
      'Summary',
      '  inputs       4 round(s) asked · 2 accepted, 1 declined, 0 cancelled, 1 open · answered after 6 h in all',
    ])
  })

  it('L21 replay --json: the transcript steps carry the rounds with their answers', async () => {
    const r = await cli(['replay', path, '--json'])
    expect(r.code).toBe(0)
    const step = JSON.parse(r.stdout).transcript.items[0].items[0]
    expect(step.inputs.map((x: any) => [x.requestId, x.callId, x.name, x.round, x.asked, x.answer?.action, x.answer?.by])).toEqual([
      ['q2', 'c1', 'ship', 1, [{ key: 'address', kind: 'form' }], 'accept', { kind: 'user', id: 'ann' }],
      ['q3', 'c1', 'ship', 2, [{ key: 'speed', kind: 'choice' }], 'decline', { kind: 'user', id: 'bob' }],
      ['q4', 'c2', 'pick_color', 1, [{ key: 'output', kind: 'client' }], 'accept', { kind: 'user', id: 'ann' }],
    ])
    for (const x of step.inputs) expect(x.answer.time - x.time).toBeGreaterThanOrEqual(2 * 3_600_000)
  })

  it('L21 spans: each round is an await_input child span of its execute_tool span, from request to answer, with what was asked and who answered', () => {
    const spans = logToSpans(events, { sessionId: 'in1' })
    const waits = spans.filter((s) => s.name.startsWith('await_input'))
    expect(waits.map((s) => [s.name, s.parentKey, s.attributes['turnlog.input.request_id'], s.attributes['turnlog.input.round'], s.attributes['turnlog.input.keys'], s.attributes['turnlog.input.kinds'], s.attributes['turnlog.input.action'], s.attributes['turnlog.input.answered_by'], s.attributes['turnlog.input.user']])).toEqual([
      ['await_input ship', 'tool-c1', 'q2', 1, ['address'], ['form'], 'accept', 'user', 'ann'],
      ['await_input ship', 'tool-c1', 'q3', 2, ['speed'], ['choice'], 'decline', 'user', 'bob'],
      ['await_input pick_color', 'tool-c2', 'q4', 1, ['output'], ['client'], 'accept', 'user', 'ann'],
      ['await_input ship', 'tool-c3', 'q6', 1, ['address'], ['form'], undefined, undefined, undefined],
    ])
    const q2 = waits[0]!
    expect([q2.startTime, q2.endTime]).toEqual([events[seqOf('tool/input-requested', 0)]!.time, events[seqOf('tool/input-provided', 0)]!.time])
    expect(q2.endTime! - q2.startTime).toBeGreaterThanOrEqual(2 * 3_600_000)
    expect(waits[3]!.endTime).toBeUndefined() // still open: the log ends parked
    // the requests' messages and the responses are content: not in the spans
    expect(JSON.stringify(waits)).not.toContain('Where to?')
    expect(JSON.stringify(waits)).not.toContain('Paris')
  })
})
