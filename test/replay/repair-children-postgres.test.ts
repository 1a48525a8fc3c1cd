/**
 * Repair of a crashed parent whose subagent call was running, on PostgreSQL (docs/spec/lifecycle.md §10, L19,
 * L5): `turnlog repair postgres://…#p` and `repairSession` read the child from the same database;
 * a child that has not ended leaves the call `TOOL_OUTCOME_UNKNOWN`.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { repairSession } from '../../replay/repair-session.js'
import { verify } from '../../replay/verify.js'
import { memoryStore } from '../../stores/index.js'
import { postgresStore } from '../../stores/postgres/index.js'
import type { LogStore } from '../../stores/types.js'
import { cli } from '../cli/helpers.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'

const CHILD = 'p.c1-1-c1'
const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
  await dropAll()
})

async function readAll(store: LogStore, id: string): Promise<{ header: Awaited<ReturnType<LogStore['create']>>; events: LogEvent[] }> {
  const r = await store.open(id, 'read')
  const events: LogEvent[] = []
  try {
    for await (const e of r.events()) events.push(e)
  } finally {
    await r.close()
  }
  return { header: r.header, events }
}

/** A finished family run in memory: the parent cut before its call's result, the child as logged. */
async function family() {
  const mem = memoryStore()
  const agent = createAgent({
    store: mem, sessionId: 'p', system: 'parent',
    tools: [defineSubagent({
      name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
      agent: () => ({ model: scriptedModel(() => ({ text: 'Rayleigh scattering.' })), system: 'child' }),
    })],
    model: scriptedModel([{ toolCalls: [{ name: 'research', args: { question: 'why blue' }, id: 'c1' }] }, { text: 'parent done' }]),
  })
  agent.followup('go')
  await agent.whenIdle()
  await agent.flush()
  await agent.dispose()
  const parent = await readAll(mem, 'p')
  const cut = parent.events.findIndex((e) => e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.callId === 'c1')
  return { crashed: parent.events.slice(0, cut), child: await readAll(mem, CHILD) }
}

async function put(store: LogStore, id: string, header: { parent?: { session: string; seq: number; callId?: string } }, events: readonly LogEvent[]): Promise<void> {
  await store.create(id, header.parent ? { parent: header.parent } : {})
  const w = await store.open(id, 'write')
  try {
    await w.append([...events], { expectedSeq: 0 })
  } finally {
    await w.close()
  }
}

const resultOf = (events: readonly LogEvent[]) =>
  events.filter((e): e is EventOf<'tool/result'> => e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.callId === 'c1').map((e) => e.data)

describe('repair of a parent whose subagent call was running, PostgreSQL (docs/spec/lifecycle.md §10)', () => {
  it('L19 L5: turnlog repair postgres://…#p and repairSession take the finished child\'s answer from the database; a running child stays TOOL_OUTCOME_UNKNOWN', async () => {
    const f = await family()
    const url = await freshDb('repairkids')
    const store = postgresStore({ connectionString: url })
    try {
      await store.migrate()
      await put(store, 'p', {}, f.crashed)
      await put(store, CHILD, f.child.header, f.child.events)
      const open = f.child.events.findIndex((e) => e.type === 'turn/end')
      await put(store, 'q', {}, f.crashed.map((e) => (e.type === 'child/spawned' ? { ...e, data: { ...(e.data as object), child: 'q.c1-1-c1' } } as LogEvent : e)))
      await put(store, 'q.c1-1-c1', { parent: { ...f.child.header.parent!, session: 'q' } }, f.child.events.slice(0, open))

      const dir = await mkdtemp(join(tmpdir(), 'turnlog-repair-children-pg-'))
      dirs.push(dir)
      const c = await cli(['repair', `${url}#p`, '-o', join(dir, 'p.jsonl')])
      expect(c.code, c.stderr).toBe(0)
      const out = (await readLog(join(dir, 'p.jsonl'))).events as LogEvent[]
      expect(resultOf(out)).toEqual([expect.objectContaining({ message: { role: 'tool', callId: 'c1', content: [{ type: 'text', text: 'Rayleigh scattering.' }] } })])
      expect(resultOf(out)[0]!.error).toBeUndefined()
      expect(verify(out).violations).toEqual([])

      const q = await cli(['repair', `${url}#q`, '-o', join(dir, 'q.jsonl')])
      expect(q.code, q.stderr).toBe(0)
      expect(resultOf((await readLog(join(dir, 'q.jsonl'))).events as LogEvent[]).map((r) => r.error?.code)).toEqual(['TOOL_OUTCOME_UNKNOWN'])

      const r = await repairSession(store, 'p')
      expect(resultOf(r.closers).map((x) => x.message.content)).toEqual([[{ type: 'text', text: 'Rayleigh scattering.' }]])
      expect(verify((await readAll(store, 'p')).events).violations).toEqual([])
    } finally {
      await store.close()
    }
  }, 60_000)
})
