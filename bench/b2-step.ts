/**
 * B2 (driver overhead per step) and B3 (growth: per-step cost with 100k events already in the log
 * vs 100), bench/README.md. An instant scripted model, one tool call per step, the
 * in-memory log. B2's baseline in the same run is a bare hand-written loop over the same model
 * and tool (consume the stream, assemble, run the tool, append plain objects to an array): what an
 * agent loop costs with no validation, no invariant checks, no machines and no reducers.
 */
import { z } from 'zod'
import { createAgent } from '../agent/index.js'
import type { StreamChunk } from '../events/index.js'
import type { ModelAdapter } from '../models/index.js'
import { defineTool } from '../tools/index.js'
import { collectGarbage, type BenchResult } from './common.js'

/** One tool call (`add {a:1,b:2}`); shared with B5 so every system plays the same stream. */
export const CALL: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'tool-call' },
  { type: 'tool-call-delta', index: 0, id: 'c', name: 'add', argumentsDelta: '{"a":1,"b":2}' },
  { type: 'block-end', index: 0 },
  { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } },
  { type: 'finish', reason: 'tool-calls' },
]
/** The final answer. */
export const STOP: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: 'done' },
  { type: 'block-end', index: 0 },
  { type: 'finish', reason: 'stop' },
]

/** A model with no script bookkeeping: `stepsPerTurn - 1` tool-call responses, then a stop. */
function loopModel(stepsPerTurn: number): ModelAdapter {
  let i = 0
  let call = 0
  return {
    info: { name: 'bench' },
    async *stream() {
      const last = ++i % stepsPerTurn === 0
      if (last) {
        yield* STOP
        return
      }
      const id = `c${++call}`
      for (const c of CALL) yield c.type === 'tool-call-delta' ? { ...c, id } : c
    },
  }
}

const add = defineTool({
  name: 'add', description: 'adds', parameters: z.object({ a: z.number(), b: z.number() }),
  isConcurrencySafe: () => true, execute: ({ a, b }) => a + b,
})

/** Runs turns of `stepsPerTurn` steps until `steps` steps ran; returns µs per step. */
async function agentSteps(agent: ReturnType<typeof createAgent>, steps: number, stepsPerTurn: number): Promise<number> {
  const turns = Math.ceil(steps / stepsPerTurn)
  const t0 = performance.now()
  for (let t = 0; t < turns; t++) {
    agent.followup('go')
    await agent.whenIdle()
  }
  return ((performance.now() - t0) * 1000) / (turns * stepsPerTurn)
}

/** B2's loop: a fresh agent per turn (as the bare loop and the peers start each run fresh), so the
 * figure includes creating the agent and carries no log growth (B3 measures growth). */
async function freshAgentSteps(steps: number, stepsPerTurn: number): Promise<number> {
  const model = loopModel(stepsPerTurn)
  const turns = Math.ceil(steps / stepsPerTurn)
  const t0 = performance.now()
  for (let t = 0; t < turns; t++) {
    const agent = createAgent({ model, tools: [add], system: 'bench', retry: false })
    agent.followup('go')
    await agent.whenIdle()
  }
  return ((performance.now() - t0) * 1000) / (turns * stepsPerTurn)
}

