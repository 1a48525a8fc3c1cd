/**
 * L19 across logs (replay/verify-family.ts): families the live agent writes for random subagent
 * scenarios (answers, tool use, a failing child, a grandchild, a parent cancelled mid-child) pass
 * every family rule, and each rule broken on purpose in such a family is caught with its code
 * (property tests over mutated families, as the L17/L18 checker's).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { Agent, AgentOptions } from '../../agent/types.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { verifyFamily, type FamilyLog } from '../../replay/verify-family.js'
import { memoryStore } from '../../stores/index.js'
import type { LogStore } from '../../stores/types.js'
import { defineTool } from '../../tools/index.js'
import { fcRuns } from '../fc-runs.js'

type Kind = 'answer' | 'tool' | 'fail' | 'grandchild' | 'cancel'
const arbPlan = fc.array(fc.constantFrom<Kind>('answer', 'tool', 'fail', 'grandchild', 'cancel'), { minLength: 1, maxLength: 3 })

interface Family { root: FamilyLog; children: Map<string, FamilyLog> }

async function readAll(store: LogStore, id: string): Promise<FamilyLog> {
  const r = await store.open(id, 'read')
  const events: LogEvent[] = []
  try {
    for await (const e of r.events()) events.push(e)
  } finally {
    await r.close()
  }
  return { header: r.header, events }
}

const lookup = defineTool({
  name: 'lookup', description: 'looks up', parameters: z.object({ q: z.string() }), isConcurrencySafe: () => true,
  execute: ({ q }) => `found ${q}`,
})

/** A tool-calling model: one call per request until `calls` are made, then `answer`. */
const caller = (calls: Array<{ name: string; args: object }>, answer: string, onRequest?: (n: number) => void) =>
  scriptedModel((request) => {
    const made = request.messages.filter((m) => m.role === 'tool').length
    onRequest?.(made)
    const c = calls[made]
    return c !== undefined ? { toolCalls: [{ name: c.name, args: c.args, id: `c${made + 1}` }] } : { text: answer }
  })

/** Runs a parent through the plan (one subagent call per kind, in order) in a memory store; returns the family. */
async function familyOf(plan: readonly Kind[]): Promise<Family> {
  const store = memoryStore()
  let parent: Agent | undefined
  const childOptions = (kind: Kind, i: number): Partial<AgentOptions> => {
    switch (kind) {
      case 'answer': return { model: caller([], `answer ${i}`) }
      case 'tool': return { model: caller([{ name: 'lookup', args: { q: `q${i}` } }], `looked up ${i}`), tools: [lookup] }
      case 'fail': return { model: scriptedModel([{ error: { code: 'INVALID_CREDENTIAL' } }]) }
      case 'grandchild': return { model: caller([{ name: 'research', args: { kind: 'answer', i: 100 + i } }], `relayed ${i}`), tools: [research] }
      case 'cancel': return { model: caller([], `never ${i}`, () => parent!.cancel()) }
    }
  }
  const research = defineSubagent({
    name: 'research', description: 'runs a child', parameters: z.object({ kind: z.enum(['answer', 'tool', 'fail', 'grandchild', 'cancel']), i: z.number() }),
    agent: ({ kind, i }) => ({ system: 'child', ...childOptions(kind, i) }) as never,
  })
  parent = createAgent({
    store, sessionId: 'p', system: 'parent', tools: [research],
    model: caller(plan.map((kind, i) => ({ name: 'research', args: { kind, i } })), 'parent done'),
  })
  parent.followup('go')
  await parent.whenIdle()
  await parent.flush()
  await parent.dispose()
  const children = new Map<string, FamilyLog>()
  for (const id of await store.list()) if (id !== 'p') children.set(id, await readAll(store, id))
  return { root: await readAll(store, 'p'), children }
}

const check = (f: Family) => verifyFamily(f.root, async (id) => f.children.get(id))
const codes = async (f: Family) => (await check(f)).violations.map((v) => v.code)

