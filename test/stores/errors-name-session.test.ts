/**
 * Issue 38.18: SESSION_NOT_FOUND and SESSION_EXISTS name the session in their message (a caller
 * juggling many sessions, or a CLI user running `copy`, is told which one), on every store.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/errors.js'
import { jsonlStore } from '../../stores/jsonl/store.js'
import { memoryStore } from '../../stores/memory.js'
import { cli } from '../cli/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'turnlog-errname-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function codeAndMessage(p: Promise<unknown>): Promise<[string, string]> {
  const err = await p.then(() => null, (e: unknown) => e)
  expect(TurnlogError.is(err), String(err)).toBe(true)
  return [(err as TurnlogError).code, (err as TurnlogError).message]
}

describe.each([
  ['jsonl', () => jsonlStore(dir)],
  ['memory', () => memoryStore()],
] as const)('%s store (issue 38.18)', (_n, make) => {
  it('SESSION_NOT_FOUND names the session', async () => {
    const [code, message] = await codeAndMessage(make().open('ghost-7', 'read'))
    expect(code).toBe('SESSION_NOT_FOUND')
    expect(message).toContain('"ghost-7"')
  })
  it('SESSION_EXISTS names the session', async () => {
    const s = make()
    await s.create('twice-3')
    const [code, message] = await codeAndMessage(s.create('twice-3'))
    expect(code).toBe('SESSION_EXISTS')
    expect(message).toContain('"twice-3"')
  })
})

describe('turnlog copy onto a log that exists (issue 38.18)', () => {
  it('names the session', async () => {
    const store = join(dir, 'copy-into')
    mkdirSync(store)
    const a = await cli(['copy', 'test/fixtures/valid/assistant-message.jsonl', join(store, 'v-assistant-message.jsonl')])
    expect(a.code, a.stderr).toBe(0)
    const b = await cli(['copy', 'test/fixtures/valid/assistant-message.jsonl', join(store, 'v-assistant-message.jsonl')])
    expect(b.code).toBe(2)
    expect(b.stderr).toMatch(/v-assistant-message/)
  })
})
