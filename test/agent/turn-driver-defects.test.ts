/**
 * The turn loop's catch-all (agent/turn-driver.ts): a driver defect — here a refused append, the
 * user's `options.clock` throwing inside `Session.append` — is reported as `agent/error` where
 * `'driver'`; the emergency close then closes what the log has open (pending tool calls with a
 * synthetic `TOOL_OUTCOME_UNKNOWN` result, the step `failed UNKNOWN`, the turn `error UNKNOWN`),
 * and the machines restart at idle, continuing the turn numbering and the step budget. L2/L3/L5:
 * the log stays valid; the agent is never wedged.
 *
 * The clock is broken at a chosen append by a `subscribe` observer or a tool body, so each defect
 * happens at one exact point of the turn (no timing).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, type AgentOptions } from '../../agent/index.js'
import type { TurnlogAgent } from '../../agent/agent.js'
import { TurnLoop } from '../../agent/turn-driver.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { verify } from '../../replay/verify.js'
import { valid } from './contain-helpers.js'
import { guardAgentErrors, type AgentErrorRecord } from './error-guard.js'
import { counterIds, instantTimers, trace } from './helpers.js'

/** A clock that throws on its next `n` calls once told to (then ticks on). */
function breakableClock() {
  let t = 1764450000000
  let failures = 0
  return {
    clock: (): number => {
      if (failures > 0) {
        failures--
        throw new Error('clock broke')
      }
      return t++
    },
    breakNext(n: number): void {
      failures = n
    },
  }
}

function make(script: readonly ScriptedEntry[], opts: Partial<AgentOptions> = {}) {
  const c = breakableClock()
  const agent = createAgent({
    model: scriptedModel(script, { info: { name: 'scripted' } }),
    system: 'sys',
    clock: c.clock,
    ids: counterIds('m'),
    timers: instantTimers(),
    ...opts,
  })
  const errors: AgentErrorRecord[] = []
  guardAgentErrors(agent, ['driver', 'tools/scheduler'], errors)
  const turns: Array<number | undefined> = []
  agent.on('agent/error', (e) => turns.push(e.turn))
  const statuses: string[] = []
  agent.on('agent/status', (e) => statuses.push(e.status))
  return { agent, c, errors, turns, statuses }
}

/** Breaks the clock for `n` calls right after the first committed event of `type`. */
function breakAfter(agent: ReturnType<typeof make>['agent'], c: ReturnType<typeof breakableClock>, type: string, n: number): void {
  let armed = true
  agent.subscribe((e) => {
    if (armed && e.type === type) {
      armed = false
      c.breakNext(n)
    }
  })
}

