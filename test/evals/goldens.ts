/**
 * Goldens for the evals tests: hand-written sessions recorded by the real agent with a scripted
 * model (exact shapes), and the fuzzer's sessions (test/replay/agent-runs.ts: the fuzzer's scenario
 * generator, hook plans, tools and inbox commands interleaved by fc.scheduler).
 */
import { z } from 'zod'
import { createAgent } from '../../agent/agent.js'
import type { Agent, AgentOptions } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import { fakeClock, instantTimers } from '../replay/agent-runs.js'

export { instantTimers }

/** A weather tool; `calls` counts body runs (a re-run with recorded results runs none). */
export function weatherTools(calls = { n: 0 }): AnyTool[] {
  return [
    defineTool({
      name: 'weather', description: 'Current weather for a city', parameters: z.object({ city: z.string(), unit: z.string().optional() }),
      isConcurrencySafe: () => true,
      execute: ({ city }) => {
        calls.n++
        return { city, tempC: city.length + 10 }
      },
    }),
  ] as AnyTool[]
}

export const SYSTEM = 'You are a helpful assistant.'

/**
 * Records a session: `drive(agent)` sends what it wants (awaiting `whenIdle` between turns).
 * Returns the log. Ids are `g1, g2…`, time a fake clock.
 */
export async function recordGolden(
  responses: readonly ScriptedEntry[],
  drive: (a: Agent) => Promise<void>,
  extra: Partial<AgentOptions> = {},
): Promise<{ header: { type: 'session'; format: 1; id: string; createdAt: number }; events: readonly LogEvent[] }> {
  let n = 0
  const agent = createAgent({
    model: scriptedModel(responses, { info: { name: 'scripted' } }),
    tools: weatherTools(),
    system: SYSTEM,
    clock: fakeClock(),
    ids: () => `g${++n}`,
    timers: instantTimers,
    ...extra,
  })
  await drive(agent)
  await agent.whenIdle()
  const events = agent.events.slice() as LogEvent[]
  await agent.dispose()
  return { header: { type: 'session', format: 1, id: 'golden-1', createdAt: events[0]?.time ?? 0 }, events }
}

/** Two turns: turn 1 asks for Paris (a tool call, then text), turn 2 for Oslo and Rome (two calls, then text). */
export async function twoTurnGolden(): Promise<Awaited<ReturnType<typeof recordGolden>>> {
  return recordGolden([
    { toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }], usage: { inputTokens: 40, outputTokens: 8 } },
    { text: 'It is 15 °C in Paris.', usage: { inputTokens: 60, outputTokens: 7 } },
    { toolCalls: [{ id: 'c2', name: 'weather', args: { city: 'Oslo' } }, { id: 'c3', name: 'weather', args: { unit: 'C', city: 'Rome' } }], usage: { inputTokens: 80, outputTokens: 12 } },
    { text: 'Oslo 14 °C, Rome 14 °C.', usage: { inputTokens: 110, outputTokens: 9 } },
  ], async (a) => {
    a.followup('Weather in Paris?')
    await a.whenIdle()
    a.followup('And Oslo and Rome?')
    await a.whenIdle()
  })
}
