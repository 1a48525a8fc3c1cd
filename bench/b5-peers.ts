/**
 * B5 (bench/README.md): the per-step overhead of the same scripted tool loop in turnlog
 * and in its peers, measured back to back in one process: Vercel AI SDK v5, v6 and v7 (`generateText`
 * with `MockLanguageModelV2`, `V3`, `V4`; v7 needs Node 22 or later and is skipped, with the
 * reason, on an older Node), OpenAI Agents JS (`Runner.run` with a fake `Model`), and LangGraph.js
 * (`createReactAgent` with a fake tool-calling chat model).
 *
 * The loop is B2's (bench/b2-step.ts): an instant scripted model that asks for one tool call
 * (`add {a:1,b:2}`) on steps 1–9 of a turn and answers with text on step 10; a tool `add` that
 * returns a+b, its arguments validated by a zod schema in every system. A step is one model call
 * (so a turn is 10 steps, 9 of them with a tool call). Each run does `B5_TURNS` turns (default
 * 500) per system after a warm-up of `B5_WARMUP_TURNS` (default 1,000: turnlog alone keeps
 * getting faster for about that long); the systems take turns within a round (the order rotates
 * each round), and the figure per system is the median µs/step over 3 rounds. Each timed run
 * starts with a full GC (the previous system's garbage is not charged to the next) and then
 * `B5_SETTLE_TURNS` untimed turns (default 100) of the system about to be timed: right after a
 * forced GC every system runs slowly for a while (turnlog measured 2-6x its settled µs/step over
 * the first 50-100 turns, then back to it), a transient of the forced GC that no serving process
 * has, which the 500 timed turns used to carry (docs/decisions/bench-settle-after-gc.md).
 *
 * turnlog runs as in B2: a fresh agent per turn (as each peer starts a fresh run),  a `followup` per turn, the in-memory log (so its
 * log grows across the turns of a round; B3 is what says that costs nothing). The peers run one
 * fresh run per turn (`generateText` / `run` / `invoke` with the input 'go'), which is how each
 * is used; none of them keeps a log. Each system's call counts are checked after every run, so a
 * loop that stopped early (a wrong stop condition, a max-turns limit) fails the benchmark instead
 * of looking fast.
 *
 * `value` = turnlog's µs/step ÷ the fastest peer's; a peer that cannot be loaded is left out and
 * named in `detail.skipped`. Knobs: B5_TURNS, B5_WARMUP_TURNS, B5_SETTLE_TURNS, B5_SYSTEMS (a comma list of the
 * peers to run: aiSdk, aiSdk6, aiSdk7, openaiAgents, langgraph; for diagnosis). Every figure is
 * recorded with the Node version it was measured on (`detail.nodeOf`).
 */
import { z } from 'zod'
import type { Model as OpenAIModel, ModelResponse as OpenAIModelResponse, StreamEvent as OpenAIStreamEvent } from '@openai/agents-core'
import { createAgent } from '../agent/index.js'
import { CALL, STOP } from './b2-step.js'
import type { ModelAdapter } from '../models/index.js'
import { defineTool } from '../tools/index.js'
import { collectGarbage, envInt, median, round, type BenchResult } from './common.js'

const STEPS_PER_TURN = 10
const ARGS = { a: 1, b: 2 } as const
const ARGS_JSON = JSON.stringify(ARGS)
const addSchema = () => z.object({ a: z.number(), b: z.number() })

/** Calls made, per system, to check that every loop ran all of its steps. */
interface Counts { model: number; tool: number }

/** One system: `setup` builds what a round needs, then `turn` runs one whole turn (10 steps). */
interface System {
  name: 'turnlog' | 'aiSdk' | 'aiSdk6' | 'aiSdk7' | 'openaiAgents' | 'langgraph'
  label: string
  counts: Counts
  /** Called once per round, before its turns. */
  setup(): Promise<void> | void
  turn(): Promise<void>
}

// ---------------------------------------------------------------------------------------------
// turnlog: B2's model, tool and loop.

// CALL and STOP: B2's streams (bench/b2-step.ts).

