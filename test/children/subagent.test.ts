/**
 * Sub-agents (docs/spec/lifecycle.md §10, L19): a `defineSubagent` call runs a child session in the parent's
 * store; `child/spawned` stands between the call's `tool/call` and `tool/result`; the child's
 * header names the parent, that seq and the call; the child's answer is the result; a parent's
 * cancel cancels the child with cause `parent`; a child that does not complete is a TOOL_ERROR.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { verify } from '../../replay/verify.js'
import { verifyChild } from '../../replay/verify-child.js'
import { memoryStore } from '../../stores/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'

const research = (child: readonly ScriptedEntry[] | (() => ReturnType<typeof scriptedModel>), childOpts: Record<string, unknown> = {}) =>
  defineSubagent({
    name: 'research',
    description: 'Looks something up',
    parameters: z.object({ question: z.string() }),
    agent: () => ({ model: typeof child === 'function' ? child() : scriptedModel(child), system: 'child', ...childOpts }),
  })

const parentScript = (): ScriptedEntry[] => [
  { toolCalls: [{ name: 'research', args: { question: 'why is the sky blue?' }, id: 'c1' }] },
  { text: 'parent done' },
]

async function readAll(store: LogStore, id: string): Promise<{ header: unknown; events: LogEvent[] }> {
  const r = await store.open(id, 'read')
  const events: LogEvent[] = []
  for await (const e of r.events()) events.push(e)
  const header = r.header
  await r.close?.()
  return { header, events }
}

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('defineSubagent (docs/spec/lifecycle.md §10)', () => {
  for (const kind of ['memory', 'jsonl'] as const) {
    it(`L19 (${kind}): child/spawned between the call's tool/call and tool/result; the child's header names parent, seq, call; its answer is the result`, async () => {
      let store: LogStore
      if (kind === 'memory') store = memoryStore()
      else {
        const dir = mkdtempSync(join(tmpdir(), 'turnlog-sub-'))
        dirs.push(dir)
        store = jsonlStore(dir)
      }
      const parent = createAgent({ model: scriptedModel(parentScript()), tools: [research([{ text: 'Rayleigh scattering.' }])], store, sessionId: 'p1' })
      parent.followup('ask the researcher')
      await parent.whenIdle()
      await parent.flush()
      const types = parent.events.map((e) => e.type)
      const call = types.indexOf('tool/call')
      const spawned = types.indexOf('child/spawned')
      const result = types.indexOf('tool/result')
      expect(call).toBeGreaterThan(0)
      expect(spawned).toBeGreaterThan(call)
      expect(result).toBeGreaterThan(spawned)
      const sp = parent.events[spawned] as EventOf<'child/spawned'>
      expect(sp.data).toEqual({ turn: 1, step: 1, callId: 'c1', child: 'p1.c1-1-c1' })
      const res = parent.events[result] as EventOf<'tool/result'>
      expect(res.data.error).toBeUndefined()
      expect(res.data.message.content).toEqual([{ type: 'text', text: 'Rayleigh scattering.' }])
      expect(verify(parent.events).violations).toEqual([])
      await parent.dispose()
      expect((await store.list()).sort()).toEqual(['p1', 'p1.c1-1-c1'])
      const child = await readAll(store, 'p1.c1-1-c1')
      expect(child.header).toMatchObject({ id: 'p1.c1-1-c1', parent: { session: 'p1', seq: spawned, callId: 'c1' } })
      const um = child.events.find((e) => e.type === 'user/message') as EventOf<'user/message'>
      expect(um.data.message.content).toEqual([{ type: 'text', text: 'why is the sky blue?' }])
      expect(verify(child.events).violations).toEqual([])
      // L19 across the logs: the header's link holds, and each broken link is caught
      const h = child.header as { id: string; parent: { session: string; seq: number; callId: string } }
      expect(verifyChild('p1', parent.events, h)).toEqual([])
      expect(verifyChild('p0', parent.events, h)).toMatchObject([{ invariant: 'L19' }])
      expect(verifyChild('p1', parent.events, { ...h, parent: { ...h.parent, seq: h.parent.seq - 1 } })).toMatchObject([{ invariant: 'L19' }])
      expect(verifyChild('p1', parent.events, { ...h, parent: { ...h.parent, callId: 'c9' } })).toMatchObject([{ invariant: 'L19' }])
      expect(verifyChild('p1', parent.events, { id: h.id })).toMatchObject([{ invariant: 'L19' }])
    })
  }

  it("a parent's cancel cancels the child with cause parent; the call's result is an abort, not an answer", async () => {
    const store = memoryStore()
    // the child's model waits a minute before its first chunk (an abortable sleep)
    const parent = createAgent({
      model: scriptedModel(parentScript()),
      tools: [research(() => scriptedModel([{ text: 'never' }], { delayMs: 60_000 }))],
      store, sessionId: 'p2', cancelGraceMs: 1000,
    })
    parent.followup('ask')
    // wait until the child's request is in flight (its request/header is logged)
    for (;;) {
      if (await store.has('p2.c1-1-c1')) {
        const c = await readAll(store, 'p2.c1-1-c1').catch(() => null)
        if (c?.events.some((e) => e.type === 'request/header' || e.type === 'step/start')) break
      }
      await new Promise((r) => setTimeout(r, 5))
    }
    parent.cancel()
    await parent.whenIdle()
    await parent.dispose()
    const res = parent.events.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    expect(res.data.error?.code).toMatch(/^ABORTED/)
    const child = await readAll(store, 'p2.c1-1-c1')
    const end = child.events.filter((e) => e.type === 'turn/end').at(-1) as EventOf<'turn/end'>
    expect(end.data.reason).toEqual({ kind: 'aborted', cause: { kind: 'parent' } })
    expect(verify(parent.events).violations).toEqual([])
    expect(verify(child.events).violations).toEqual([])
  })

  it('a child whose turn does not complete is the call\'s TOOL_ERROR naming how it ended (never a made-up answer)', async () => {
    const parent = createAgent({
      model: scriptedModel(parentScript()),
      tools: [research([{ error: { code: 'CONTENT_FILTER' } }], { retry: false })],
      sessionId: 'p3',
    })
    parent.followup('ask')
    await parent.whenIdle()
    const res = parent.events.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    expect(res.data.error?.code).toBe('TOOL_ERROR')
    expect(res.data.error?.message).toContain("the child session p3.c1-1-c1 ended 'error'")
    await parent.dispose()
  })

  it('a subagent whose options function throws creates no child and spawns nothing: TOOL_ERROR', async () => {
    const store = memoryStore()
    const bad = defineSubagent({ name: 'research', description: 'd', parameters: z.object({ question: z.string() }), agent: () => { throw new Error('no model for you') } })
    const parent = createAgent({ model: scriptedModel(parentScript()), tools: [bad], store, sessionId: 'p4' })
    parent.followup('ask')
    await parent.whenIdle()
    await parent.dispose()
    expect(parent.events.some((e) => e.type === 'child/spawned')).toBe(false)
    const res = parent.events.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    expect(res.data.error).toMatchObject({ code: 'TOOL_ERROR' })
    expect(res.data.error?.message).toContain('no model for you')
    expect(await store.list()).toEqual(['p4'])
  })
})