const isResult = (e: LogEvent, callId: string) => e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.callId === callId
/** The parent's spawns whose call got an answer (`ok`) or an error naming how its child ended (`failed`). */
function spawns(f: Family): Array<{ sp: EventOf<'child/spawned'>; result: EventOf<'tool/result'>; child: FamilyLog; ok: boolean }> {
  return f.root.events.flatMap((e) => {
    if (e.type !== 'child/spawned') return []
    const sp = e as EventOf<'child/spawned'>
    const result = f.root.events.find((x) => x.seq > sp.seq && isResult(x, sp.data.callId)) as EventOf<'tool/result'> | undefined
    const child = f.children.get(sp.data.child)
    return result !== undefined && child !== undefined ? [{ sp, result, child, ok: result.data.error === undefined }] : []
  })
}
const withChild = (f: Family, id: string, log: FamilyLog): Family => ({ root: f.root, children: new Map(f.children).set(id, log) })
const withRootEvent = (f: Family, seq: number, e: LogEvent): Family => ({ root: { ...f.root, events: f.root.events.map((x) => (x.seq === seq ? e : x)) }, children: f.children })
const header = (f: Family, id: string, parent: FamilyLog['header']['parent']): Family => {
  const c = f.children.get(id)!
  const { parent: _p, ...rest } = c.header
  void _p
  return withChild(f, id, { ...c, header: parent === undefined ? rest : { ...rest, parent } })
}

