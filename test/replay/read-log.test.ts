/** readLog / readLogStream: the reference example, one test per error code with its exact place. */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeEvent, encodeHeader, TurnlogError, type ErrorCode, type LogEvent } from '../../events/index.js'
import { isLogHeader, readLog, readLogStream, type ReadLogOptions } from '../../replay/index.js'
import { HEADER, lineOffset, logBytes, logLines, smallEvents } from './jsonl-helpers.js'

const EXAMPLE = new URL('../../examples/weather.jsonl', import.meta.url).pathname

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-readlog-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Reads `bytes` from a real file and expects a TurnlogError; returns it. */
async function failure(bytes: Uint8Array | string, opts: ReadLogOptions = {}): Promise<TurnlogError> {
  const file = join(dir, `log-${Math.random().toString(36).slice(2)}.jsonl`)
  await writeFile(file, bytes)
  try {
    await readLog(file, opts)
  } catch (e) {
    if (!TurnlogError.is(e)) throw e
    expect(e.file).toBe(file)
    // the same defect from bytes, with the same place
    const again = await readLog(typeof bytes === 'string' ? Buffer.from(bytes) : bytes, { ...opts, chunkBytes: 7 })
      .then(() => undefined, (x: unknown) => x as TurnlogError)
    expect(again?.code).toBe(e.code)
    expect(again?.line).toBe(e.line)
    expect(again?.offset).toBe(e.offset)
    return e
  }
  throw new Error('readLog resolved')
}

function expectPlace(e: TurnlogError, code: ErrorCode, place: { line?: number; seq?: number; field?: string; offset?: number }) {
  expect(e.code).toBe(code)
  expect({ line: e.line, seq: e.seq, field: e.field }).toEqual({ line: place.line, seq: place.seq, field: place.field })
  if (place.offset !== undefined) expect(e.offset).toBe(place.offset)
  expect(e.message).toContain(code)
}

const lines = (checksums: boolean) => logLines(smallEvents(), checksums)
const join_ = (ls: string[]) => ls.map((l) => `${l}\n`).join('')