/**
 * Lets every pending microtask run (the driver, the scripted model and instant timers only chain
 * microtasks), so a defect that wedged the loop fails an assertion instead of hanging `whenIdle`.
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
}

const where = (errors: readonly AgentErrorRecord[]) => errors.map((e) => `${e.where}: ${(e.error as Error).message}`)

describe('driver defects: report, close what is open, restart at idle', () => {
  it('L2: a refused turn/start (before any step ran) is agent/error "driver"; nothing is left open, status goes idle, and the queued prompt runs on the next wake', async () => {
    const { agent, c, errors, turns, statuses } = make([{ text: 'hello' }])
    breakAfter(agent, c, 'agent/inbox/spliced', 1)
    agent.followup('hi')
    // the whole defect is handled synchronously inside the waking call
    expect(where(errors)).toEqual(['driver: clock broke'])
    expect(turns).toEqual([undefined])
    expect(trace(agent.events)).toEqual(['splice next-turn 0 -0 +[m1]'])
    expect(statuses).toEqual(['running', 'idle'])
    expect(agent.status).toBe('idle')
    expect(agent.snapshot().turn.state).toBe('idle')
    expect(agent.snapshot().inbox.nextTurn.map((m) => m.id)).toEqual(['m1'])
    await agent.whenIdle()
    // the restarted machine opens the next turn as usual
    expect(agent.wake()).toBe(true)
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]',
      'turn/start 1',
      'splice next-turn 0 -1 +[]',
      'step/start 1.1',
      'user/message m1',
      'request/header initial',
      'assistant/message stop',
      'step/end 1.1 stop',
      'turn/end 1 completed',
    ])
    expect(errors).toHaveLength(1)
    valid(agent.events)
  })

  it('L2: a refused claim (turn open, no step) closes the turn error UNKNOWN with the defect\'s message; the next turn is turn 2', async () => {
    const { agent, c, errors, turns, statuses } = make([{ text: 'hello' }])
    breakAfter(agent, c, 'turn/start', 1)
    agent.followup('hi')
    // the claim is refused inside the proposing phase, which the loop awaits
    await settle()
    expect(agent.status).toBe('idle')
    expect(where(errors)).toEqual(['driver: clock broke'])
    expect(turns).toEqual([1])
    expect(trace(agent.events)).toEqual(['splice next-turn 0 -0 +[m1]', 'turn/start 1', 'turn/end 1 error UNKNOWN'])
    expect(agent.events.at(-1)!.data).toEqual({ turn: 1, reason: { kind: 'error', failure: { code: 'UNKNOWN', message: 'clock broke' } } })
    expect(statuses).toEqual(['running', 'idle'])
    valid(agent.events)
    // the refused claim took nothing: the prompt is still queued; numbering continues after turn 1
    expect(agent.wake()).toBe(true)
    await agent.whenIdle()
    expect(trace(agent.events).slice(3)).toEqual([
      'turn/start 2',
      'splice next-turn 0 -1 +[]',
      'step/start 2.1',
      'user/message m1',
      'request/header initial',
      'assistant/message stop',
      'step/end 2.1 stop',
      'turn/end 2 completed',
    ])
    expect(errors).toHaveLength(1)
    valid(agent.events)
  })

  it('L5/L3: a defect inside a step with a pending tool call closes the call (TOOL_OUTCOME_UNKNOWN, "outcome unknown"), the step (failed UNKNOWN) and the turn; the restarted machine keeps maxStepsPerTurn', async () => {
    let broke = false
    let c!: ReturnType<typeof breakableClock>
    const echo = defineTool({
      name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }),
      execute: ({ text }) => {
        // the result's commit and the scheduler's own closing append are both refused: the
        // scheduler gives up and the step driver throws out of the step
        if (!broke) c.breakNext(2)
        broke = true
        return text
      },
    })
    const m = make([
      { toolCalls: [{ name: 'echo', args: { text: 'a' } }] },
      { toolCalls: [{ name: 'echo', args: { text: 'b' } }] },
      { text: 'never: the step budget is 1' },
    ], { tools: [echo as AnyTool], maxStepsPerTurn: 1 })
    c = m.c
    const { agent, errors, turns } = m
    agent.followup('use it')
    await settle()
    expect(agent.status).toBe('idle')
    expect(where(errors)).toEqual(['tools/scheduler: clock broke', 'driver: clock broke'])
    expect(turns).toEqual([1, 1])
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]',
      'turn/start 1',
      'splice next-turn 0 -1 +[]',
      'step/start 1.1',
      'user/message m1',
      'request/header initial',
      'assistant/message tool-calls',
      'tool/call call_1 echo',
      'tool/result call_1 TOOL_OUTCOME_UNKNOWN',
      'step/end 1.1 failed UNKNOWN',
      'turn/end 1 error UNKNOWN',
    ])
    const call = agent.events.find((e) => e.type === 'tool/call')!
    const result = agent.events.find((e) => e.type === 'tool/result')! as LogEvent
    expect({ data: result.data, surfaceOp: result.surfaceOp, sourceEventSeqs: result.sourceEventSeqs }).toEqual({
      data: {
        turn: 1, step: 1, callId: 'call_1',
        message: { role: 'tool', callId: 'call_1', content: [{ type: 'text', text: 'outcome unknown' }], isError: true },
        error: { code: 'TOOL_OUTCOME_UNKNOWN', message: 'clock broke' },
      },
      surfaceOp: 'append',
      sourceEventSeqs: [call.seq],
    })
    expect(agent.events.at(-2)!.data).toEqual({ turn: 1, step: 1, outcome: { kind: 'failed', failure: { code: 'UNKNOWN', message: 'clock broke' } } })
    expect(agent.events.at(-1)!.data).toEqual({ turn: 1, reason: { kind: 'error', failure: { code: 'UNKNOWN', message: 'clock broke' } } })
    expect(verify(agent.events, { maxStepsPerTurn: 1 }).violations).toEqual([])

    // turn 2 on the restarted machine: its budget is still 1 step (not the default 64)
    agent.followup('again')
    await agent.whenIdle()
    expect(trace(agent.events).slice(11).filter((l) => l.startsWith('turn/') || l.startsWith('step/'))).toEqual([
      'turn/start 2', 'step/start 2.1', 'step/end 2.1 tools', 'turn/end 2 step-limit',
    ])
    expect(errors).toHaveLength(2)
    expect(verify(agent.events, { maxStepsPerTurn: 1 }).violations).toEqual([])
  })

  it('L2: when the log refuses the emergency close too, that is reported ("driver") and never thrown: the agent still goes idle', async () => {
    const { agent, c, errors, statuses } = make([{ text: 'hello' }])
    // the claim and then the closing turn/end are refused
    breakAfter(agent, c, 'turn/start', 2)
    agent.followup('hi')
    await settle()
    expect(where(errors)).toEqual(['driver: clock broke', 'driver: clock broke'])
    expect(trace(agent.events)).toEqual(['splice next-turn 0 -0 +[m1]', 'turn/start 1'])
    expect(statuses).toEqual(['running', 'idle'])
    expect(agent.status).toBe('idle')
    expect(agent.snapshot().turn.state).toBe('idle')
  })

  it('L2: a turn machine in a state the loop has no phase for (maintaining) is a driver defect: reported naming the state, the machine restarts at idle', async () => {
    const { agent, errors } = make([])
    const host = agent as TurnlogAgent
    let finish!: () => void
    const task = agent.runMaintenance(() => new Promise<void>((r) => (finish = r)))
    expect(agent.snapshot().turn.state).toBe('maintaining')
    // a second loop on the same agent (a driver bug): its WAKE is not heard while maintaining
    const statuses: string[] = []
    const loop = new TurnLoop(host, { setStatus: (s) => statuses.push(s), settleIdle: () => {}, opening: () => null, winding: () => false })
    loop.start(null)
    expect(where(errors)).toEqual(['driver: turn machine in unexpected state "maintaining"'])
    expect(statuses).toEqual(['running', 'idle'])
    expect(agent.snapshot().turn.state).toBe('idle')
    expect(loop.running).toBeNull()
    expect(agent.events).toEqual([])
    finish()
    await task
  })
})