function turnlogSystem(): System {
  const counts: Counts = { model: 0, tool: 0 }
  let call = 0
  const model: ModelAdapter = {
    info: { name: 'bench' },
    async *stream() {
      if (++counts.model % STEPS_PER_TURN === 0) {
        yield* STOP
        return
      }
      const id = `c${++call}`
      for (const c of CALL) yield c.type === 'tool-call-delta' ? { ...c, id } : c
    },
  }
  const add = defineTool({
    name: 'add', description: 'adds', parameters: addSchema(),
    isConcurrencySafe: () => true, execute: ({ a, b }) => (counts.tool++, a + b),
  })
  return {
    name: 'turnlog', label: 'turnlog (createAgent per turn, memory log)', counts,
    setup() {},
    // A fresh agent per turn, as each peer runs a fresh conversation per turn: the per-step figure
    // then includes creating the agent and carries no growth of the log (that is B3).
    async turn() {
      const agent = createAgent({ model, tools: [add], system: 'bench', retry: false })
      agent.followup('go')
      await agent.whenIdle()
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Vercel AI SDK v5: generateText + MockLanguageModelV2, stopWhen: stepCountIs(10).

async function aiSdkSystem(): Promise<System> {
  const { generateText, stepCountIs, tool } = await import('ai')
  const { MockLanguageModelV2 } = await import('ai/test')
  type GenerateResult = Awaited<ReturnType<InstanceType<typeof MockLanguageModelV2>['doGenerate']>>
  const counts: Counts = { model: 0, tool: 0 }
  let call = 0
  const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 }
  const doGenerate = async (): Promise<GenerateResult> => {
    if (++counts.model % STEPS_PER_TURN === 0) {
      return { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage, warnings: [] }
    }
    return {
      content: [{ type: 'tool-call', toolCallId: `c${++call}`, toolName: 'add', input: ARGS_JSON }],
      finishReason: 'tool-calls', usage, warnings: [],
    }
  }
  const tools = {
    add: tool({
      description: 'adds', inputSchema: addSchema(),
      execute: async ({ a, b }: { a: number; b: number }) => (counts.tool++, a + b),
    }),
  }
  let model: InstanceType<typeof MockLanguageModelV2> | undefined
  return {
    name: 'aiSdk', label: 'Vercel AI SDK generateText', counts,
    setup() {
      model = new MockLanguageModelV2({ doGenerate })
    },
    async turn() {
      // the mock records every call's options: drop them so a round does not retain 5,000 prompts
      model!.doGenerateCalls.length = 0
      const r = await generateText({ model: model!, prompt: 'go', tools, stopWhen: stepCountIs(STEPS_PER_TURN) })
      if (r.text !== 'done') throw new Error(`AI SDK: final text '${r.text}'`)
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Vercel AI SDK v6 (installed as the alias `ai6` beside v5): generateText + MockLanguageModelV3.
// v6 speaks the V3 model specification: usage in buckets, finish reasons as { unified, raw }.

async function aiSdk6System(): Promise<System> {
  const { generateText, stepCountIs, tool } = await import('ai6')
  const { MockLanguageModelV3 } = await import('ai6/test')
  type GenerateResult = Awaited<ReturnType<InstanceType<typeof MockLanguageModelV3>['doGenerate']>>
  const counts: Counts = { model: 0, tool: 0 }
  let call = 0
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  }
  const doGenerate = async (): Promise<GenerateResult> => {
    if (++counts.model % STEPS_PER_TURN === 0) {
      return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
    }
    return {
      content: [{ type: 'tool-call', toolCallId: `c${++call}`, toolName: 'add', input: ARGS_JSON }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
    }
  }
  const tools = {
    add: tool({
      description: 'adds', inputSchema: addSchema(),
      execute: async ({ a, b }: { a: number; b: number }) => (counts.tool++, a + b),
    }),
  }
  let model: InstanceType<typeof MockLanguageModelV3> | undefined
  return {
    name: 'aiSdk6', label: 'Vercel AI SDK 6 generateText', counts,
    setup() {
      model = new MockLanguageModelV3({ doGenerate })
    },
    async turn() {
      model!.doGenerateCalls.length = 0
      const r = await generateText({ model: model!, prompt: 'go', tools, stopWhen: stepCountIs(STEPS_PER_TURN) })
      if (r.text !== 'done') throw new Error(`AI SDK 6: final text '${r.text}'`)
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Vercel AI SDK 7 (alias ai7): generateText with MockLanguageModelV4 (specification v4).

async function aiSdk7System(): Promise<System> {
  const major = Number(process.versions.node.split('.')[0])
  if (major < 22) throw new Error(`ai@7 needs Node >= 22 (this is ${process.version})`)
  const { generateText, stepCountIs, tool } = await import('ai7')
  const { MockLanguageModelV4 } = await import('ai7/test')
  type GenerateResult = Awaited<ReturnType<InstanceType<typeof MockLanguageModelV4>['doGenerate']>>
  const counts: Counts = { model: 0, tool: 0 }
  let call = 0
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  }
  const doGenerate = async (): Promise<GenerateResult> => {
    if (++counts.model % STEPS_PER_TURN === 0) {
      return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
    }
    return {
      content: [{ type: 'tool-call', toolCallId: `c${++call}`, toolName: 'add', input: ARGS_JSON }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
    }
  }
  const tools = {
    add: tool({
      description: 'adds', inputSchema: addSchema(),
      execute: async ({ a, b }: { a: number; b: number }) => (counts.tool++, a + b),
    }),
  }
  let model: InstanceType<typeof MockLanguageModelV4> | undefined
  return {
    name: 'aiSdk7', label: 'Vercel AI SDK 7 generateText', counts,
    setup() {
      model = new MockLanguageModelV4({ doGenerate })
    },
    async turn() {
      model!.doGenerateCalls.length = 0
      const r = await generateText({ model: model!, prompt: 'go', tools, stopWhen: stepCountIs(STEPS_PER_TURN) })
      if (r.text !== 'done') throw new Error(`AI SDK 7: final text '${r.text}'`)
    },
  }
}

// ---------------------------------------------------------------------------------------------
// OpenAI Agents JS (agents-core): Runner.run with a fake Model.

async function openaiAgentsSystem(): Promise<System> {
  const { Agent, Runner, Usage, tool } = await import('@openai/agents-core')
  const counts: Counts = { model: 0, tool: 0 }
  let call = 0
  const usage = () => new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 })
  class ScriptModel implements OpenAIModel {
    async getResponse(): Promise<OpenAIModelResponse> {
      if (++counts.model % STEPS_PER_TURN === 0) {
        return {
          usage: usage(),
          output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }],
        }
      }
      return {
        usage: usage(),
        output: [{ type: 'function_call', callId: `c${++call}`, name: 'add', arguments: ARGS_JSON, status: 'completed' }],
      }
    }
    // eslint-disable-next-line require-yield
    async *getStreamedResponse(): AsyncIterable<OpenAIStreamEvent> {
      throw new Error('not used: the benchmark runs without streaming')
    }
  }
  const add = tool({
    name: 'add', description: 'adds', parameters: addSchema(),
    execute: async ({ a, b }) => (counts.tool++, String(a + b)),
  })
  const agent = new Agent({ name: 'bench', instructions: 'bench', model: new ScriptModel(), tools: [add] })
  // tracing off: with it on, spans would go to an exporter (a network call in real use)
  const runner = new Runner({ tracingDisabled: true })
  return {
    name: 'openaiAgents', label: 'OpenAI Agents JS Runner.run', counts,
    setup() {},
    async turn() {
      const r = await runner.run(agent, 'go', { maxTurns: 2 * STEPS_PER_TURN })
      if (r.finalOutput !== 'done') throw new Error(`OpenAI Agents: final output '${String(r.finalOutput)}'`)
    },
  }
}

// ---------------------------------------------------------------------------------------------
// LangGraph.js: createReactAgent with a fake tool-calling chat model.

async function langgraphSystem(): Promise<System> {
  const { BaseChatModel } = await import('@langchain/core/language_models/chat_models')
  const { AIMessage } = await import('@langchain/core/messages')
  const { tool } = await import('@langchain/core/tools')
  const { createReactAgent } = await import('@langchain/langgraph/prebuilt')
  type ChatResult = import('@langchain/core/outputs').ChatResult
  const counts: Counts = { model: 0, tool: 0 }
  let call = 0
  class ScriptChatModel extends BaseChatModel {
    _llmType(): string {
      return 'bench-script'
    }
    async _generate(): Promise<ChatResult> {
      const message = ++counts.model % STEPS_PER_TURN === 0
        ? new AIMessage({ content: 'done' })
        : new AIMessage({ content: '', tool_calls: [{ id: `c${++call}`, name: 'add', args: { ...ARGS }, type: 'tool_call' }] })
      return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] }
    }
    /** The script ignores the tool definitions; binding them is a no-op. */
    override bindTools(): this {
      return this
    }
  }
  const add = tool(async ({ a, b }: { a: number; b: number }) => (counts.tool++, String(a + b)), {
    name: 'add', description: 'adds', schema: addSchema(),
  })
  const graph = createReactAgent({ llm: new ScriptChatModel({}), tools: [add] })
  return {
    name: 'langgraph', label: 'LangGraph.js createReactAgent', counts,
    setup() {},
    async turn() {
      const r = await graph.invoke({ messages: [{ role: 'user', content: 'go' }] })
      const last = r.messages.at(-1)
      if (last?.content !== 'done') throw new Error(`LangGraph: last message '${JSON.stringify(last?.content)}'`)
    },
  }
}

// ---------------------------------------------------------------------------------------------

async function runTurns(sys: System, turns: number): Promise<number> {
  const before = { ...sys.counts }
  await sys.setup()
  const t0 = performance.now()
  for (let t = 0; t < turns; t++) await sys.turn()
  const us = ((performance.now() - t0) * 1000) / (turns * STEPS_PER_TURN)
  const model = sys.counts.model - before.model
  const tool = sys.counts.tool - before.tool
  if (model !== turns * STEPS_PER_TURN || tool !== turns * (STEPS_PER_TURN - 1)) {
    throw new Error(`${sys.name}: ${turns} turns made ${model} model calls and ${tool} tool calls ` +
      `(expected ${turns * STEPS_PER_TURN} and ${turns * (STEPS_PER_TURN - 1)})`)
  }
  return us
}

function errMessage(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0]!.slice(0, 200)
}

/** Installed versions, read from each package's package.json (for the record). */
async function versions(): Promise<Record<string, string>> {
  const { createRequire } = await import('node:module')
  const { readFileSync } = await import('node:fs')
  const { dirname, join } = await import('node:path')
  const require = createRequire(import.meta.url)
  const out: Record<string, string> = {}
  for (const name of ['ai', 'ai6', 'ai7', '@openai/agents-core', '@langchain/langgraph', '@langchain/core', 'zod']) {
    try {
      // the package's main entry, then up to the folder that holds its package.json
      let dir = dirname(require.resolve(name))
      for (let i = 0; i < 6; i++, dir = dirname(dir)) {
        try {
          const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string }
          if (pkg.name === (name === 'ai6' || name === 'ai7' ? 'ai' : name) && pkg.version) {
            out[name] = pkg.version
            break
          }
        } catch { /* keep going up */ }
      }
    } catch { /* not installed */ }
  }
  return out
}

