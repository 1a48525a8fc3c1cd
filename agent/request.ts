/**
 * Building the frozen model request and checking "model-visible means logged" (R3): every request
 * the driver sends must equal what the log rebuilds at that seq.
 */
import { deepEqual as isDeepStrictEqual } from '../events/deep-equal.js'
import type { EventDataMap, LogEvent, ModelMessage } from '../events/index.js'
import type { ModelRequest } from '../models/index.js'
import { historyReducer } from '../reducers/history.js'

type Header = EventDataMap['request/header']

/** The request the log describes: the last logged header and the given surface history. */
export function requestFromLog(header: Header, messages: readonly ModelMessage[]): ModelRequest {
  return { messages, system: header.system, tools: header.tools, config: header.config }
}

/** Re-folds the whole log's history (for `checkRequests: 'full'`). O(log). */
export function historyFromLog(events: readonly LogEvent[]): ModelMessage[] {
  const s = historyReducer.initial()
  for (const e of events) historyReducer.apply(s, e)
  return s.messages
}

/** Returns null when `sent` equals `logged`, else the first member that differs. */
export function requestMismatch(sent: ModelRequest, logged: ModelRequest, everyMessage = true): string | null {
  if (sent.system !== logged.system) return 'system'
  if (!isDeepStrictEqual(sent.config, logged.config)) return 'config'
  if (sent.tools !== logged.tools && !isDeepStrictEqual(sent.tools, logged.tools)) return 'tools'
  if (sent.messages.length !== logged.messages.length) return `messages (length ${sent.messages.length} vs ${logged.messages.length})`
  if (!everyMessage) {
    const n = sent.messages.length
    return n > 0 && sent.messages[n - 1] !== logged.messages[n - 1] ? `messages[${n - 1}]` : null
  }
  for (let i = 0; i < sent.messages.length; i++) {
    const a = sent.messages[i]
    const b = logged.messages[i]
    if (a !== b && !isDeepStrictEqual(a, b)) return `messages[${i}]`
  }
  return null
}

/** True when the header to send differs from the last logged one (a new `request/header` is due). */
export function headerChanged(last: Header | null, system: string, tools: readonly Header['tools'][number][], config: Header['config']): boolean {
  return last === null || last.system !== system || !isDeepStrictEqual(last.config, config) || !isDeepStrictEqual(last.tools, tools)
}
