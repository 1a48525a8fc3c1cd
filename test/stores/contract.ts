/**
 * The store contract suite (docs/spec/api.md "Stores": one contract test suite runs against every store).
 * `storeContract(name, makeStore)` registers a `describe` block; `makeStore()` returns a fresh,
 * empty store (and optionally a cleanup). The sqlite and postgres stores reuse it unchanged.
 */
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError, type ErrorCode } from '../../events/errors.js'
import type { LogStore, LogWriter } from '../../stores/types.js'
import { arbValidLog } from '../../testing/arbitraries/index.js'

export interface StoreUnderTest {
  store: LogStore
  cleanup?: () => Promise<void> | void
}

export type MakeStore = () => Promise<StoreUnderTest> | StoreUnderTest

/** A fixed valid log (seq 0..n-1) to append in the example tests. */
export const SAMPLE: readonly LogEvent[] = fc.sample(arbValidLog({ minTurns: 3, maxTurns: 4 }), { seed: 42, numRuns: 1 })[0]!

export async function collect(it: AsyncIterable<LogEvent>): Promise<LogEvent[]> {
  const out: LogEvent[] = []
  for await (const e of it) out.push(e)
  return out
}

export async function expectCode(p: Promise<unknown> | (() => unknown), code: ErrorCode): Promise<TurnlogError> {
  let err: unknown
  try {
    await (typeof p === 'function' ? p() : p)
  } catch (e) {
    err = e
  }
  expect(err, `expected a ${code} error`).toBeDefined()
  if (!TurnlogError.is(err)) throw err
  expect(err.code, String(err)).toBe(code)
  return err
}

/** Plain JSON copies (what a decoder gives back). */
const plain = (es: readonly LogEvent[]) => JSON.parse(JSON.stringify(es)) as LogEvent[]

export const BAD_IDS: readonly unknown[] = [
  '../x', 'a/b', 'a\\b', '..', '.', '', '.hidden', 'a..b', '/abs', 'x'.repeat(129), 'a\0b', 'C:x', 'a b',
  'é', 'a/../../etc/passwd', 42, null, undefined,
]

