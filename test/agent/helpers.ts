/** Test helpers for the agent: deterministic clock and ids, instant timers, compact traces. */
import type { LogEvent } from '../../events/index.js'
import type { Timers } from '../../agent/types.js'

export function fakeClock(start = 1764450000000): () => number {
  let t = start
  return () => t++
}

export function counterIds(prefix = 'm'): () => string {
  let n = 0
  return () => `${prefix}${++n}`
}

/** Timers that never sleep: `sleep` resolves on the next microtask; timeouts never fire unless run. */
export function instantTimers(): Timers & { slept: number[] } {
  const slept: number[] = []
  return {
    slept,
    sleep: async (ms) => {
      slept.push(ms)
    },
    random: () => 0.5,
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  }
}

/** One short line per event: the type plus the facts that matter for lifecycle tests. */
export function trace(events: readonly LogEvent[]): string[] {
  return events.map((e) => {
    const d = e.data as Record<string, any>
    switch (e.type) {
      case 'turn/start':
        return d.cause ? `turn/start ${d.turn} retry-of ${d.cause.of}` : `turn/start ${d.turn}`
      case 'turn/end':
        return `turn/end ${d.turn} ${d.reason.kind}${d.reason.cause ? ` ${d.reason.cause.kind}` : ''}${d.reason.failure ? ` ${d.reason.failure.code}` : ''}`
      case 'step/start':
        return `step/start ${d.turn}.${d.step}`
      case 'step/end':
        return `step/end ${d.turn}.${d.step} ${d.outcome.kind}${d.outcome.failure ? ` ${d.outcome.failure.code}` : ''}`
      case 'user/message':
        return `user/message ${d.message.id}`
      case 'assistant/chunk':
        return 'chunk'
      case 'assistant/message':
        return `assistant/message ${d.finish}${d.interrupted ? ' interrupted' : ''}`
      case 'tool/call':
        return `tool/call ${d.callId} ${d.name}`
      case 'tool/result':
        return `tool/result ${d.callId}${d.error ? ` ${d.error.code}` : ''}`
      case 'agent/inbox/spliced':
        return `splice ${d.target} ${d.start} -${d.removedCount ?? 0} +[${d.inserted.map((m: any) => m.id).join(',')}]${d.outcome ? ` ${d.outcome}` : ''}`
      case 'llm/retry':
        return `llm/retry ${d.attempt} ${d.failure.code}`
      case 'request/header':
        return `request/header ${d.reason}`
      default:
        return e.type
    }
  }).filter((l) => l !== 'chunk')
}
