/**
 * A cancel that reaches a parked agent after its dispose (round 16, found by the fuzzer's dispose
 * while parked, testing/fuzz/restart.ts): the session stays parked (docs/spec/lifecycle.md §9), so the cancel
 * decides nothing, logs nothing and does not throw (the log is closed: before the fix it threw
 * SESSION_CLOSED from the inbox clear, and the parked step's tool run woke and tried to log the
 * open requests `by: canceled`, an unhandled rejection).
 */
import { describe, expect, it } from 'vitest'
import { defineTool } from '../../tools/index.js'
import { z } from 'zod'
import { makeAgent } from '../agent/contain-helpers.js'
import { countingTool, manualTimers } from './helpers.js'

describe('dispose of a parked agent, then cancel (docs/spec/lifecycle.md §9, L18)', () => {
  it('L18: a cancel after the dispose of a parked agent (an ask open, a followup queued) logs nothing and throws nothing', async () => {
    const timers = manualTimers()
    const rm = countingTool('rm', { needsApproval: true, timeoutMs: 1000 })
    const asked = defineTool({ name: 'read', description: 'r', parameters: z.object({ path: z.string() }), execute: () => 'ok' })
    const { agent } = makeAgent([
      { toolCalls: [{ name: 'read', args: { path: 'y' }, id: 'c2' }, { name: 'rm', args: { path: 'x' }, id: 'c1' }] },
      { text: 'done' },
    ], { tools: [asked, rm.tool], timers: timers.timers, hooks: { 'tools/pre-execute': async () => ({ kind: 'ask', question: 'ok?' }) } })
    const unhandled: unknown[] = []
    const onUnhandled = (e: unknown) => { unhandled.push(e) }
    process.on('unhandledRejection', onUnhandled)
    try {
      agent.followup('go')
      await agent.whenSettled()
      expect(agent.status).toBe('parked')
      agent.followup('later')
      await agent.dispose()
      const n = agent.events.length
      expect(agent.events.filter((e) => /^(turn|step)\//.test(e.type)).at(-1)!.type).toBe('step/parked')
      expect(() => agent.cancel({ kind: 'user' })).not.toThrow()
      for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r))
      expect(agent.events.length).toBe(n)
      expect(unhandled).toEqual([])
      expect(rm.runs).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})
