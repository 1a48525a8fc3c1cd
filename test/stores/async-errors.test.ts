/**
 * Issue 38.28: a store method that returns a promise reports bad input by rejecting it with a
 * coded error, never by throwing synchronously (a caller writing `store.decide(...).catch(...)`
 * or passing the promise on must see the error there). Every promise-returning entry point of the
 * memory and JSONL stores, with ids a caller can get wrong.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/errors.js'
import { jsonlStore } from '../../stores/jsonl/store.js'
import { memoryStore } from '../../stores/memory.js'

const dir = mkdtempSync(join(tmpdir(), 'turnlog-async-errors-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const BAD_IDS = ['../x', '', 'a/b', 'x'.repeat(300), 'a\u0000b']

type Store = ReturnType<typeof jsonlStore> | ReturnType<typeof memoryStore>
const calls: Array<[string, (s: Store, id: string) => Promise<unknown>]> = [
  ['create', (s, id) => s.create(id)],
  ['open read', (s, id) => s.open(id, 'read')],
  ['open write', (s, id) => s.open(id, 'write')],
  ['has', (s, id) => s.has(id)],
  ['decide', (s, id) => ('decide' in s ? (s as ReturnType<typeof jsonlStore>).decide(id, 'a1', { kind: 'approve' }) : Promise.reject(new TurnlogError('INVALID_ARGUMENT', 'no decide')))],
]

describe.each([
  ['jsonl', () => jsonlStore(dir)],
  ['memory', () => memoryStore()],
] as const)('%s store: bad ids reject, never throw synchronously (issue 38.28)', (_name, make) => {
  const store = make() as Store
  it.each(calls)('%s', async (_what, call) => {
    for (const id of BAD_IDS) {
      let p: Promise<unknown> | undefined
      expect(() => {
        p = call(store, id)
      }, `${JSON.stringify(id).slice(0, 40)}`).not.toThrow()
      const err = await p!.then(() => null, (e: unknown) => e)
      expect(TurnlogError.is(err), String(err)).toBe(true)
    }
  })
})