/** Each mutation breaks one family rule in a family that has what it needs, or says it does not apply. */
const MUTATIONS: Array<{ name: string; code: string; apply(f: Family): Family | null }> = [
  { name: "a child's header names another call", code: 'FAMILY_HEADER', apply: (f) => {
    const s = spawns(f)[0]
    return s ? header(f, s.sp.data.child, { ...s.child.header.parent!, callId: 'other' }) : null
  } },
  { name: "a child's header names another seq", code: 'FAMILY_HEADER', apply: (f) => {
    const s = spawns(f)[0]
    return s ? header(f, s.sp.data.child, { ...s.child.header.parent!, seq: s.sp.seq - 1 }) : null
  } },
  { name: "a child's header names another parent", code: 'FAMILY_HEADER', apply: (f) => {
    const s = spawns(f)[0]
    return s ? header(f, s.sp.data.child, { ...s.child.header.parent!, session: 'someone-else' }) : null
  } },
  { name: "a child's header names no parent", code: 'FAMILY_HEADER', apply: (f) => {
    const s = spawns(f)[0]
    return s ? header(f, s.sp.data.child, undefined) : null
  } },
  { name: "an answered call's child log is gone", code: 'FAMILY_CHILD_MISSING', apply: (f) => {
    const s = spawns(f).find((x) => x.ok)
    if (!s) return null
    const children = new Map(f.children)
    children.delete(s.sp.data.child)
    return { root: f.root, children }
  } },
  { name: "an answered call's result text differs from its child's answer", code: 'FAMILY_ANSWER', apply: (f) => {
    const s = spawns(f).find((x) => x.ok)
    if (!s) return null
    const d = s.result.data
    return withRootEvent(f, s.result.seq, { ...s.result, data: { ...d, message: { ...d.message, content: [{ type: 'text', text: 'made up' }] } } })
  } },
  { name: "a failed child's call gets an answer", code: 'FAMILY_ANSWER', apply: (f) => {
    const s = spawns(f).find((x) => !x.ok && x.result.data.error?.code === 'TOOL_ERROR')
    if (!s) return null
    const { error: _e, ...d } = s.result.data
    void _e
    return withRootEvent(f, s.result.seq, { ...s.result, data: { ...d, message: { role: 'tool', callId: d.callId, content: [{ type: 'text', text: 'made up' }] } } })
  } },
  { name: "an error result names an end its child's log does not have", code: 'FAMILY_END', apply: (f) => {
    const s = spawns(f).find((x) => /ended '/.test(x.result.data.error?.message ?? ''))
    if (!s) return null
    const d = s.result.data
    const message = d.error!.message.replace(/ended '[^']+'/, "ended 'budget'")
    return withRootEvent(f, s.result.seq, { ...s.result, data: { ...d, error: { ...d.error!, message }, message: { ...d.message, content: [{ type: 'text', text: message }] } } })
  } },
  { name: "an answered call's child never closed its turn", code: 'FAMILY_ORPHAN', apply: (f) => {
    const s = spawns(f).find((x) => x.ok)
    if (!s) return null
    const ev = s.child.events
    const last = ev.findLastIndex((e) => e.type === 'turn/end')
    return withChild(f, s.sp.data.child, { ...s.child, events: ev.slice(0, last) })
  } },
  { name: "a child's last turn starts after its call's result", code: 'FAMILY_ORPHAN', apply: (f) => {
    const s = spawns(f).find((x) => x.ok)
    if (!s) return null
    const ev = s.child.events
    const start = ev.findLastIndex((e) => e.type === 'turn/start')
    const shift = s.result.time - ev[start]!.time + 1000
    return withChild(f, s.sp.data.child, { ...s.child, events: ev.map((e, i) => (i >= start ? { ...e, time: e.time + shift } : e)) })
  } },
  { name: 'a child ended aborted by its parent, whose call was not cancelled', code: 'FAMILY_CASCADE', apply: (f) => {
    const s = spawns(f).find((x) => x.ok)
    if (!s) return null
    const ev = s.child.events
    const end = ev.findLastIndex((e) => e.type === 'turn/end')
    const e = ev[end] as EventOf<'turn/end'>
    return withChild(f, s.sp.data.child, { ...s.child, events: ev.map((x, i) => (i === end ? { ...e, data: { ...e.data, reason: { kind: 'aborted', cause: { kind: 'parent' } } } } as LogEvent : x)) })
  } },
  { name: 'a child spawns its own parent (a cycle)', code: 'FAMILY_REPEATED', apply: (f) => {
    for (const [id, c] of f.children) {
      const i = c.events.findIndex((e) => e.type === 'child/spawned')
      if (i < 0) continue
      const e = c.events[i] as EventOf<'child/spawned'>
      return withChild(f, id, { ...c, events: c.events.map((x, k) => (k === i ? { ...e, data: { ...e.data, child: 'p' } } as LogEvent : x)) })
    }
    return null
  } },
  { name: "a child's own log breaks an L invariant", code: 'INVARIANT', apply: (f) => {
    const s = spawns(f)[0]
    if (!s) return null
    const ev = s.child.events
    const i = ev.findIndex((e) => e.type === 'step/start')
    if (i < 0) return null
    return withChild(f, s.sp.data.child, { ...s.child, events: ev.filter((_, k) => k !== i).map((e, k) => ({ ...e, seq: k }) as LogEvent) })
  } },
]

describe('L19 across logs: the family checker', () => {
  it('L19: every family the agent writes for random subagent scenarios passes every family rule', async () => {
    const seen = new Set<string>()
    await fc.assert(fc.asyncProperty(arbPlan, async (plan) => {
      const f = await familyOf(plan)
      const r = await check(f)
      expect(r.violations).toEqual([])
      expect(r.missing).toEqual([])
      for (const c of f.children.values()) {
        const end = c.events.filter((e) => e.type === 'turn/end').at(-1) as EventOf<'turn/end'> | undefined
        const reason = end?.data.reason as { kind: string; cause?: { kind: string } } | undefined
        seen.add(reason === undefined ? 'none' : reason.cause ? `${reason.kind} ${reason.cause.kind}` : reason.kind)
      }
      expect(r.sessions).toHaveLength(f.children.size + 1)
    }), { numRuns: fcRuns(25) })
    // the scenarios reach every way a child ends that the rules read
    expect([...seen].sort()).toEqual(expect.arrayContaining(['aborted parent', 'completed', 'error']))
  })

  it('L19: each broken family rule is caught in mutated families, with its code', async () => {
    const hit = new Set<string>()
    await fc.assert(fc.asyncProperty(arbPlan, async (plan) => {
      const f = await familyOf(plan)
      for (const m of MUTATIONS) {
        const bad = m.apply(f)
        if (bad === null) continue
        hit.add(m.name)
        expect(await codes(bad), m.name).toContain(m.code)
      }
    }), { numRuns: fcRuns(30) })
    // every mutation found a family to break
    expect([...hit].sort()).toEqual(MUTATIONS.map((m) => m.name).sort())
  })
})
