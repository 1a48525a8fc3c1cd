/**
 * `turnlog inspect`'s live tail on turnlog/http's `SessionTail`: a page's EventSource that
 * reconnects with `Last-Event-ID` gets only what it has not seen (issue 22: `?from=` used to win and
 * everything since page load was sent again), and a growing file reaches every page once.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { resumeFrom, startInspector, type Inspector } from '../../cli/inspect-server.js'
import { tempDir } from '../http/helpers.js'

const FIXTURE = new URL('../fixtures/valid/example.jsonl', import.meta.url)
let tmp: ReturnType<typeof tempDir> | null = null
let inspector: Inspector | null = null
afterEach(async () => {
  await inspector?.close()
  inspector = null
  tmp?.remove()
  tmp = null
})

/** Reads SSE events from /events until `n` events arrived; returns their ids and seqs. */
async function readEvents(url: string, headers: Record<string, string>, n: number): Promise<{ ids: string[]; seqs: number[] }> {
  const ac = new AbortController()
  const res = await fetch(url, { headers, signal: ac.signal })
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let buf = ''
  const ids: string[] = []
  const seqs: number[] = []
  while (seqs.length < n) {
    const { done, value } = await reader.read()
    if (done) break
    buf += dec.decode(value, { stream: true })
    let i: number
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i)
      buf = buf.slice(i + 2)
      const id = /^id: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (id !== undefined && data !== undefined) {
        ids.push(id)
        for (const e of JSON.parse(data) as Array<{ seq: number }>) seqs.push(e.seq)
      }
    }
  }
  ac.abort()
  return { ids, seqs }
}

describe('turnlog inspect: the live tail resumes after Last-Event-ID', () => {
  it('resumeFrom: Last-Event-ID (the last seq seen) wins over ?from=; junk falls back', () => {
    expect(resumeFrom('0', '41')).toBe(42)
    expect(resumeFrom('7', undefined)).toBe(7)
    expect(resumeFrom(null, 'x')).toBe(0)
    expect(resumeFrom('-3', undefined)).toBe(0)
  })

  it('a reconnect with Last-Event-ID gets only the events after it, and appended events reach it once', async () => {
    tmp = tempDir()
    const file = join(tmp.dir, 'live.jsonl')
    const lines = readFileSync(FIXTURE, 'utf8').trim().split('\n')
    // the header and the first 10 events now, the rest later
    writeFileSync(file, lines.slice(0, 11).join('\n') + '\n')
    inspector = await startInspector({ file, port: 0, pollMs: 10 })
    const all = await readEvents(`${inspector.url}events?from=0`, {}, 10)
    expect(all.seqs).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    appendFileSync(file, lines.slice(11).join('\n') + '\n')
    const total = lines.length - 1
    const resumed = await readEvents(`${inspector.url}events?from=0`, { 'last-event-id': '9' }, total - 10)
    expect(resumed.seqs).toEqual(Array.from({ length: total - 10 }, (_, i) => i + 10))
  })
})