export function storeContract(name: string, makeStore: MakeStore, opts: { numRuns?: number } = {}): void {
  describe(`store contract: ${name}`, () => {
    const cleanups: Array<() => Promise<void> | void> = []
    let n = 0
    const fresh = async (): Promise<LogStore> => {
      const s = await makeStore()
      if (s.cleanup) cleanups.push(s.cleanup)
      return s.store
    }
    const newId = () => `s${++n}-${Math.random().toString(36).slice(2, 8)}`
    afterAll(async () => {
      for (const c of cleanups) await c()
    })

    it('create / list / has / open read: an empty session with its header', async () => {
      const store = await fresh()
      expect(await store.list()).toEqual([])
      const h = await store.create('b-1', { createdAt: 1000 })
      await store.create('a-2', { parent: { session: 'b-1', seq: 3 }, inheritedEventCount: 4 })
      expect(h).toMatchObject({ type: 'session', format: 1, id: 'b-1', createdAt: 1000, checksums: 'crc32' })
      expect(await store.list()).toEqual(['a-2', 'b-1'])
      expect(await store.has('b-1')).toBe(true)
      expect(await store.has('zzz')).toBe(false)
      const r = await store.open('a-2', 'read')
      expect(r.header).toMatchObject({ id: 'a-2', parent: { session: 'b-1', seq: 3 }, inheritedEventCount: 4 })
      expect(r.length).toBe(0)
      expect(await collect(r.events())).toEqual([])
      await r.close()
    })

    it('SESSION_EXISTS on a second create; SESSION_NOT_FOUND on open of an unknown id', async () => {
      const store = await fresh()
      await store.create('x')
      await expectCode(store.create('x'), 'SESSION_EXISTS')
      await expectCode(store.open('nope', 'read'), 'SESSION_NOT_FOUND')
      await expectCode(store.open('nope', 'write'), 'SESSION_NOT_FOUND')
    })

    it('INVALID_SESSION_ID for ids that could escape the store (../x, a/b, .., absolute, NUL, too long)', async () => {
      const store = await fresh()
      for (const id of BAD_IDS) {
        await expectCode(store.create(id as string), 'INVALID_SESSION_ID')
        await expectCode(store.open(id as string, 'read'), 'INVALID_SESSION_ID')
        await expectCode(store.open(id as string, 'write'), 'INVALID_SESSION_ID')
        await expectCode(store.has(id as string), 'INVALID_SESSION_ID')
      }
      expect(await store.list()).toEqual([])
      // good ids: uuids, dots, dashes, underscores
      for (const id of ['0b8f6a52-7d0e-4c57-9a38-0f0a3f2f4c1e', 'a.b', 'A_b-1', 'x'.repeat(128)]) await store.create(id)
      expect((await store.list()).length).toBe(4)
    })

    it('append with expectedSeq; length, durableLength; read back; events(fromSeq)', async () => {
      const store = await fresh()
      const id = newId()
      await store.create(id)
      const w = await store.open(id, 'write')
      expect(w.length).toBe(0)
      expect(await w.append(SAMPLE.slice(0, 5), { expectedSeq: 0 })).toEqual({ firstSeq: 0, length: 5 })
      expect(await w.append(SAMPLE.slice(5), { expectedSeq: 5 })).toEqual({ firstSeq: 5, length: SAMPLE.length })
      expect(w.length).toBe(SAMPLE.length)
      expect(w.durableLength).toBe(SAMPLE.length)
      expect(await collect(w.events(3))).toEqual(plain(SAMPLE.slice(3)))
      const r = await store.open(id, 'read')
      expect(r.length).toBe(SAMPLE.length)
      expect(await collect(r.events())).toEqual(plain(SAMPLE))
      expect(await collect(r.events(SAMPLE.length - 2))).toEqual(plain(SAMPLE.slice(-2)))
      expect(await collect(r.events(SAMPLE.length + 5))).toEqual([])
      await r.close()
      await w.close()
    })

    it('SEQ_CONFLICT on a wrong expectedSeq: nothing written, never a duplicate seq', async () => {
      const store = await fresh()
      const id = newId()
      await store.create(id)
      const w = await store.open(id, 'write')
      await w.append(SAMPLE.slice(0, 3), { expectedSeq: 0 })
      const e1 = await expectCode(w.append(SAMPLE.slice(0, 3), { expectedSeq: 0 }), 'SEQ_CONFLICT')
      expect(e1).toMatchObject({ expectedSeq: 0, actualSeq: 3 })
      await expectCode(w.append(SAMPLE.slice(3, 4), { expectedSeq: 4 }), 'SEQ_CONFLICT')
      // a batch whose seqs do not run from expectedSeq: BAD_SEQ
      await expectCode(w.append([SAMPLE[4]!], { expectedSeq: 3 }), 'BAD_SEQ')
      await expectCode(w.append(SAMPLE.slice(3, 4) as LogEvent[], { expectedSeq: undefined as unknown as number }), 'INVALID_ARGUMENT')
      // the handle still works after refusals
      await w.append(SAMPLE.slice(3, 6), { expectedSeq: 3 })
      await w.close()
      const seqs = (await collect((await store.open(id, 'read')).events())).map((e) => e.seq)
      expect(seqs).toEqual([0, 1, 2, 3, 4, 5])
    })

    it('pipelined appends (not awaited) commit in order; each resolves when durable', async () => {
      const store = await fresh()
      const id = newId()
      await store.create(id)
      const w = await store.open(id, 'write')
      const ps: Promise<unknown>[] = []
      for (let i = 0; i < SAMPLE.length; i++) ps.push(w.append([SAMPLE[i]!], { expectedSeq: i }))
      expect(w.length).toBe(SAMPLE.length)
      const done = await Promise.all(ps)
      expect(done.map((d) => (d as { firstSeq: number }).firstSeq)).toEqual(SAMPLE.map((e) => e.seq))
      expect(w.durableLength).toBe(SAMPLE.length)
      await w.close()
      expect(await collect((await store.open(id, 'read')).events())).toEqual(plain(SAMPLE))
    })

    it('trusted appends (events a Session committed) skip re-validation but not the seq checks', async () => {
      const store = await fresh()
      const id = newId()
      await store.create(id)
      const w = await store.open(id, 'write')
      await w.append(SAMPLE.slice(0, 4), { expectedSeq: 0, trusted: true })
      await expectCode(w.append(SAMPLE.slice(0, 1), { expectedSeq: 0, trusted: true }), 'SEQ_CONFLICT')
      await expectCode(w.append(SAMPLE.slice(5, 6), { expectedSeq: 4, trusted: true }), 'BAD_SEQ')
      await w.close()
      expect(await collect((await store.open(id, 'read')).events())).toEqual(plain(SAMPLE.slice(0, 4)))
    })

    it('refuses an invalid event (INVALID_EVENT) and writes nothing', async () => {
      const store = await fresh()
      const id = newId()
      await store.create(id)
      const w = await store.open(id, 'write')
      const bad = { ...SAMPLE[0]!, data: { nope: true } } as unknown as LogEvent
      await expectCode(w.append([bad], { expectedSeq: 0 }), 'INVALID_EVENT')
      expect(w.length).toBe(0)
      await w.append([SAMPLE[0]!], { expectedSeq: 0 })
      await w.close()
      expect((await store.open(id, 'read')).length).toBe(1)
    })

    it('SESSION_OWNED: a second writer in this process is refused; after close the next owner has a larger fencing token', async () => {
      const store = await fresh()
      const id = newId()
      await store.create(id)
      const w1 = await store.open(id, 'write')
      await expectCode(store.open(id, 'write'), 'SESSION_OWNED')
      // concurrent opens: exactly one wins
      const race = await Promise.allSettled([store.open(id, 'write'), store.open(id, 'write')])
      expect(race.every((r) => r.status === 'rejected')).toBe(true)
      // readers are not writers
      const r = await store.open(id, 'read')
      await r.close()
      await w1.append(SAMPLE.slice(0, 2), { expectedSeq: 0 })
      await w1.close()
      await expectCode(w1.append(SAMPLE.slice(2, 3), { expectedSeq: 2 }), 'SESSION_CLOSED')
      const [a, b] = await Promise.allSettled([store.open(id, 'write'), store.open(id, 'write')])
      const won = [a, b].filter((x) => x.status === 'fulfilled') as PromiseFulfilledResult<LogWriter>[]
      const lost = [a, b].filter((x) => x.status === 'rejected') as PromiseRejectedResult[]
      expect(won.length).toBe(1)
      expect(lost.length).toBe(1)
      expect(TurnlogError.is(lost[0]!.reason, 'SESSION_OWNED')).toBe(true)
      const w2 = won[0]!.value
      expect(w2.token).toBeGreaterThan(w1.token)
      expect(w2.length).toBe(2)
      await w2.close()
    })

    it('a read handle is a snapshot: appends after open are not in it', async () => {
      const store = await fresh()
      const id = newId()
      await store.create(id)
      const w = await store.open(id, 'write')
      await w.append(SAMPLE.slice(0, 2), { expectedSeq: 0 })
      const r = await store.open(id, 'read')
      await w.append(SAMPLE.slice(2, 4), { expectedSeq: 2 })
      expect(r.length).toBe(2)
      expect((await collect(r.events())).length).toBe(2)
      await w.close()
    })

    it('P3: any valid log round-trips through the store (random batch splits)', async () => {
      const store = await fresh()
      await fc.assert(
        fc.asyncProperty(arbValidLog(), fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 20 }), async (log, cuts) => {
          const id = newId()
          await store.create(id, { createdAt: 5 })
          const w = await store.open(id, 'write')
          let at = 0
          let k = 0
          const ps: Promise<unknown>[] = []
          while (at < log.length) {
            const size = cuts[k++ % cuts.length]!
            const batch = log.slice(at, at + size)
            ps.push(w.append(batch, { expectedSeq: at }))
            at += batch.length
            if (k % 3 === 0) await Promise.all(ps.splice(0))
          }
          await Promise.all(ps)
          await w.close()
          const r = await store.open(id, 'read')
          expect(r.length).toBe(log.length)
          expect(await collect(r.events())).toEqual(plain(log))
          expect(r.header).toMatchObject({ id, createdAt: 5 })
        }),
        { numRuns: opts.numRuns ?? 60 },
      )
    })
  })
}