describe('readLog: valid logs', () => {
  it('reads the design example (example.jsonl): header and every event, seq === index', async () => {
    const r = await readLog(EXAMPLE)
    expect(r.file).toBe(EXAMPLE)
    expect(r.header).toEqual({ type: 'session', format: 1, id: 'example-weather', createdAt: 1764450000000 })
    const src = readFileSync(EXAMPLE, 'utf8').split('\n').filter(Boolean)
    expect(r.events.length).toBe(src.length - 1)
    expect(r.events).toEqual(src.slice(1).map((l) => JSON.parse(l)))
    r.events.forEach((e, i) => expect(e.seq).toBe(i))
    expect(r.bytes).toBe(readFileSync(EXAMPLE).length)
  })

  it('reports progress per chunk, ending at the total', async () => {
    const seen: [number, number][] = []
    const bytes = readFileSync(EXAMPLE)
    await readLog(EXAMPLE, { chunkBytes: 1000, onProgress: (a, b) => seen.push([a, b]) })
    expect(seen.length).toBe(Math.ceil(bytes.length / 1000))
    expect(seen.at(-1)).toEqual([bytes.length, bytes.length])
    seen.forEach(([a], i) => i && expect(a).toBeGreaterThan(seen[i - 1]![0]))
  })

  it('readLogStream yields the header first, then every event, and returns a summary', async () => {
    const items = []
    const it = readLogStream(EXAMPLE, { chunkBytes: 512 })
    let r = await it.next()
    while (!r.done) {
      items.push(r.value)
      r = await it.next()
    }
    expect(isLogHeader(items[0]!)).toBe(true)
    const all = await readLog(EXAMPLE)
    expect(items.slice(1)).toEqual(all.events)
    expect(items.slice(1).every((x) => !isLogHeader(x))).toBe(true)
    expect(r.value).toMatchObject({ eventCount: all.events.length, file: EXAMPLE, bytes: all.bytes })
  })

  it('readLogStream throws the coded error after yielding the events before the defect', async () => {
    const ls = lines(true)
    ls[3] = ls[3]!.replace('"step":1', '"step":0') // crc mismatch at line 4 (seq 2), mid-file
    const got: unknown[] = []
    const err = await (async () => {
      for await (const x of readLogStream(Buffer.from(`${join_(ls)}${encodeEvent(smallEvents()[2]!, { checksums: true })}\n`))) got.push(x)
    })().then(() => undefined, (e: unknown) => e)
    expect(TurnlogError.is(err, 'CHECKSUM_MISMATCH')).toBe(true)
    expect(got.length).toBe(3) // header + seq 0, 1
  })

  it('a 100 MB single event reads (default max line 256 MiB)', async () => {
    const text = 'x'.repeat(100 * 1024 * 1024)
    const e = {
      seq: 0, time: 1, type: 'user/message', surfaceOp: 'append',
      data: { message: { id: 'm', role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } } },
    } as unknown as LogEvent
    const file = join(dir, 'big.jsonl')
    await writeFile(file, `${encodeHeader({ ...HEADER, checksums: 'crc32' })}\n${encodeEvent(e, { checksums: true })}\n`)
    const r = await readLog(file)
    expect(r.events.length).toBe(1)
    expect((r.events[0]!.data as { message: { content: { text: string }[] } }).message.content[0]!.text.length).toBe(text.length)
  }, 60_000)

  it('an ignorable unknown event type is kept, not refused', async () => {
    const ls = lines(false)
    ls.push(JSON.stringify({ seq: 3, time: 4, type: 'plugin/x', data: { a: 1 }, ignorable: true }))
    const r = await readLog(Buffer.from(join_(ls)))
    expect(r.events[3]).toEqual({ seq: 3, time: 4, type: 'plugin/x', data: { a: 1 }, ignorable: true })
  })

  it('\\r\\n line endings (a CRLF conversion) read the same records, crcs included', async () => {
    for (const checksums of [true, false]) {
      const crlf = Buffer.from(logBytes(smallEvents(), { checksums }).toString('utf8').replaceAll('\n', '\r\n'))
      const r = await readLog(crlf, { chunkBytes: 5 })
      expect(r.events).toEqual(smallEvents())
    }
  })

  it('a missing file is IO_ERROR naming the file', async () => {
    const file = join(dir, 'nope.jsonl')
    const e = await readLog(file).then(() => undefined, (x: unknown) => x as TurnlogError)
    expect(TurnlogError.is(e, 'IO_ERROR')).toBe(true)
    expect(e!.file).toBe(file)
  })
})

