/** Helpers for the compaction tests: an agent with the plugin, a split script, a big tool, checks. */
import { isDeepStrictEqual } from 'node:util'
import { expect } from 'vitest'
import { z } from 'zod'
import { createAgent, type AgentOptions, type TurnlogAgent } from '../../agent/index.js'
import { basicCompaction, type CompactionOptions, type CompactionPlugin } from '../../compaction/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ModelRequest, type ScriptedEntry, type ScriptedModel } from '../../models/index.js'
import { historyReducer } from '../../reducers/history.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/index.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'

/** A tool result of `n` characters whose head and tail are recognisable. */
export function bigText(n: number, tag = 'r'): string {
  const body = Array.from({ length: Math.ceil(n / 10) }, (_, i) => `${tag}${String(i).padStart(8, '0')}|`).join('')
  return `HEAD-${tag}:` + body.slice(0, Math.max(0, n - 2 * (tag.length + 6))) + `:TAIL-${tag}`
}

export const bigTool = defineTool({
  name: 'big',
  description: 'returns n characters',
  parameters: z.object({ n: z.number(), tag: z.string().optional() }),
  isConcurrencySafe: () => true,
  execute: ({ n, tag }) => bigText(n, tag),
})

export interface Made {
  agent: TurnlogAgent
  model: ScriptedModel
  plugin: CompactionPlugin
  errors: Array<{ error: unknown; where: string }>
  /** Turn requests with the log length when each was sent. */
  turnRequests: Array<{ request: ModelRequest; at: number }>
  /** Compaction requests with the log length when each was sent. */
  summaryRequests: Array<{ request: ModelRequest; at: number }>
}

/**
 * An agent whose model answers turn requests from `turns` and summary requests from `summaries`
 * (both in order), with the compaction plugin. Running out of either script throws in the model.
 */
export function make(
  turns: readonly ScriptedEntry[],
  summaries: readonly ScriptedEntry[],
  copts: CompactionOptions = {},
  aopts: Partial<AgentOptions> = {},
  contextWindow?: number,
): Made {
  const made = { turnRequests: [], summaryRequests: [], errors: [] } as unknown as Made
  let t = 0
  let s = 0
  const model = scriptedModel((req) => {
    const compaction = req.purpose === 'compaction'
    const list = compaction ? summaries : turns
    const i = compaction ? s++ : t++
    const entry = list[i]
    if (entry === undefined) return { throw: new Error(`${compaction ? 'summary' : 'turn'} script exhausted at #${i + 1}`) }
    return entry
  }, { info: { name: 'scripted', ...(contextWindow !== undefined ? { contextWindow } : {}) } })
  const inner = model.stream.bind(model)
  ;(model as { stream: ScriptedModel['stream'] }).stream = (request, signal) => {
    const list = request.purpose === 'compaction' ? made.summaryRequests : made.turnRequests
    list.push({ request, at: made.agent.events.length })
    return inner(request, signal)
  }
  const plugin = basicCompaction(copts)
  const agent = createAgent({
    model,
    tools: [bigTool],
    system: 'sys',
    clock: fakeClock(),
    ids: counterIds('m'),
    timers: instantTimers(),
    checkRequests: 'full',
    plugins: [plugin],
    ...aopts,
  }) as TurnlogAgent
  agent.on('agent/error', (e) => made.errors.push({ error: e.error, where: e.where }))
  Object.assign(made, { agent, model, plugin })
  return made
}

/** Every L invariant holds (L14, L15 among them). */
export function expectValid(events: readonly LogEvent[]): void {
  expect(verify(events).violations).toEqual([])
}

/** R3: every turn request equals the history the log rebuilds at that seq (and no driver defect). */
export function expectRequestsFromLog(m: Made): void {
  expect(m.errors.filter((e) => e.where === 'driver')).toEqual([])
  const events = m.agent.events
  for (const { request, at } of m.turnRequests) {
    const h = historyReducer.initial()
    for (let i = 0; i < at; i++) historyReducer.apply(h, events[i]!)
    expect(isDeepStrictEqual(request.messages, h.messages)).toBe(true)
  }
}

/** Text of a message's text blocks. */
export function textOf(m: { content: ReadonlyArray<{ type: string; text?: string }> }): string {
  return m.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
}

/** Compact trace of compaction-relevant events (plus turn and step boundaries). */
export function ctrace(events: readonly LogEvent[]): string[] {
  const out: string[] = []
  for (const e of events) {
    const d = e.data as Record<string, any>
    const op = e.surfaceOp && e.surfaceOp !== 'append' ? ` replace ${e.surfaceOp.start}..${e.surfaceOp.end}` : ''
    switch (e.type) {
      case 'turn/start': out.push(d.cause ? `turn/start ${d.turn} retry-of ${d.cause.of}` : `turn/start ${d.turn}`); break
      case 'turn/end': out.push(`turn/end ${d.turn} ${d.reason.kind}${d.reason.failure ? ` ${d.reason.failure.code}` : ''}${d.reason.cause ? ` ${d.reason.cause.kind}` : ''}`); break
      case 'step/start': out.push(`step/start ${d.turn}.${d.step}`); break
      case 'step/end': out.push(`step/end ${d.turn}.${d.step} ${d.outcome.kind}${d.outcome.failure ? ` ${d.outcome.failure.code}` : ''}`); break
      case 'user/message': out.push(`user/message ${d.message.source.kind}${op}`); break
      case 'assistant/message': out.push(`assistant/message ${d.finish}`); break
      case 'tool/result': out.push(`tool/result ${d.callId}${op}`); break
      case 'llm/retry': out.push(`llm/retry ${d.attempt} ${d.failure.code}`); break
      case 'compaction/start': out.push('compaction/start'); break
      case 'compaction/summary': out.push(`compaction/summary [${d.shadowedSeqs.join(',')}]`); break
      case 'compaction/prune': out.push(`compaction/prune ${d.callId} ${d.shadowedSeq} ${d.originalChars}`); break
      case 'compaction/end': out.push(`compaction/end${d.error ? ` ${d.error.code}` : ''}`); break
      default: break
    }
  }
  return out
}
