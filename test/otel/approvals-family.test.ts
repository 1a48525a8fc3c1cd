/**
 * The wait for a person and child sessions in the spans (docs/spec/lifecycle.md §9, §10): a call that needed
 * approval has its `execute_tool` span from the request, the wait is its child span
 * `await_approval` ending at the decision with who decided and the outcome — the same through the
 * pure mapping, the SDK and OTLP/JSON; the chrome-trace export marks requests, decisions and the
 * parked time. A parent exported with its children puts each child's turn spans under the
 * spawning call's `execute_tool` span, in the parent's trace (SDK and `turnlog export --children`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { exportFamilySpans, exportSpans, familyToSpans, logToSpans, toOtlpJson } from '../../otel/index.js'
import { writeLog } from '../../replay/write-log.js'
import { cli } from '../cli/helpers.js'
import { approvalSession, CHILD_ID, familySession } from '../fixtures/view-logs.js'

let events: LogEvent[]
let fam: { parent: LogEvent[]; child: LogEvent[] }
const dir = mkdtempSync(join(tmpdir(), 'turnlog-otel-fam-'))
beforeAll(async () => {
  events = (await approvalSession()).events
  fam = await familySession(join(dir, 'fam'))
  await writeLog(join(dir, 'ap1.jsonl'), { header: { type: 'session', format: 1, id: 'ap1', createdAt: 0 }, events })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const seqs = (type: string) => events.filter((e) => e.type === type).map((e) => e.seq)

function sdk() {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  return { exporter, tracer: provider.getTracer('test') }
}

describe('OTel: approvals (docs/spec/lifecycle.md §9)', () => {
  it('R9/L17: the tool span starts at the request; the wait is a child span ending at the decision with who and the outcome', () => {
    const spans = logToSpans(events, { sessionId: 'ap1' })
    const [req2, req3, req6] = seqs('tool/approval-requested')
    const [dec3, dec2] = seqs('tool/approval-decided')
    const tool3 = spans.find((s) => s.key === 'tool-c3')!
    expect(tool3).toMatchObject({ name: 'execute_tool rm', startTime: events[req3!]!.time, attributes: { 'turnlog.seq.start': req3, 'gen_ai.tool.call.id': 'c3' } })
    expect(spans.filter((s) => s.key === 'tool-c3')).toHaveLength(1) // its tool/call opened nothing more
    const wait3 = spans.find((s) => s.key === 'approval-m3')!
    expect(wait3).toMatchObject({
      name: 'await_approval rm', parentKey: 'tool-c3', startTime: events[req3!]!.time, endTime: events[dec3!]!.time,
      attributes: {
        'turnlog.approval.id': 'm3', 'turnlog.approval.decision': 'approve', 'turnlog.approval.decided_by': 'user',
        'turnlog.approval.user': 'ann', 'turnlog.approval.arguments_edited': true, 'turnlog.seq.start': req3, 'turnlog.seq.end': dec3,
      },
    })
    expect(wait3.attributes['turnlog.approval.arguments']).toBeUndefined() // content is off by default
    expect(spans.find((s) => s.key === 'approval-m2')).toMatchObject({
      parentKey: 'tool-c2', startTime: events[req2!]!.time, endTime: events[dec2!]!.time,
      attributes: { 'turnlog.approval.decision': 'deny', 'turnlog.approval.decided_by': 'user', 'turnlog.approval.user': 'bob' },
    })
    expect(spans.find((s) => s.key === 'tool-c2')).toMatchObject({ status: { code: 'error' }, attributes: { 'error.type': 'DENIED' } })
    // the log ends parked: the last wait and its call are open
    expect(spans.find((s) => s.key === 'approval-m6')).toMatchObject({ parentKey: 'tool-c4', startTime: events[req6!]!.time })
    expect(spans.find((s) => s.key === 'approval-m6')!.endTime).toBeUndefined()
    // a call without approval is as before: from its tool/call
    expect(spans.find((s) => s.key === 'tool-c1')!.attributes['turnlog.seq.start']).toBe(events.find((e) => e.type === 'tool/call')!.seq)
    const withContent = logToSpans(events, { sessionId: 'ap1', includeContent: true })
    expect(withContent.find((s) => s.key === 'approval-m3')!.attributes['turnlog.approval.arguments']).toBe('{"path":"c2"}')
    expect(withContent.find((s) => s.key === 'approval-m2')!.attributes['turnlog.approval.reason']).toBe('keep b')
  })

  it('the SDK and OTLP/JSON give the same wait spans under the same parents', () => {
    const { exporter, tracer } = sdk()
    exportSpans({ sessionId: 'ap1', events }, tracer)
    const done = exporter.getFinishedSpans()
    const wait = done.find((s) => s.name === 'await_approval rm' && s.attributes['turnlog.approval.id'] === 'm3')!
    const tool = done.find((s) => s.name === 'execute_tool rm' && s.attributes['gen_ai.tool.call.id'] === 'c3')!
    expect(wait.parentSpanContext?.spanId).toBe(tool.spanContext().spanId)
    expect(wait.attributes['turnlog.approval.user']).toBe('ann')
    const otlp = toOtlpJson(events, { sessionId: 'ap1' }) as any
    const list = otlp.resourceSpans[0].scopeSpans[0].spans as any[]
    const w = list.find((s) => s.name === 'await_approval rm' && s.attributes.some((a: any) => a.key === 'turnlog.approval.id' && a.value.stringValue === 'm2'))
    const t = list.find((s) => s.spanId === w.parentSpanId)
    expect(t.name).toBe('execute_tool rm')
    expect(w.attributes).toContainEqual({ key: 'turnlog.approval.decided_by', value: { stringValue: 'user' } })
    expect(w.attributes).toContainEqual({ key: 'turnlog.approval.decision', value: { stringValue: 'deny' } })
    // open spans are left out of OTLP/JSON, as ever
    expect(list.some((s) => s.attributes.some((a: any) => a.key === 'turnlog.approval.id' && a.value.stringValue === 'm6'))).toBe(false)
  })

  it('chrome-trace: requests and decisions are instants, the parked time a bar on its own thread', async () => {
    const r = await cli(['export', join(dir, 'ap1.jsonl'), '--format', 'chrome-trace'])
    expect(r.code, r.stderr).toBe(0)
    const trace = JSON.parse(r.stdout)
    const instants = trace.traceEvents.filter((e: any) => e.ph === 'i').map((e: any) => e.cat)
    expect(instants.filter((k: string) => k === 'approval')).toHaveLength(3)
    expect(instants.filter((k: string) => k === 'decision')).toHaveLength(2)
    const parked = trace.traceEvents.filter((e: any) => e.ph === 'X' && e.cat === 'parked')
    expect(parked.map((e: any) => [e.tid, e.args.seq])).toEqual([[6, seqs('step/parked')[0]], [6, seqs('step/parked')[2]]])
    expect(parked[0].dur).toBeGreaterThanOrEqual(3 * 3_600_000 * 1000)
  })
})

describe('OTel: a parent with its children (docs/spec/lifecycle.md §10)', () => {
  it('L19: the child\'s turn span is a child of the spawning call\'s execute_tool span (pure mapping and SDK)', () => {
    const tree = { sessionId: 'p1', events: fam.parent, children: [{ callId: 'c1', tree: { sessionId: CHILD_ID, events: fam.child } }] }
    const spans = familyToSpans(tree, {})
    const childTurn = spans.find((s) => s.key === `${CHILD_ID}/turn-1`)!
    expect(childTurn.parentKey).toBe('tool-c1')
    expect(childTurn.attributes['gen_ai.conversation.id']).toBe(CHILD_ID)
    expect(spans.find((s) => s.key === `${CHILD_ID}/turn-1.step-1`)!.parentKey).toBe(`${CHILD_ID}/turn-1`)
    const { exporter, tracer } = sdk()
    exportFamilySpans(tree, tracer)
    const done = exporter.getFinishedSpans()
    const tool = done.find((s) => s.name === 'execute_tool research')!
    const turns = done.filter((s) => s.name === 'invoke_agent')
    const child = turns.find((s) => s.attributes['gen_ai.conversation.id'] === CHILD_ID)!
    expect(child.parentSpanContext?.spanId).toBe(tool.spanContext().spanId)
    expect(child.spanContext().traceId).toBe(tool.spanContext().traceId)
  })

  it('turnlog export --children nests the child under the call in one trace; without it, the parent alone', async () => {
    const alone = JSON.parse((await cli(['export', join(dir, 'fam', 'p1.jsonl'), '--format', 'otlp-json'])).stdout)
    expect(alone.resourceSpans[0].scopeSpans[0].spans.every((s: any) => !s.attributes.some((a: any) => a.value.stringValue === CHILD_ID))).toBe(true)
    const r = await cli(['export', join(dir, 'fam', 'p1.jsonl'), '--format', 'otlp-json', '--children'])
    expect(r.code, r.stderr).toBe(0)
    const list = JSON.parse(r.stdout).resourceSpans[0].scopeSpans[0].spans as any[]
    const conv = (s: any) => s.attributes.find((a: any) => a.key === 'gen_ai.conversation.id')?.value.stringValue
    const tool = list.find((s) => s.name === 'execute_tool research')
    const childTurn = list.find((s) => s.name === 'invoke_agent' && conv(s) === CHILD_ID)
    expect(childTurn.parentSpanId).toBe(tool.spanId)
    expect(childTurn.traceId).toBe(tool.traceId)
    // chrome-trace takes --children too now (test/cli/export-chrome-family.test.ts): the child is a process of its own
    const chrome = await cli(['export', join(dir, 'fam', 'p1.jsonl'), '--format', 'chrome-trace', '--children'])
    expect(chrome.code, chrome.stderr).toBe(0)
    expect(JSON.parse(chrome.stdout).otherData.sessions.map((s: any) => s.sessionId)).toEqual(['p1', CHILD_ID])
  })
})
