/**
 * Lifecycle §9 "Parked": the agent is `parked` only while decisions alone are owed. A decision
 * that lets the step go on makes it `running` again at once — also when the decision lands right
 * after the park, before the step's scheduler looks again (found by the golden approvals property,
 * seed 1241066186: a re-issued decision in the microtask after `step/parked`; the status stayed
 * `parked` while the next call's `tools/pre-execute` ran, and a driver that trusted it acted as
 * if the agent waited for a person).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../tools/index.js'
import { data, endKinds, makeAgent, valid } from '../agent/contain-helpers.js'
import { countingTool, settle } from './helpers.js'

function readTool() {
  const runs: string[] = []
  const tool = defineTool({
    name: 'read', description: 'read a file', parameters: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    execute: ({ path }) => {
      runs.push(path)
      return `read ${path}`
    },
  })
  return { tool, runs }
}

describe('R9 status: parked only while decisions alone are owed (docs/spec/lifecycle.md §9)', () => {
  it('R9: a decision made in the microtask after `step/parked` unparks the agent while the next call\'s pre-execute runs', async () => {
    const rm = countingTool('rm', { needsApproval: true })
    const read = readTool()
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let holding = false
    const { agent } = makeAgent([
      { toolCalls: [{ name: 'read', args: { path: 'a' }, id: 'c0' }, { name: 'rm', args: { path: 'x' }, id: 'c1' }, { name: 'read', args: { path: 'b' }, id: 'c2' }] },
      { text: 'done' },
    ], {
      tools: [read.tool, rm.tool],
      hooks: {
        // a deciding listener (the start loop waits for each verdict); c2's verdict takes its time
        'tools/pre-execute': async (p, next) => {
          if (p.call.id === 'c2') {
            holding = true
            await held
          }
          return next()
        },
      },
    })
    // the person decides at once: in the microtask right after the park is logged
    agent.subscribe((e) => {
      if (e.type === 'step/parked') queueMicrotask(() => void agent.decide(agent.approvals()[0]!.approvalId, { kind: 'deny', reason: 'no' }))
    })
    agent.followup('go')
    await settle()
    expect(holding).toBe(true) // c2's pre-execute runs: the step went on after the denial
    expect(agent.approvals()).toEqual([])
    expect(agent.status).toBe('running')
    release()
    await agent.whenIdle()
    expect(data(agent.events, 'tool/result').map((r) => `${r.callId} ${r.error?.code ?? 'ok'}`)).toEqual(['c0 ok', 'c1 DENIED', 'c2 ok'])
    expect(rm.runs).toEqual([])
    expect(endKinds(agent.events)).toEqual(['completed'])
    valid(agent.events)
  })
})
