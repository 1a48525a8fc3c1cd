/**
 * `turnlog inspect`: the page follows the log over Server-Sent Events from the server that served
 * it (`events?from=SEQ`, same origin; each message a JSON array of events). Only the event whose
 * seq is the next one is taken, so a reconnect that sends events again adds nothing twice.
 */
import type { LogEvent } from '../../events/envelope.js'

export function follow(events: LogEvent[], onAppended: () => void, onStatus: (text: string) => void): void {
  const es = new EventSource(`events?from=${events.length}`)
  es.addEventListener('message', (m) => {
    let batch: unknown
    try {
      batch = JSON.parse(m.data as string)
    } catch {
      return
    }
    const before = events.length
    for (const e of Array.isArray(batch) ? batch : [batch]) {
      const ev = e as LogEvent
      if (ev && typeof ev === 'object' && ev.seq === events.length) events.push(ev)
    }
    if (events.length > before) onAppended()
  })
  es.addEventListener('error', () => onStatus(es.readyState === EventSource.CLOSED ? '○ disconnected' : '● reconnecting'))
  es.addEventListener('open', () => onStatus('● live'))
}
