/** writeLog: P3 through a file, never overwrites, never leaves temp files, refuses what readLog would. */
import { readdir, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TurnlogError, type LogEvent } from '../../events/index.js'
import { readLog, writeLog } from '../../replay/index.js'
import { arbEvents, HEADER, smallEvents } from './jsonl-helpers.js'
import { createAgent } from '../../agent/index.js'
import { scriptedModel } from '../../models/index.js'
import { verify } from '../../replay/index.js'

let dir: string
let n = 0
const fresh = () => join(dir, `w${n++}.jsonl`)
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-writelog-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function codeOf(p: Promise<unknown>): Promise<TurnlogError> {
  const e = await p.then(() => undefined, (x: unknown) => x)
  if (!TurnlogError.is(e)) throw new Error(`expected a TurnlogError, got ${String(e)}`)
  return e
}

describe('writeLog', () => {
  it('P3 writeLog → readLog is the identity, with checksums by default and without (100 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(arbEvents, fc.boolean(), async (events, checksums) => {
        const file = fresh()
        const w = await writeLog(file, { header: HEADER, events }, { checksums })
        const r = await readLog(file)
        expect(r.header).toEqual(checksums ? { ...HEADER, checksums: 'crc32' } : HEADER)
        expect(r.header).toEqual(w.header)
        expect(r.events).toEqual(events)
        expect(w.bytes).toBe(r.bytes)
        const text = await readFile(file, 'utf8')
        expect(text.endsWith('\n')).toBe(true)
        const withCrc = text.split('\n').slice(1, -1).filter((l) => /,"crc":"[0-9a-f]{8}"\}$/.test(l))
        expect(withCrc.length).toBe(checksums ? events.length : 0)
      }),
      { numRuns: 100 },
    )
  })

  it('P3 writeLog(path, agent): an agent is written with a header made from its session id and first event (issue 38.19)', async () => {
    let t = 1_700_000_000_000
    const agent = createAgent({ model: scriptedModel([{ text: 'hi' }]), sessionId: 'agent-log', clock: () => t++ })
    agent.followup('hello')
    await agent.whenIdle()
    const path = fresh()
    const r = await writeLog(path, agent)
    expect(r.header).toEqual({ type: 'session', format: 1, id: 'agent-log', createdAt: 1_700_000_000_000, checksums: 'crc32' })
    const back = await readLog(path)
    expect(back.header.id).toBe('agent-log')
    expect(back.events).toEqual(agent.events)
    expect(verify(back.events).ok).toBe(true)
    await agent.dispose()
  })

  it('defaults to checksums: the header says crc32', async () => {
    const file = fresh()
    await writeLog(file, { header: HEADER, events: smallEvents() })
    expect((await readLog(file)).header.checksums).toBe('crc32')
  })

  it('refuses to overwrite an existing file (FILE_EXISTS) and leaves it untouched; overwrite: true replaces it', async () => {
    const file = fresh()
    await writeFile(file, 'precious\n')
    const e = await codeOf(writeLog(file, { header: HEADER, events: smallEvents() }))
    expect(e.code).toBe('FILE_EXISTS')
    expect(e.file).toBe(file)
    expect(await readFile(file, 'utf8')).toBe('precious\n')
    await writeLog(file, { header: HEADER, events: smallEvents() }, { overwrite: true })
    expect((await readLog(file)).events).toEqual(smallEvents())
  })

  it('refuses invalid input before writing anything: INVALID_EVENT, BAD_SEQ, NOT_LOSSLESS, INVALID_HEADER', async () => {
    const ev = smallEvents()
    const cases: [string, { header: typeof HEADER; events: LogEvent[] }, string, string | undefined][] = [
      ['INVALID_EVENT', { header: HEADER, events: [ev[0]!, { ...ev[1]!, data: { message: 1 } } as unknown as LogEvent] }, 'data.message', undefined],
      ['BAD_SEQ', { header: HEADER, events: [ev[0]!, ev[2]!] }, 'seq', undefined],
      ['NOT_LOSSLESS', { header: HEADER, events: [{ seq: 0, time: 0, type: 'x/y', ignorable: true, data: { v: Number.NaN } } as unknown as LogEvent] }, 'data.v', undefined],
      ['INVALID_HEADER', { header: { ...HEADER, format: 2 as 1 }, events: [] }, 'format', undefined],
    ]
    for (const [code, log, field] of cases) {
      const file = fresh()
      const e = await codeOf(writeLog(file, log))
      expect(e.code).toBe(code)
      expect(e.field).toBe(field)
      expect(await readdir(dir)).not.toContain(file.split('/').pop())
    }
  })

  it('leaves no temp file behind, on success and on refusal', async () => {
    const file = fresh()
    await writeLog(file, { header: HEADER, events: smallEvents() })
    await codeOf(writeLog(file, { header: HEADER, events: smallEvents() }))
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([])
  })

  it('a missing directory is IO_ERROR naming the file', async () => {
    const file = join(dir, 'no-such-dir', 'x.jsonl')
    const e = await codeOf(writeLog(file, { header: HEADER, events: [] }))
    expect(e.code).toBe('IO_ERROR')
    expect(e.file).toBe(file)
  })
})
