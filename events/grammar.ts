/**
 * The stream-chunk grammar (docs/spec/events.md "Stream chunks"), as an incremental checker with O(1) state
 * per open block. Used by the model seam (a violation fails the step with STREAM_GRAMMAR) and by
 * the log checker (L9).
 */
import type { StreamChunk } from './chunks.js'

type BlockType = 'text' | 'reasoning' | 'tool-call'
const DELTA_OF: Record<string, BlockType> = {
  'text-delta': 'text',
  'reasoning-delta': 'reasoning',
  'tool-call-delta': 'tool-call',
}

export class StreamGrammar {
  /** index → block type while open; 'ended' once closed. */
  readonly #blocks = new Map<number, BlockType | 'ended'>()
  #open = 0
  #usage = false
  #finished = false

  /** True once a `finish` chunk was accepted. */
  get finished(): boolean {
    return this.#finished
  }

  /** Checks one chunk; returns null when it fits, else a message saying what rule it breaks. */
  push(chunk: StreamChunk): string | null {
    if (this.#finished) return `chunk ${chunk.type} after finish`
    switch (chunk.type) {
      case 'block-start': {
        if (this.#blocks.has(chunk.index)) return `block ${chunk.index} started twice`
        this.#blocks.set(chunk.index, chunk.blockType)
        this.#open++
        return null
      }
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-call-delta': {
        const t = this.#blocks.get(chunk.index)
        if (t === undefined || t === 'ended') return `${chunk.type} for block ${chunk.index}, which is not open`
        if (t !== DELTA_OF[chunk.type]) return `${chunk.type} in a ${t} block (${chunk.index})`
        return null
      }
      case 'block-end': {
        const t = this.#blocks.get(chunk.index)
        if (t === undefined) return `block-end for block ${chunk.index}, which never started`
        if (t === 'ended') return `block ${chunk.index} ended twice`
        this.#blocks.set(chunk.index, 'ended')
        this.#open--
        return null
      }
      case 'block': {
        // a whole block: starts and ends in one chunk (issue 23)
        if (this.#blocks.has(chunk.index)) return `block ${chunk.index} started twice`
        this.#blocks.set(chunk.index, 'ended')
        return null
      }
      case 'response-metadata':
      case 'warning':
        return null
      case 'usage':
        if (this.#usage) return 'a second usage chunk'
        this.#usage = true
        return null
      case 'finish':
        if (this.#open > 0) return `finish with ${this.#open} block(s) still open`
        this.#finished = true
        return null
    }
  }
}
