/**
 * Live OTel nesting of child sessions (docs/spec/lifecycle.md §10, L19; issue 25 item 1): with an `otelPlugin`
 * on the parent and on its `defineSubagent` children, the child's (and the grandchild's) spans
 * start under the spawning call's `execute_tool` span, in the parent's trace, while they run;
 * the live spans equal span for span what `exportFamilySpans` gives for the same family read back
 * from the store. A child whose parent has no plugin keeps its own traces.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { AgentPlugin } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { exportFamilySpans, otelPlugin, type SessionTree } from '../../otel/index.js'
import { memoryStore } from '../../stores/index.js'
import type { LogStore } from '../../stores/types.js'

function sdk() {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  return { exporter, tracer: provider.getTracer('turnlog-test') }
}

const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6

/** Finished spans as comparable records: parent by name path, times in ms, same trace as the parent. */
function shape(spans: readonly ReadableSpan[]) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
  const path = (s: ReadableSpan): string => {
    const parent = s.parentSpanContext ? byId.get(s.parentSpanContext.spanId) : undefined
    return parent ? `${path(parent)} > ${s.name}` : s.name
  }
  return spans
    .map((s) => ({
      path: path(s), start: Math.round(ms(s.startTime)), end: Math.round(ms(s.endTime)), attributes: { ...s.attributes }, status: s.status.code,
      orphan: s.parentSpanContext !== undefined && !byId.has(s.parentSpanContext.spanId),
      sameTrace: s.parentSpanContext ? byId.get(s.parentSpanContext.spanId)?.spanContext().traceId === s.spanContext().traceId : true,
    }))
    .sort((a, b) => a.start - b.start || a.path.localeCompare(b.path))
}

async function read(store: LogStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events()) out.push(e)
  await r.close()
  return out
}

/**
 * A parent whose call `c1` runs a child that itself calls `research` (a grandchild), all on one
 * shared moving clock, each with `plugins(depth)`; the family's logs from the store.
 */
async function family(plugins: (depth: number) => AgentPlugin[]): Promise<{ store: LogStore; tree: SessionTree }> {
  let t = 1_764_450_000_000
  const clock = () => t++
  const store = memoryStore({ clock: () => 0 })
  const grandchild = defineSubagent({
    name: 'research', description: 'digs deeper', parameters: z.object({ q: z.string() }),
    agent: () => ({ model: scriptedModel([{ text: 'deep answer' }], { info: { name: 'm-grandchild' } }), system: 'gc', clock, plugins: plugins(2) }),
  })
  const child = defineSubagent({
    name: 'delegate', description: 'delegates', parameters: z.object({ q: z.string() }),
    agent: () => ({
      model: scriptedModel([{ toolCalls: [{ name: 'research', args: { q: 'deeper' }, id: 'g1' }] }, { text: 'child answer' }], { info: { name: 'm-child' } }),
      tools: [grandchild], system: 'child', clock, plugins: plugins(1),
    }),
  })
  const parent = createAgent({
    model: scriptedModel([{ toolCalls: [{ name: 'delegate', args: { q: 'why?' }, id: 'c1' }] }, { text: 'parent done' }], { info: { name: 'm-parent' } }),
    tools: [child], store, sessionId: 'p1', clock, plugins: plugins(0),
  })
  parent.followup('go')
  await parent.whenIdle()
  await parent.dispose()
  const cid = 'p1.c1-1-c1'
  const gid = `${cid}.c1-1-g1`
  expect((await store.list()).sort()).toEqual([cid, gid, 'p1'].sort())
  const tree: SessionTree = {
    sessionId: 'p1', events: await read(store, 'p1'),
    children: [{ callId: 'c1', tree: { sessionId: cid, events: await read(store, cid), children: [{ callId: 'g1', tree: { sessionId: gid, events: await read(store, gid) } }] } }],
  }
  return { store, tree }
}

describe('otelPlugin on a family, live (docs/spec/lifecycle.md §10)', () => {
  it('L19: the child\'s and the grandchild\'s turn spans sit under the spawning call\'s execute_tool span, in the parent\'s trace', async () => {
    const live = sdk()
    await family(() => [otelPlugin(live.tracer)])
    const spans = live.exporter.getFinishedSpans()
    const tool = spans.find((s) => s.name === 'execute_tool delegate')!
    const deep = spans.find((s) => s.name === 'execute_tool research')!
    const turns = spans.filter((s) => s.name === 'invoke_agent')
    const conv = (s: ReadableSpan) => s.attributes['gen_ai.conversation.id']
    const childTurn = turns.find((s) => conv(s) === 'p1.c1-1-c1')!
    const gcTurn = turns.find((s) => conv(s) === 'p1.c1-1-c1.c1-1-g1')!
    expect(childTurn.parentSpanContext?.spanId).toBe(tool.spanContext().spanId)
    expect(gcTurn.parentSpanContext?.spanId).toBe(deep.spanContext().spanId)
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1)
    const paths = shape(spans).map((s) => s.path)
    expect(paths).toContain('invoke_agent > execute_tool delegate > invoke_agent > execute_tool research > invoke_agent > chat m-grandchild')
  })

  it('L19: the live spans equal exportFamilySpans of the same family, span for span', async () => {
    const live = sdk()
    const { tree } = await family(() => [otelPlugin(live.tracer)])
    const after = sdk()
    exportFamilySpans(tree, after.tracer)
    const got = shape(live.exporter.getFinishedSpans())
    expect(got.length).toBe(shape(after.exporter.getFinishedSpans()).length)
    expect(got).toEqual(shape(after.exporter.getFinishedSpans()))
    expect(got.every((s) => !s.orphan && s.sameTrace)).toBe(true)
  })

  it('a child whose parent has no plugin keeps its turns at the root (nothing left behind by an earlier family)', async () => {
    const live = sdk()
    await family((depth) => (depth === 1 ? [otelPlugin(live.tracer)] : []))
    const turns = live.exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent')
    expect(turns).toHaveLength(1)
    expect(turns[0]!.parentSpanContext).toBeUndefined()
  })
})
