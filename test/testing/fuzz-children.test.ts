/**
 * The fuzzer generates subagent calls (`fuzzAgent({ children: true })`, issue 25 item 4,
 * docs/spec/lifecycle.md §10): child sessions that answer, fail, trip a budget, spawn a grandchild, or are
 * cancelled by their parent mid-run; the family oracle (testing/fuzz/children-check.ts) checks L19
 * across the logs, every L invariant (L20 included) on each child's log, that a call's result is
 * its child's answer, and that no child is left running. The oracle is also shown rejecting
 * families that break each rule.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { memoryStore } from '../../stores/index.js'
import type { LogStore } from '../../stores/types.js'
import { fuzzAgent } from '../../testing/index.js'
import { checkChildren } from '../../testing/fuzz/children-check.js'
import { FuzzViolation } from '../../testing/fuzz/failure.js'

const runs = Number(process.env.TURNLOG_FUZZ_RUNS ?? 60)

/** A parent that calls `research` once, whose child answers `Rayleigh.`, in `store`. */
async function family(store: LogStore): Promise<void> {
  const research = defineSubagent({
    name: 'research', description: 'looks up', parameters: z.object({ q: z.string() }),
    agent: () => ({ model: scriptedModel([{ text: 'Rayleigh.' }]), system: 'child' }),
  })
  const parent = createAgent({
    model: scriptedModel([{ toolCalls: [{ name: 'research', args: { q: 'sky?' }, id: 'c1' }] }, { text: 'done' }]),
    tools: [research], store, sessionId: 'p',
  })
  parent.followup('ask')
  await parent.whenIdle()
  await parent.dispose()
}

async function read(store: LogStore, id: string): Promise<{ header: { parent?: { session: string; seq: number; callId?: string } }; events: LogEvent[] }> {
  const r = await store.open(id, 'read')
  const events: LogEvent[] = []
  for await (const e of r.events()) events.push(e)
  await r.close()
  return { header: r.header as never, events }
}

/** A copy of the family with the parent's and the child's logs (and the child's header) edited. */
async function tampered(edit: { parent?: (e: LogEvent[]) => LogEvent[]; child?: (e: LogEvent[]) => LogEvent[]; seq?: (s: number) => number }): Promise<{ store: LogStore; events: LogEvent[] }> {
  const src = memoryStore()
  await family(src)
  const p = await read(src, 'p')
  const c = await read(src, 'p.c1-1-c1')
  const store = memoryStore()
  const events = (edit.parent ?? ((x) => x))(p.events)
  await store.create('p', {})
  const w = await store.open('p', 'write')
  await w.append(events, { expectedSeq: 0 })
  await w.close()
  const parent = c.header.parent!
  await store.create('p.c1-1-c1', { parent: { ...parent, seq: (edit.seq ?? ((s) => s))(parent.seq) } })
  const cw = await store.open('p.c1-1-c1', 'write')
  await cw.append((edit.child ?? ((x) => x))(c.events), { expectedSeq: 0 })
  await cw.close()
  return { store, events }
}

async function violation(t: { store: LogStore; events: LogEvent[] }): Promise<FuzzViolation | undefined> {
  try {
    await checkChildren(t.store, 'p', t.events, {})
    return undefined
  } catch (err) {
    if (err instanceof FuzzViolation) return err
    throw err
  }
}

describe('fuzzAgent with children (docs/spec/lifecycle.md §10)', () => {
  it(`L19 L20: ${runs} runs with generated subagent calls; the family holds and every child shape is reached (fixed seed)`, async () => {
    const report = await fuzzAgent({ numRuns: runs, seed: 20261202, children: true })
    const other = report.census.other
    for (const k of ['child completed', 'child error', 'child budget', 'child aborted parent', 'grandchild completed']) {
      expect(other[k] ?? 0, k).toBeGreaterThan(0)
    }
    expect(report.census.perTool.fuzz_child?.ok ?? 0).toBeGreaterThan(0)
  })

  it('L19: the family oracle passes a real family and rejects a header naming the wrong seq', async () => {
    expect(await violation(await tampered({}))).toBeUndefined()
    const v = await violation(await tampered({ seq: (s) => s - 1 }))
    expect(v?.invariant).toBe('L19')
    expect(v?.detail).toMatch(/not its child\/spawned/)
  })

  it('L19: the oracle rejects a result that is not the child\'s answer, and a child left with an open turn', async () => {
    const made = await violation(await tampered({
      parent: (es) => es.map((e) => e.type === 'tool/result'
        ? { ...e, data: { ...(e.data as object), message: { ...(e.data as { message: object }).message, content: [{ type: 'text', text: 'made up' }] } } } as LogEvent
        : e),
    }))
    expect(made?.detail).toMatch(/"made up", its child answered "Rayleigh\."/)
    const open = await violation(await tampered({ child: (es) => es.slice(0, es.findIndex((e) => e.type === 'turn/end')) }))
    expect(open?.detail).toMatch(/left with an open turn/)
  })

  it('L19: the oracle rejects a spawning call without its tool/result, and a child missing from the store', async () => {
    const cut = await violation(await tampered({ parent: (es) => es.slice(0, es.findIndex((e) => e.type === 'tool/result')) }))
    expect(cut?.detail).toMatch(/has 0 tool\/result/)
    const store = memoryStore()
    await family(store)
    const p = await read(store, 'p')
    const renamed = p.events.map((e) => (e.type === 'child/spawned' ? { ...e, data: { ...(e.data as object), child: 'p.elsewhere' } } as LogEvent : e))
    const v = await violation({ store, events: renamed })
    expect(v?.detail).toMatch(/p\.elsewhere .*not in the store/)
  })
})