describe('readLog: every defect is a coded error naming file, line, seq and field', () => {
  it('EMPTY_LOG: an empty file', async () => {
    expectPlace(await failure(''), 'EMPTY_LOG', {})
  })

  it('MISSING_HEADER: line 1 is an event', async () => {
    const ls = lines(false).slice(1)
    expectPlace(await failure(join_(ls)), 'MISSING_HEADER', { line: 1, field: 'type', offset: 0 })
  })

  it('MISSING_HEADER: line 1 is not JSON', async () => {
    expectPlace(await failure('hello\n'), 'MISSING_HEADER', { line: 1, field: undefined })
  })

  it('INVALID_HEADER: names the field (id, createdAt, an unknown member)', async () => {
    const ls = lines(false)
    ls[0] = JSON.stringify({ ...HEADER, id: '' })
    expectPlace(await failure(join_(ls)), 'INVALID_HEADER', { line: 1, field: 'id' })
    ls[0] = JSON.stringify({ ...HEADER, createdAt: 'yesterday' })
    expectPlace(await failure(join_(ls)), 'INVALID_HEADER', { line: 1, field: 'createdAt' })
    ls[0] = JSON.stringify({ ...HEADER, parent: { session: 'p', seq: -1 } })
    expectPlace(await failure(join_(ls)), 'INVALID_HEADER', { line: 1, field: 'parent.seq' })
  })

  it('FUTURE_FORMAT: format 2', async () => {
    const ls = lines(false)
    ls[0] = JSON.stringify({ ...HEADER, format: 2, somethingNew: true })
    const e = await failure(join_(ls))
    expectPlace(e, 'FUTURE_FORMAT', { line: 1, field: 'format' })
  })

  it('MALFORMED_LINE: a non-JSON line mid-file (line 3, seq 1)', async () => {
    const ls = lines(false)
    ls[2] = ls[2]!.slice(0, 30)
    const bytes = join_(ls)
    const e = await failure(bytes)
    expectPlace(e, 'MALFORMED_LINE', { line: 3, seq: 1, offset: lineOffset(Buffer.from(bytes), 3) })
    expect(e.repairable).toBeUndefined()
  })

  it('TORN_TAIL: the last line has no newline (repairable, line 4, seq 2)', async () => {
    const full = Buffer.from(join_(lines(true)))
    const cut = full.subarray(0, full.length - 10)
    const e = await failure(cut)
    expectPlace(e, 'TORN_TAIL', { line: 4, seq: 2, offset: lineOffset(full, 4) })
    expect(e.repairable).toBe(true)
  })

  it('TORN_TAIL: a terminated last line that fails its checksum (garbled tail)', async () => {
    const ls = lines(true)
    ls[3] = ls[3]!.replace('"step":1', '"step":2')
    const e = await failure(join_(ls))
    expectPlace(e, 'TORN_TAIL', { line: 4, seq: 2 })
    expect(e.repairable).toBe(true)
    expect(TurnlogError.is(e.cause, 'CHECKSUM_MISMATCH')).toBe(true)
  })

  it('TORN_TAIL: a zero-filled tail (what a crash can leave)', async () => {
    const full = Buffer.from(join_(lines(true)))
    const e = await failure(Buffer.concat([full, Buffer.alloc(300)]))
    expectPlace(e, 'TORN_TAIL', { line: 5, seq: 3, offset: full.length })
  })

  it('tolerateTornTail returns the complete records and { torn: { line, offset, bytes } }', async () => {
    const full = Buffer.from(join_(lines(true)))
    const off = lineOffset(full, 4)
    for (const cut of [off + 5, full.length - 1]) {
      const r = await readLog(full.subarray(0, cut), { tolerateTornTail: true })
      expect(r.events).toEqual(smallEvents().slice(0, 2))
      expect(r.torn).toMatchObject({ line: 4, offset: off, reason: 'unterminated' })
      expect(Buffer.from(r.torn!.bytes).equals(full.subarray(off, cut))).toBe(true)
      expect(r.torn!.error.code).toBe('TORN_TAIL')
      // only the newline missing: the complete record is handed over for repair, not in events
      if (cut === full.length - 1) expect(r.torn!.record).toEqual(smallEvents()[2])
      else expect(r.torn!.record).toBeUndefined()
    }
  })

  it('CHECKSUM_MISMATCH: a changed byte mid-file (line 3, seq 1, field crc)', async () => {
    const ls = lines(true)
    ls[2] = ls[2]!.replace('héllo', 'hallo')
    expectPlace(await failure(join_(ls)), 'CHECKSUM_MISMATCH', { line: 3, seq: 1, field: 'crc' })
  })

  it('CHECKSUM_MISMATCH: a record without crc when the header says crc32', async () => {
    const ls = lines(true)
    ls[2] = JSON.stringify(smallEvents()[1])
    expectPlace(await failure(join_(ls)), 'CHECKSUM_MISMATCH', { line: 3, seq: 1, field: 'crc' })
  })

  it('BAD_SEQ: a duplicate seq (line 4 repeats seq 1)', async () => {
    const ev = smallEvents()
    const ls = logLines([ev[0]!, ev[1]!, { ...ev[2]!, seq: 1 } as LogEvent], true)
    const e = await failure(join_(ls))
    expectPlace(e, 'BAD_SEQ', { line: 4, seq: 1, field: 'seq' })
    expect({ expectedSeq: e.expectedSeq, actualSeq: e.actualSeq }).toEqual({ expectedSeq: 2, actualSeq: 1 })
  })

  it('BAD_SEQ: out of order (line 2 has seq 5)', async () => {
    const ev = smallEvents()
    const e = await failure(join_(logLines([{ ...ev[0]!, seq: 5 } as LogEvent, ev[1]!], false)))
    expectPlace(e, 'BAD_SEQ', { line: 2, seq: 5, field: 'seq' })
    expect({ expectedSeq: e.expectedSeq, actualSeq: e.actualSeq }).toEqual({ expectedSeq: 0, actualSeq: 5 })
  })

  it('INVALID_UTF8: invalid bytes in a record (its crc matches the bytes)', async () => {
    const ls = lines(true)
    const before = Buffer.from(join_(ls.slice(0, 2)))
    const body = Buffer.concat([Buffer.from('{"seq":1,"time":2,"type":"turn/start","data":{"turn":1,"x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}')])
    const crc = crc32(body).toString(16).padStart(8, '0')
    const rec = Buffer.concat([body.subarray(0, body.length - 1), Buffer.from(`,"crc":"${crc}"}\n`)])
    const after = Buffer.from(`${ls[3]}\n`)
    const e = await failure(Buffer.concat([before, rec, after]))
    expectPlace(e, 'INVALID_UTF8', { line: 3, seq: 1 })
  })

  it('INVALID_UTF8: a lone surrogate escape names the field', async () => {
    const ls = lines(false)
    ls[2] = ls[2]!.replace('héllo', 'h\\ud800llo')
    expectPlace(await failure(join_(ls)), 'INVALID_UTF8', { line: 3, seq: 1, field: 'data.message.content[0].text' })
  })

  it('RECORD_TOO_LARGE: a line over maxLineBytes (line 3, seq 1), also when it arrives in pieces', async () => {
    const bytes = join_(lines(true))
    expectPlace(await failure(bytes, { maxLineBytes: 100 }), 'RECORD_TOO_LARGE', { line: 3, seq: 1 })
    const e = await readLog(Buffer.from(bytes), { maxLineBytes: 100, chunkBytes: 3 }).catch((x: TurnlogError) => x)
    expectPlace(e as TurnlogError, 'RECORD_TOO_LARGE', { line: 3, seq: 1 })
  })

  it('UNKNOWN_EVENT_TYPE: a type nobody registered, not ignorable (field type)', async () => {
    const ls = lines(true)
    ls[2] = encodeEvent({ seq: 1, time: 2, type: 'plugin/x', data: {} } as unknown as LogEvent, { checksums: true })
    const e = await failure(join_(ls))
    expectPlace(e, 'UNKNOWN_EVENT_TYPE', { line: 3, seq: 1, field: 'type' })
    expect(e.eventType).toBe('plugin/x')
  })

  it('INVALID_EVENT: a schema failure names the field path', async () => {
    const ev = smallEvents()
    const bad = JSON.parse(JSON.stringify(ev[1])) as { data: { message: { role: string } } }
    bad.data.message.role = 'bot'
    const e = await failure(join_(logLines([ev[0]!, bad as unknown as LogEvent, ev[2]!], true)))
    expectPlace(e, 'INVALID_EVENT', { line: 3, seq: 1, field: 'data.message.role' })
  })

  it('INVALID_EVENT: an envelope failure (unknown member) names it', async () => {
    const ev = smallEvents()
    const e = await failure(join_(logLines([ev[0]!, { ...ev[1]!, extra: 1 } as unknown as LogEvent], false)))
    expect(e.code).toBe('INVALID_EVENT')
    expect(e.line).toBe(3)
    expect(e.seq).toBe(1)
  })
})

describe('readLog: torn header', () => {
  it('an unterminated, incomplete header is TORN_TAIL but not repairable (no session to repair)', async () => {
    const e = await failure(encodeHeader(HEADER).slice(0, 20))
    expectPlace(e, 'TORN_TAIL', { line: 1, offset: 0 })
    expect(e.repairable).toBe(false)
  })
  it('a complete header without its newline is TORN_TAIL repairable; tolerated, it reads with no events', async () => {
    const e = await failure(encodeHeader(HEADER))
    expect(e.repairable).toBe(true)
    const r = await readLog(Buffer.from(encodeHeader(HEADER)), { tolerateTornTail: true })
    expect(r.header).toEqual(HEADER)
    expect(r.events).toEqual([])
    expect(r.torn).toMatchObject({ line: 1, offset: 0, header: HEADER })
  })
  it('a log of just the header reads with no events', async () => {
    const r = await readLog(logBytes([]))
    expect(r).toMatchObject({ header: HEADER, events: [] })
  })
})
