/**
 * The scripted session behind `turnlog demo`: a real `createAgent` run against `scriptedModel`,
 * with two tools, steering while tools run, a prompt rejected by an `agent/pre-step` listener, and
 * a transient failure that is retried. Deterministic: a counting clock and ids, instant retry sleeps,
 * jitter fixed; the only real wait is the slow search tool (tens of milliseconds).
 */
import { z } from 'zod'
import { createAgent, type HookMap } from '../agent/index.js'
import type { LogEvent, UserMessage } from '../events/index.js'
import type { LogHeader } from '../events/jsonl.js'
import { scriptedModel, type ScriptedEntry } from '../models/index.js'
import { defineTool } from '../tools/index.js'

export const DEMO_FORBIDDEN_WORD = 'password'

export interface DemoOptions {
  /** Real wait of the search tool, in ms. Default 40. */
  searchDelayMs?: number
  /** Session id. Default `demo-<time>`. */
  sessionId?: string
  /** Start of the demo clock (epoch ms). Default `Date.now()`. */
  startTime?: number
}

export interface DemoResult {
  header: LogHeader
  events: readonly LogEvent[]
  /** The prompts, in the order they were sent. */
  prompts: string[]
}

const TEMPS: Record<string, { tempC: number; sky: string }> = {
  paris: { tempC: 21, sky: 'sunny' },
  tokyo: { tempC: 18, sky: 'light rain' },
}

const u = (inputTokens: number, outputTokens: number, cacheReadTokens?: number) =>
  (cacheReadTokens === undefined ? { inputTokens, outputTokens } : { inputTokens, outputTokens, cacheReadTokens })

/** What the scripted model answers, request by request (a blocked turn sends no request). */
export const DEMO_SCRIPT: readonly ScriptedEntry[] = [
  // turn 1, step 1: three tool calls (two parallel-safe weather lookups, one slow search)
  {
    reasoning: 'Two cities: look both up, and search for what is on this weekend.',
    toolCalls: [
      { name: 'weather', args: { city: 'Paris' } },
      { name: 'weather', args: { city: 'Tokyo' } },
      { name: 'search', args: { query: 'outdoor events Paris Tokyo this weekend' } },
    ],
    usage: u(180, 64),
  },
  // turn 1, step 2: the steer ("one sentence") entered at the step boundary
  {
    text: 'Paris is sunny at 21 °C and Tokyo has light rain at 18 °C, so the open-air cinema in Paris is the better bet this weekend.',
    usage: u(412, 38, 160),
  },
  // turn 2 (the prompt with the forbidden word) is blocked before any request
  // turn 3: a rate limit, retried in turn 4
  { error: { code: 'RATE_LIMIT', message: 'slow down (scripted)', retryAfterMs: 250 }, usage: u(460, 0) },
  { toolCalls: [{ name: 'weather', args: { city: 'Paris' } }], usage: u(460, 17, 400) },
  { text: 'Still 21 °C and sunny in Paris: take sunglasses, no umbrella.', usage: u(512, 15, 440) },
]

/** The demo's tools (`turnlog reexec demo.jsonl --tools examples/demo-tools.mjs` uses them). */
export function demoTools(searchDelayMs = 40, searchGate?: Promise<void>) {
  const weather = defineTool({
    name: 'weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string() }),
    isConcurrencySafe: () => true,
    execute: async ({ city }) => ({ city, ...(TEMPS[city.toLowerCase()] ?? { tempC: 15, sky: 'cloudy' }) }),
  })
  const search = defineTool({
    name: 'search',
    description: 'Search the web (slow)',
    parameters: z.object({ query: z.string() }),
    isConcurrencySafe: () => true,
    execute: async ({ query }, { signal }) => {
      // the demo's steer must land while this call runs: wait for it, then for the delay (a race
      // between the steer and a bare timer made the session order depend on the machine's load)
      if (searchGate) await searchGate
      await new Promise<void>((resolve, reject) => {
        const h = setTimeout(resolve, searchDelayMs)
        signal.addEventListener('abort', () => {
          clearTimeout(h)
          reject(signal.reason)
        }, { once: true })
      })
      return { query, results: ['Open-air cinema, Parc de la Villette (Paris)', 'Tea ceremony workshop, indoors (Tokyo)'] }
    },
  })
  return [weather, search]
}

/** The demo's hooks: refuse any prompt that mentions the forbidden word (the turn ends `blocked`). */
export const demoHooks: { 'agent/pre-step': HookMap['agent/pre-step'] } = {
  'agent/pre-step': async (p, next) => {
    const text = p.messages.flatMap((m: UserMessage) => m.content.map((b) => (b.type === 'text' ? b.text : ''))).join(' ')
    if (text.toLowerCase().includes(DEMO_FORBIDDEN_WORD)) return { kind: 'reject', reason: `mentions '${DEMO_FORBIDDEN_WORD}'` }
    return next()
  },
}

export async function runDemoSession(opts: DemoOptions = {}): Promise<DemoResult> {
  const searchDelayMs = opts.searchDelayMs ?? 40
  const start = opts.startTime ?? Date.now()
  let t = start
  let n = 0

  // the slow search waits for the steer (below) before its timer starts, so the steer always enters
  // while the step's tools run, whatever the load: the session is the same on every run
  let steerSent!: () => void
  const steerGate = new Promise<void>((resolve) => (steerSent = resolve))
  const tools = demoTools(searchDelayMs, steerGate)

  const agent = createAgent({
    model: scriptedModel(DEMO_SCRIPT, { info: { name: 'scripted-demo' } }),
    tools,
    system: 'You are a helpful travel assistant.',
    sessionId: opts.sessionId ?? `demo-${start}`,
    clock: () => t++,
    ids: () => `m${++n}`,
    // the retry waits are logged (llm/retry.delayMs) but not slept: the demo stays fast
    timers: { sleep: async () => {}, random: () => 0.5 },
    hooks: demoHooks,
  })
  const errors: unknown[] = []
  agent.on('agent/error', (e) => void errors.push(e.error))

  // steer while the step's tools run: as soon as the slow search's tool/call is logged
  let steered = false
  const unsubscribe = agent.subscribe((e) => {
    if (!steered && e.type === 'tool/call' && (e.data as { name: string }).name === 'search') {
      steered = true
      setImmediate(() => {
        agent.steer('Keep it to one sentence, please.')
        steerSent()
      })
    }
  })

  const prompts = [
    'What is the weather in Paris and Tokyo, and what should I do this weekend?',
    `By the way, my ${DEMO_FORBIDDEN_WORD} is hunter2, remember it.`,
    'And tomorrow in Paris?',
  ]
  for (const p of prompts) {
    agent.followup(p)
    await agent.whenIdle()
  }
  unsubscribe()
  const events = agent.events
  await agent.dispose()
  if (errors.length) throw errors[0]
  const header: LogHeader = { type: 'session', format: 1, id: agent.sessionId, createdAt: start }
  return { header, events, prompts }
}
