/**
 * Issue 10.10: a jsonl read handle decodes its file once. `open(id, 'read')` scans the file (it
 * must refuse corruption at open), and `events()` then serves what that scan decoded instead of
 * reading the file again (for logs up to READ_CACHE_BYTES). Contract "read handles are snapshots"
 * and P3 (a caller's mutation changes nothing: the events are frozen).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { nodeFs, type StoreFs } from '../../stores/jsonl/fs.js'
import { jsonlStore } from '../../stores/jsonl/store.js'
import { build, opening } from '../replay/replay-helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'turnlog-scan-once-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

describe('issue 10.10: jsonl read handles scan the file once (stores contract: snapshots)', () => {
  it('open(read) + events() twice opens and reads the log file once; the events are frozen copies of the log', async () => {
    const opens: string[] = []
    const fs: StoreFs = { ...nodeFs, open: (p, flags, mode) => (opens.push(`${p}:${flags}`), nodeFs.open(p, flags, mode)) }
    const store = jsonlStore(dir, { fs })
    await store.create('s')
    const w = await store.open('s', 'write')
    const events = build(opening())
    await w.append(events, { expectedSeq: 0 })
    await w.close()
    opens.length = 0
    const r = await store.open('s', 'read')
    const a = await collect(r.events())
    const b = await collect(r.events(2))
    expect(a).toEqual(events)
    expect(b).toEqual(events.slice(2))
    expect(opens.filter((o) => o.endsWith('s.jsonl:r'))).toHaveLength(1)
    expect(Object.isFrozen(a[0]) && Object.isFrozen(a[4]!.data)).toBe(true)
  })
})