export async function benchPeers(log: (l: string) => void = () => {}): Promise<{ B5: BenchResult }> {
  const turns = envInt('B5_TURNS', 500)
  const warmTurns = envInt('B5_WARMUP_TURNS', 1000)
  const settleTurns = envInt('B5_SETTLE_TURNS', 100)
  const rounds = 3

  const systems: System[] = [turnlogSystem()]
  const skipped: Record<string, string> = {}
  const peers: Array<[System['name'], () => Promise<System>]> = [
    ['aiSdk', aiSdkSystem], ['aiSdk6', aiSdk6System], ['aiSdk7', aiSdk7System], ['openaiAgents', openaiAgentsSystem], ['langgraph', langgraphSystem],
  ]
  // B5_SYSTEMS=aiSdk,langgraph (say) runs only those peers, for diagnosis; turnlog always runs
  const only = process.env.B5_SYSTEMS?.split(',').map((x) => x.trim()).filter(Boolean)
  for (const [name, make] of peers) {
    if (only?.length && !only.includes(name)) {
      skipped[name] = 'not selected (B5_SYSTEMS)'
      continue
    }
    try {
      const sys = await make()
      await runTurns(sys, 1) // a smoke turn: loads lazily imported code, checks the script ran through
      systems.push(sys)
    } catch (err) {
      skipped[name] = errMessage(err)
      log(`  B5: ${name} skipped: ${skipped[name]}`)
    }
  }

  for (const sys of systems) await runTurns(sys, warmTurns)
  const runs: Record<string, number[]> = Object.fromEntries(systems.map((s) => [s.name, []]))
  for (let r = 0; r < rounds; r++) {
    // rotate the order each round, so no system always runs right after the same one
    const order = systems.map((_, i) => systems[(i + r) % systems.length]!)
    for (const sys of order) {
      collectGarbage()
      await runTurns(sys, settleTurns)
      runs[sys.name]!.push(await runTurns(sys, turns))
    }
    log(`  B5 round ${r + 1}: ${order.map((s) => `${s.name} ${runs[s.name]!.at(-1)!.toFixed(1)}`).join(', ')} µs/step`)
  }

  const usPerStep: Record<string, number | null> = { turnlog: null, aiSdk: null, aiSdk6: null, aiSdk7: null, openaiAgents: null, langgraph: null }
  for (const sys of systems) usPerStep[sys.name] = round(median(runs[sys.name]!), 2)
  const peerFigures = systems.filter((s) => s.name !== 'turnlog').map((s) => [s.name, usPerStep[s.name]!] as const)
  const fastest = peerFigures.reduce<readonly [string, number] | null>((best, p) => (best === null || p[1] < best[1] ? p : best), null)
  const turnlog = usPerStep.turnlog!
  const value = fastest ? round(turnlog / fastest[1], 3) : Number.NaN
  log(`  B5: turnlog ${turnlog} µs/step` + peerFigures.map(([n, v]) => `, ${n} ${v}`).join('') +
    (fastest ? `; turnlog / fastest peer (${fastest[0]}) = ${value.toFixed(2)}` : '; no peer ran'))

  return {
    B5: {
      value,
      unit: 'x fastest peer',
      target: '<= 0.6',
      detail: {
        usPerStep,
        fastestPeer: fastest?.[0] ?? null,
        ratioToEachPeer: Object.fromEntries(peerFigures.map(([n, v]) => [n, round(turnlog / v, 3)])),
        runs: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, v.map((x) => round(x, 2))])),
        skipped,
        versions: await versions(),
        node: process.version,
        // the Node version each figure was measured on (one process: the same for all; a merged
        // results file from several Node lines keeps them apart)
        nodeOf: Object.fromEntries(systems.map((s) => [s.name, process.version])),
        turnsPerRun: turns,
        warmupTurns: warmTurns,
        settleTurnsAfterGc: settleTurns,
        stepsPerTurn: STEPS_PER_TURN,
        toolCallsPerTurn: STEPS_PER_TURN - 1,
        notes: [
          'ai@5 (MockLanguageModelV2), ai@6.0.326 (alias ai6, MockLanguageModelV3) and ai@7 (alias ai7, MockLanguageModelV4; node >= 22, skipped on an older Node)',
          '@openai/agents-core@0.14.3: 0.15 and later depend on openai@7, which declares node >= 22; 0.14.x is the newest on openai@6 (node >= 20 compatible)',
          'the machine is shared and noisy: compare the ratio, not the absolute µs',
        ],
        how: {
          turnlog: 'createAgent + memory log; one agent per round, followup("go") + whenIdle() per turn; streaming model adapter (5 chunks per step)',
          aiSdk: 'generateText({ model: MockLanguageModelV2 (doGenerate), tools: { add }, stopWhen: stepCountIs(10) }) per turn',
          aiSdk6: 'the same with ai@6 and MockLanguageModelV3 (V3 usage buckets and finish reasons)',
          aiSdk7: 'the same with ai@7 and MockLanguageModelV4 (specification v4)',
          openaiAgents: 'new Runner({ tracingDisabled: true }).run(agent, "go", { maxTurns: 20 }) per turn; fake Model.getResponse',
          langgraph: 'createReactAgent({ llm: BaseChatModel subclass returning AIMessage.tool_calls, tools: [add] }).invoke per turn',
        },
      },
    },
  }
}
