/**
 * `store.answer` while an agent owns the session (docs/spec/lifecycle.md §11: answers travel the
 * decisions' side channel): a JSONL answer from another store instance (another process's view of
 * the same directory) is claimed in `<id>.decisions/`, the running owner picks it up and logs it
 * once, and the body's next round runs once (R11). The first answer wins across the owner and
 * other processes (INPUT_ANSWERED); an invalid one claims nothing.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import { scriptedModel } from '../../models/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { valid } from '../agent/contain-helpers.js'
import { counterIds } from '../agent/helpers.js'
import { dataOf, roundsTool } from './helpers.js'

const dirs: string[] = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

const first = [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }] }]

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5))
}

describe('store.answer through the JSONL side channel (docs/spec/lifecycle.md §11)', () => {
  it('R11 L21: another process answers while the owner runs: the owner logs it once and the next round runs once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-answer-ch-'))
    dirs.push(dir)
    const asking = roundsTool({ rounds: 2 })
    const a = createAgent({ model: scriptedModel([...first, { text: 'shipped' }]), tools: [asking.tool], store: jsonlStore(dir), sessionId: 's1', ids: counterIds('a') })
    a.followup('ship it')
    expect(await a.whenSettled()).toBe('parked')
    const requestId = a.inputs()[0]!.requestId
    await a.flush()
    const other = jsonlStore(dir)
    // refused answers claim nothing
    await expect(other.answer('s1', requestId, { action: 'accept', responses: { address: { zip: '1' } } })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'responses.address/city' })
    expect(await readdir(join(dir, 's1.decisions')).catch(() => [])).toEqual([])
    const r = await other.answer('s1', requestId, { action: 'accept', responses: { address: { city: 'Gent' } } }, { by: { kind: 'user', id: 'bo' }, waitMs: 10_000 })
    expect(r).toMatchObject({ callId: 'c1', round: 1, by: { kind: 'user', id: 'bo' } })
    expect(r.seq).not.toBeNull()
    await until(() => asking.runs.length === 2)
    expect(await a.whenSettled()).toBe('parked')
    expect(asking.runs.map((x) => x.round)).toEqual([0, 1])
    expect(asking.runs[1]!.input).toMatchObject({ action: 'accept', responses: { address: { city: 'Gent' } }, by: { kind: 'user', id: 'bo' } })
    // the first answer won: a second, from anywhere, is refused
    await expect(other.answer('s1', requestId, { action: 'decline' })).rejects.toMatchObject({ code: 'INPUT_ANSWERED' })
    await expect(a.answer(requestId, { action: 'decline' })).rejects.toMatchObject({ code: 'INPUT_ANSWERED' })
    // the owner's own answer of round 2 is claimed too: another process's later answer loses
    const second = a.inputs()[0]!.requestId
    await a.answer(second, { action: 'accept', responses: { speed: 'fast' } })
    await expect(other.answer('s1', second, { action: 'decline' })).rejects.toMatchObject({ code: 'INPUT_ANSWERED' })
    await a.whenIdle()
    expect(dataOf(a.events, 'tool/input-provided').map((d) => d.round)).toEqual([1, 2])
    expect(asking.runs.map((x) => x.round)).toEqual([0, 1, 2])
    valid(a.events)
    await a.dispose()
  })
})
