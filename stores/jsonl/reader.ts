/** The jsonl store's read handle: a snapshot of the complete records at open (decoded once). */
import type { LogEvent } from '../../events/envelope.js'
import type { LogHeader, TornTail } from '../../events/jsonl.js'
import type { LogReader } from '../types.js'
import { checkFrom, fromMemory } from './io.js'
import { streamLog, type LogFiles, type Scan } from './scan.js'

export class JsonlReader implements LogReader {
  readonly mode = 'read' as const
  readonly header: LogHeader
  readonly length: number
  readonly torn?: TornTail
  readonly #limit: number
  readonly #events: readonly LogEvent[] | undefined

  constructor(readonly store: LogFiles, readonly sessionId: string, readonly file: string, scan: Scan) {
    this.header = scan.header
    this.length = scan.count
    if (scan.torn) this.torn = scan.torn
    this.#limit = scan.completeBytes
    this.#events = scan.events
  }

  events(fromSeq?: number): AsyncIterable<LogEvent> {
    const from = checkFrom(fromSeq, this.sessionId)
    const kept = this.#events
    if (kept !== undefined) return fromMemory(kept, from)
    return streamLog(this.store, this.sessionId, this.file, this.#limit, from)
  }

  async close(): Promise<void> {}
}

