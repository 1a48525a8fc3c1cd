/** The openAgent scenario every store passes (test/replay/open-agent.test.ts, test/stores/postgres/open-agent.test.ts). */
import { expect } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { TurnlogError } from '../../events/errors.js'
import { scriptedModel } from '../../models/index.js'
import { openAgent } from '../../replay/index.js'
import { verify } from '../../replay/verify.js'
import type { LogStore } from '../../stores/types.js'

export async function stored(store: LogStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events()) out.push(e)
  await r.close()
  return out
}

export const opts = (store: LogStore) => ({ store, sessionId: 'chat', model: scriptedModel(() => ({ text: 'ok' })), system: 'sys' })
export const turnStarts = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'turn/start').map((e) => (e.data as { turn: number }).turn)

/** The scenario every store must pass. */
export async function openOrCreate(store: LogStore): Promise<void> {
  expect(await store.has('chat')).toBe(false)
  const a = await openAgent(opts(store))
  expect(await store.has('chat')).toBe(true)
  expect(a.events).toEqual([])
  a.followup('hello')
  // the durability point: once flush() resolves the followup is in the store
  await a.flush()
  expect((await stored(store, 'chat')).some((e) => e.type === 'agent/inbox/spliced')).toBe(true)
  await a.whenIdle()
  await a.flush()
  const first = [...a.events]
  await a.dispose()

  const b = await openAgent(opts(store))
  expect(b.events).toEqual(first)
  b.followup('again')
  await b.whenIdle()
  await b.flush()
  expect(turnStarts(b.events)).toEqual([1, 2])
  expect(await stored(store, 'chat')).toEqual(b.events)
  expect(verify(b.events).ok).toBe(true)

  // b holds the session: a racing opener is refused, and changes nothing
  const before = await stored(store, 'chat')
  await expect(openAgent(opts(store))).rejects.toSatisfy((e: unknown) => TurnlogError.is(e, 'SESSION_OWNED'))
  expect(await stored(store, 'chat')).toEqual(before)
  await b.dispose()

  // two openers at once on a new id: exactly one wins, the other is SESSION_OWNED (never SESSION_EXISTS)
  const race = await Promise.allSettled([openAgent({ ...opts(store), sessionId: 'race' }), openAgent({ ...opts(store), sessionId: 'race' })])
  const won = race.filter((r): r is PromiseFulfilledResult<Awaited<ReturnType<typeof openAgent>>> => r.status === 'fulfilled')
  const lost = race.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
  expect(won).toHaveLength(1)
  expect(lost.map((r) => (r.reason as TurnlogError).code)).toEqual(['SESSION_OWNED'])
  await won[0]!.value.dispose()
}

