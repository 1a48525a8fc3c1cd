/**
 * `turnlog export LOG --format chrome-trace --children` (docs/spec/lifecycle.md §10, L19; issue 25 item 1): a
 * parent and its child sessions as one Trace Event Format document: each session a process of its
 * own (named for its spawning call, sorted after its parent), one time base, the child's turn
 * inside the parent's call bar, and a flow arrow from that call's bar to the child's first turn.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import { scriptedModel } from '../../models/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { cli, tempDir } from './helpers.js'

const tmp = tempDir()
const CHILD = 'p1.c1-1-c1'
const LOG = join(tmp.dir, 'p1.jsonl')

beforeAll(async () => {
  let t = 1_764_450_000_000
  const clock = () => t++
  const research = defineSubagent({
    name: 'research', description: 'looks up', parameters: z.object({ q: z.string() }),
    agent: () => ({ model: scriptedModel([{ text: 'Rayleigh.' }], { info: { name: 'm-child' } }), system: 'child', clock }),
  })
  const parent = createAgent({
    model: scriptedModel([{ toolCalls: [{ name: 'research', args: { q: 'sky?' }, id: 'c1' }] }, { text: 'done' }], { info: { name: 'm-parent' } }),
    tools: [research], store: jsonlStore(tmp.dir), sessionId: 'p1', clock,
  })
  parent.followup('go')
  await parent.whenIdle()
  await parent.dispose()
})
afterAll(() => tmp.cleanup())

type Ev = { name: string; ph: string; pid: number; tid: number; ts?: number; dur?: number; cat?: string; id?: number; bp?: string; args?: any }

async function trace(args: string[] = []): Promise<{ events: Ev[]; otherData: any; stderr: string; code: number }> {
  const r = await cli(['export', LOG, '--format', 'chrome-trace', ...args])
  const doc = r.code === 0 ? JSON.parse(r.stdout) : { traceEvents: [], otherData: null }
  return { events: doc.traceEvents, otherData: doc.otherData, stderr: r.stderr, code: r.code }
}

describe('turnlog export --format chrome-trace --children', () => {
  it('L19: the child is a process of its own, named for its call and sorted after the parent; its turn lies inside the call\'s bar', async () => {
    const { events, otherData, stderr, code } = await trace(['--children'])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const meta = (name: string) => events.filter((e) => e.ph === 'M' && e.name === name).map((e) => [e.pid, e.args])
    expect(meta('process_name')).toEqual([[1, { name: 'turnlog session p1' }], [2, { name: `child ${CHILD} · call c1 of p1` }]])
    expect(meta('process_sort_index')).toEqual([[1, { sort_index: 1 }], [2, { sort_index: 2 }]])
    expect(otherData.sessions).toEqual([{ pid: 1, sessionId: 'p1' }, { pid: 2, sessionId: CHILD, parent: 'p1', callId: 'c1' }])
    const call = events.find((e) => e.ph === 'X' && e.pid === 1 && e.cat === 'tool' && e.name === 'research c1')!
    const childTurn = events.find((e) => e.ph === 'X' && e.pid === 2 && e.cat === 'turn')!
    expect(childTurn.tid).toBe(1)
    expect(childTurn.ts!).toBeGreaterThan(call.ts!)
    expect(childTurn.ts! + childTurn.dur!).toBeLessThan(call.ts! + call.dur!)
    // the child's own threads and bars: its model stream is there too, on its pid
    expect(events.some((e) => e.ph === 'X' && e.pid === 2 && e.cat === 'model')).toBe(true)
    // one time base: µs since the family's earliest event (the parent's first, whose clock the child shares)
    const first = JSON.parse(readFileSync(LOG, 'utf8').split('\n')[1]!) as { time: number }
    expect(otherData.startTime).toBe(first.time)
    expect(Math.min(...events.filter((e) => e.ts !== undefined).map((e) => e.ts!))).toBeGreaterThanOrEqual(0)
  })

  it('L19: a flow arrow runs from the spawning call\'s bar (at child/spawned) to the child\'s first turn', async () => {
    const { events } = await trace(['--children'])
    const start = events.filter((e) => e.ph === 's')
    const end = events.filter((e) => e.ph === 'f')
    expect(start).toHaveLength(1)
    expect(end).toHaveLength(1)
    const call = events.find((e) => e.ph === 'X' && e.pid === 1 && e.cat === 'tool')!
    const childTurn = events.find((e) => e.ph === 'X' && e.pid === 2 && e.cat === 'turn')!
    expect(start[0]).toMatchObject({ cat: 'child', id: end[0]!.id, pid: 1, tid: call.tid, args: { child: CHILD, callId: 'c1' } })
    expect(start[0]!.ts!).toBeGreaterThanOrEqual(call.ts!)
    expect(start[0]!.ts!).toBeLessThanOrEqual(call.ts! + call.dur!)
    expect(end[0]).toMatchObject({ cat: 'child', bp: 'e', pid: 2, tid: 1, ts: childTurn.ts })
  })

  it('without --children the parent alone (pid 1); a child whose log is missing is a warning and left out', async () => {
    const alone = await trace()
    expect(new Set(alone.events.map((e) => e.pid))).toEqual(new Set([1]))
    expect(alone.events.some((e) => e.ph === 's' || e.ph === 'f')).toBe(false)
    const childFile = join(tmp.dir, `${CHILD}.jsonl`)
    const kept = readFileSync(childFile)
    rmSync(childFile)
    try {
      const r = await trace(['--children'])
      expect(r.code).toBe(0)
      expect(r.stderr).toMatch(new RegExp(`warning: child session ${CHILD.replace(/\./g, '\\.')} \\(call c1\\) has no log beside`))
      expect(new Set(r.events.map((e) => e.pid))).toEqual(new Set([1]))
    } finally {
      writeFileSync(childFile, kept)
    }
  })
})