/** The bare loop: same model and tool, no turnlog. */
async function bareSteps(steps: number, stepsPerTurn: number): Promise<number> {
  const model = loopModel(stepsPerTurn)
  const log: unknown[] = []
  const turns = Math.ceil(steps / stepsPerTurn)
  const t0 = performance.now()
  for (let t = 0; t < turns; t++) {
    const history: unknown[] = [{ role: 'user', content: 'go' }]
    for (let s = 0; s < stepsPerTurn; s++) {
      const calls: Array<{ id: string; args: string }> = []
      let text = ''
      for await (const c of model.stream({ messages: history.slice() as never, system: '', tools: [], config: { model: 'bench' } }, new AbortController().signal)) {
        log.push({ type: 'chunk', c })
        if (c.type === 'tool-call-delta') calls.push({ id: c.id, args: c.argumentsDelta })
        if (c.type === 'text-delta') text += c.text
      }
      history.push({ role: 'assistant', text, calls })
      if (calls.length === 0) break
      for (const call of calls) {
        const args = add.parameters.parse(JSON.parse(call.args)) as { a: number; b: number }
        const out = await add.execute(args, undefined as never)
        history.push({ role: 'tool', id: call.id, content: JSON.stringify(out) })
        log.push({ type: 'result', out })
      }
    }
  }
  return ((performance.now() - t0) * 1000) / (turns * stepsPerTurn)
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

/** Untimed steps after each forced GC, before a timed run (the GC's transient, not the loop's cost). */
const SETTLE_STEPS = 1000

function newAgent(stepsPerTurn: number) {
  return createAgent({ model: loopModel(stepsPerTurn), tools: [add], system: 'bench', retry: false })
}

export async function benchStep(log: (l: string) => void = () => {}): Promise<{ B2: BenchResult; B3: BenchResult }> {
  const stepsPerTurn = 10
  const steps = 5000
  // Warm up both paths.
  await freshAgentSteps(10_000, stepsPerTurn)
  await bareSteps(2000, stepsPerTurn)
  const agentRuns: number[] = []
  const bareRuns: number[] = []
  for (let r = 0; r < 3; r++) {
    // a full GC, then untimed steps of the loop about to be timed: right after a forced GC every
    // loop runs slowly for a while (docs/decisions/bench-settle-after-gc.md)
    collectGarbage()
    await bareSteps(SETTLE_STEPS, stepsPerTurn)
    bareRuns.push(await bareSteps(steps, stepsPerTurn))
    collectGarbage()
    await freshAgentSteps(SETTLE_STEPS, stepsPerTurn)
    agentRuns.push(await freshAgentSteps(steps, stepsPerTurn))
  }
  const us = median(agentRuns)
  const bare = median(bareRuns)
  log(`  B2: ${us.toFixed(1)} µs/step (bare loop ${bare.toFixed(1)} µs/step)`)

  // B3: the same step with 100 events vs 100k events already in the log (one agent, grown in place).
  const small: number[] = []
  const large: number[] = []
  for (let r = 0; r < 3; r++) {
    const agent = newAgent(stepsPerTurn)
    await agentSteps(agent, 20, stepsPerTurn)
    const eventsSmall = agent.events.length
    // settled on a throwaway agent after the GC, so the measured one keeps its size
    collectGarbage()
    await agentSteps(newAgent(stepsPerTurn), SETTLE_STEPS, stepsPerTurn)
    small.push(await agentSteps(agent, 1000, stepsPerTurn))
    while (agent.events.length < 100_000) await agentSteps(agent, 1000, stepsPerTurn)
    const eventsLarge = agent.events.length
    collectGarbage()
    await agentSteps(newAgent(stepsPerTurn), SETTLE_STEPS, stepsPerTurn)
    large.push(await agentSteps(agent, 1000, stepsPerTurn))
    log(`  B3 run ${r + 1}: ${small.at(-1)!.toFixed(1)} µs/step at ${eventsSmall} events, ${large.at(-1)!.toFixed(1)} µs/step at ${eventsLarge} events`)
  }
  const growth = median(large) / median(small)
  return {
    B2: {
      value: us,
      unit: 'us/step',
      target: 'below the fastest peer (B5)',
      detail: { usPerStep: { turnlog: us, bareLoop: bare }, ratioToBareLoop: us / bare, runs: { turnlog: agentRuns, bareLoop: bareRuns }, stepsPerRun: steps, stepsPerTurn },
    },
    B3: {
      value: growth,
      unit: 'x baseline',
      target: '<= 1.2',
      detail: { usPerStepAt100Events: median(small), usPerStepAt100kEvents: median(large), runs: { small, large } },
    },
  }
}
