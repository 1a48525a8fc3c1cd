/**
 * The turn loop's proposals and openings (docs/spec/lifecycle.md §3.1–3.2, §8): the `agent/pre-step` payload
 * of every proposal (turn, the step it would start, proposal kind, `retry` / `resume` only on the
 * first proposal of a retry / resume turn), the `turn/start` cause of a retry and a resume turn,
 * the WAKE the turn machine hears (only a resumed agent's wake carries `resumeOf`), and an empty
 * first proposal of an ordinary turn ending the turn `completed` with no step.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { InspectionEvent } from 'xstate'
import { createAgent, type Agent, type AgentOptions } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { resumeAgent } from '../../replay/resume.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { valid } from './contain-helpers.js'
import { guardAgentErrors } from './error-guard.js'
import { counterIds, fakeClock, instantTimers, trace } from './helpers.js'

const echo = defineTool({
  name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text,
}) as AnyTool

function base(script: readonly ScriptedEntry[]): AgentOptions {
  return {
    model: scriptedModel(script, { info: { name: 'scripted' } }),
    system: 'sys',
    clock: fakeClock(),
    ids: counterIds('m'),
    timers: instantTimers(),
    tools: [echo],
  }
}

/** What each `agent/pre-step` saw (the signal and the agent left out). */
function recordProposals(agent: Agent) {
  const seen: Array<Record<string, unknown>> = []
  agent.on('agent/pre-step', (p, next) => {
    seen.push({ turn: p.turn, step: p.step, proposal: p.proposal, retry: p.retry, resume: p.resume, messages: p.messages.map((m) => m.id) })
    return next()
  })
  return seen
}

/** The WAKE events the turn machine received (XState inspection). */
function wakes(log: InspectionEvent[]): unknown[] {
  return log.filter((e) => e.type === '@xstate.event' && (e as { event: { type: string } }).event.type === 'WAKE')
    .map((e) => (e as { event: unknown }).event)
}

const turnStarts = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'turn/start').map((e) => e.data)

describe('proposals and openings', () => {
  it('L13 §3.2: pre-step sees the step it would start and retry only on the first proposal of a retry turn; an ordinary wake carries no resumeOf', async () => {
    const inspected: InspectionEvent[] = []
    const agent = createAgent({
      ...base([{ error: { code: 'SERVER' } }, { toolCalls: [{ name: 'echo', args: { text: 'a' } }] }, { text: 'done' }]),
      inspect: (e) => inspected.push(e),
    })
    guardAgentErrors(agent)
    const seen = recordProposals(agent)
    agent.followup('hi')
    await agent.whenIdle()
    expect(seen).toEqual([
      { turn: 1, step: 1, proposal: 'first', retry: false, resume: false, messages: ['m1'] },
      { turn: 2, step: 1, proposal: 'first', retry: true, resume: false, messages: [] },
      { turn: 2, step: 2, proposal: 'after-tools', retry: false, resume: false, messages: [] },
    ])
    expect(turnStarts(agent.events)).toEqual([{ turn: 1 }, { turn: 2, cause: { kind: 'retry', of: 1 } }])
    // the retry turn opened from closing, not by a wake: one WAKE, exactly as sent
    expect(wakes(inspected)).toEqual([{ type: 'WAKE' }])
    valid(agent.events)
  })

  it('L13 §8.2: a resume turn opens turn/start {cause: resume of N}; pre-step sees resume only on its first proposal (which owes the request and claims no prompt)', async () => {
    // a crash after the prompt was entered: system-prompt/assemble never settles
    let hung!: () => void
    const hanging = new Promise<void>((r) => (hung = r))
    const crashed = createAgent({
      ...base([]),
      hooks: { 'system-prompt/assemble': () => (hung(), new Promise(() => {})) },
    })
    guardAgentErrors(crashed)
    crashed.followup('question')
    await hanging
    const log = [...crashed.events]
    expect(trace(log).at(-1)).toBe('user/message m1')

    const inspected: InspectionEvent[] = []
    const agent = await resumeAgent({
      ...base([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }, { text: 'answer' }]),
      ids: counterIds('r'),
      log,
      autoStart: false,
      inspect: (e) => inspected.push(e),
    })
    guardAgentErrors(agent)
    const seen = recordProposals(agent)
    // a queued prompt is not claimed by the resume turn's first proposal: it gets its own turn
    agent.inbox.append('next-turn', 'later')
    expect(agent.wake()).toBe(true)
    await agent.whenIdle()
    const after = agent.events.slice(log.length)
    expect(turnStarts(after)).toEqual([{ turn: 2, cause: { kind: 'resume', of: 1, maxResumeRuns: 3 } }, { turn: 3 }])
    expect(seen).toEqual([
      { turn: 2, step: 1, proposal: 'first', retry: false, resume: true, messages: [] },
      { turn: 2, step: 2, proposal: 'after-tools', retry: false, resume: false, messages: [] },
      { turn: 3, step: 1, proposal: 'first', retry: false, resume: false, messages: ['r1'] },
    ])
    expect(wakes(inspected)).toEqual([{ type: 'WAKE', resumeOf: 1 }])
    valid(agent.events)
  })

  it('L12 §3.2: enter([]) on the first proposal of an ordinary turn ends it completed with no step (and no model call)', async () => {
    let calls = 0
    const agent = createAgent({
      ...base([]),
      model: { info: { name: 'none' }, stream: () => (calls++, scriptedModel([{ text: 'x' }]).stream({} as never, new AbortController().signal)) },
      hooks: { 'agent/pre-step': () => ({ kind: 'enter', messages: [] }) },
    })
    guardAgentErrors(agent)
    agent.followup('hi')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]',
      'turn/start 1',
      'splice next-turn 0 -1 +[]',
      'turn/end 1 completed',
    ])
    expect(calls).toBe(0)
    valid(agent.events)
  })
})
