import { describe, expect, it } from 'vitest'
import type { TurnlogAgent } from '../../agent/agent.js'
import { runDemoSession } from '../../cli/demo-session.js'
import { scriptedModel } from '../../models/index.js'
import { repair } from '../../replay/repair.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { jsonlBytes } from './replay-helpers.js'

describe('P5: a real session truncated at every byte offset repairs and resumes', () => {
  it('P5: every cut of the demo session (tools, steering, a blocked prompt, a retry) repairs into a valid log that keeps every complete record, resumes and runs a followup', async () => {
    const demo = await runDemoSession({ searchDelayMs: 1, startTime: 1_764_450_000_000, sessionId: 'demo-p5' })
    const bytes = jsonlBytes(demo.events, demo.header)
    const headerEnd = bytes.indexOf(0x0a) + 1
    // record boundaries: the byte offset just after each record's newline
    const ends: number[] = []
    for (let i = headerEnd; i < bytes.length; i++) if (bytes[i] === 0x0a) ends.push(i + 1)
    const resumed = new Map<number, boolean>()
    let cuts = 0
    for (let cut = headerEnd - 1; cut <= bytes.length; cut++) {
      const r = await repair(bytes.subarray(0, cut))
      cuts++
      // every complete record before the cut is kept (a record missing only its \n too)
      const complete = ends.filter((e) => e <= cut + 1).length
      expect(r.keptEventCount).toBe(complete)
      expect(r.log.events.slice(0, r.keptEventCount)).toEqual(demo.events.slice(0, r.keptEventCount))
      const v = verify(r.log.events)
      if (!v.ok) throw new Error(`cut at ${cut}: ${JSON.stringify(v.violations.slice(0, 2))}`)
      if (r.quarantined) expect(r.quarantined.offset + r.quarantined.bytes.length).toBe(cut)
      // resuming depends only on the kept records: resume once per distinct repaired log
      if (resumed.has(r.keptEventCount)) continue
      const agent = (await resumeAgent({
        log: bytes.subarray(0, cut),
        model: scriptedModel(() => ({ text: 'resumed' })),
        timers: { sleep: async () => {}, random: () => 0.5 },
        clock: () => 1_764_460_000_000,
      })) as TurnlogAgent
      await agent.whenIdle()
      const before = agent.events.length
      const lastTurn = agent.lifecycle.lastTurn
      agent.followup('after the crash')
      await agent.whenIdle()
      const added = agent.events.slice(before)
      expect(added.find((e) => e.type === 'turn/start')?.data).toEqual({ turn: lastTurn + 1 })
      // the first request after the resume logs its header with reason resume (initial for an empty log)
      const firstHeader = agent.events.slice(r.log.events.length).find((e) => e.type === 'request/header')
      expect((firstHeader?.data as { reason: string }).reason).toBe(r.log.events.length > 0 ? 'resume' : 'initial')
      expect(added.at(-1)?.data).toMatchObject({ reason: { kind: 'completed' } })
      expect(verify(agent.events).ok).toBe(true)
      resumed.set(r.keptEventCount, true)
      await agent.dispose()
    }
    expect(cuts).toBe(bytes.length - headerEnd + 2)
    expect(resumed.size).toBe(demo.events.length + 1)
  }, 300_000)
})
