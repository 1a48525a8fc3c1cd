/** Shared set-up for the containment tests (issue 9): an agent with deterministic clock and ids. */
import { expect } from 'vitest'
import { createAgent, type AgentOptions } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { verify } from '../../replay/verify.js'
import { guardAgentErrors, type AgentErrorRecord, type ExpectedAgentError } from './error-guard.js'
import { counterIds, fakeClock, instantTimers } from './helpers.js'

/** Options of `makeAgent`: the agent's, plus the `agent/error`s the test provokes on purpose (any
 * other fails the test, see error-guard.ts). */
export type MakeAgentOptions = Partial<AgentOptions> & { expectErrors?: readonly ExpectedAgentError[] }

export function makeAgent(script: readonly ScriptedEntry[] | null, { expectErrors = [], ...opts }: MakeAgentOptions = {}) {
  const errors: AgentErrorRecord[] = []
  const agent = createAgent({
    model: scriptedModel(script ?? [], { info: { name: 'scripted' } }),
    system: 'sys',
    clock: fakeClock(),
    ids: counterIds('m'),
    timers: instantTimers(),
    checkRequests: 'full',
    ...opts,
  })
  guardAgentErrors(agent, expectErrors, errors)
  return { agent, errors }
}

/** The log satisfies every L invariant. */
export function valid(events: readonly LogEvent[]): void {
  expect(verify(events).violations).toEqual([])
}

export function data(events: readonly LogEvent[], type: string): Array<Record<string, any>> {
  return events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>)
}

/** Every `turn/end` reason kind, in order. */
export function endKinds(events: readonly LogEvent[]): string[] {
  return data(events, 'turn/end').map((d) => d.reason.kind)
}

export function thrower(message: string): never {
  throw new Error(message)
}
