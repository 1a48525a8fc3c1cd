/**
 * L8, the surface rules. The surface is kept as a doubly linked list of seqs with an order key
 * per node (appends take a fresh, larger key; a replacement takes the key of the first node it
 * hides), so "start not after end" is a key comparison and a replace costs O(range).
 */
import { SURFACE_TYPES } from '../data.js'
import type { SessionEvent } from '../envelope.js'
import type { Emit } from './types.js'

interface Node {
  seq: number
  key: number
  prev: Node | null
  next: Node | null
  type: string
  /** For a `tool/result` node: what a replacement must keep. */
  callId?: string
  turn?: number
  step?: number
}

export class SurfaceState {
  readonly #nodes = new Map<number, Node>()
  #head: Node | null = null
  #tail: Node | null = null
  #keys = 0
  /** The replacement generation: how many replacements were committed. */
  generation = 0

  /** The current surface seqs, in order (for tests and debugging; O(surface)). */
  seqs(): number[] {
    const out: number[] = []
    for (let n = this.#head; n !== null; n = n.next) out.push(n.seq)
    return out
  }

  check(e: SessionEvent, emit: Emit, at: number = e.seq): void {
    if (!SURFACE_TYPES.has(e.type)) {
      if (e.surfaceOp !== undefined) emit('L8', `surfaceOp on ${e.type}, which is not a surface type`)
      if (e.sourceEventSeqs !== undefined) emit('L8', `sourceEventSeqs on ${e.type}, which is not a surface type`)
      return
    }
    const op = e.surfaceOp
    if (op === undefined) emit('L8', `${e.type} without surfaceOp`)
    const src = e.sourceEventSeqs
    if (src !== undefined) {
      if (src.length === 0 && e.type !== 'assistant/message') emit('L8', `empty sourceEventSeqs on ${e.type}`)
      const seen = new Set<number>()
      for (const s of src) {
        if (s >= at) {
          emit('L8', `sourceEventSeqs cites seq ${s}, which is not earlier than ${at}`)
          break
        }
        if (seen.has(s)) {
          emit('L8', `sourceEventSeqs cites seq ${s} twice`)
          break
        }
        seen.add(s)
      }
    }
    if (op === undefined || op === 'append') return
    const a = this.#nodes.get(op.start)
    const b = this.#nodes.get(op.end)
    if (a === undefined) emit('L8', `replace start ${op.start} is not a current surface seq`)
    if (b === undefined) emit('L8', `replace end ${op.end} is not a current surface seq`)
    if (a === undefined || b === undefined) return
    if (a.key > b.key) {
      emit('L8', `replace start ${op.start} comes after end ${op.end} on the surface`)
      return
    }
    const cited = new Set(src ?? [])
    const missing: number[] = []
    for (let n: Node | null = a; n !== null; n = n === b ? null : n.next) if (!cited.has(n.seq)) missing.push(n.seq)
    if (missing.length > 0) emit('L8', `replace hides seq(s) ${missing.join(', ')} that sourceEventSeqs does not list`)
    if (e.type === 'tool/result') {
      const d = e.data
      if (a !== b) emit('L8', `a tool/result replacement hides a range (${op.start}..${op.end}), not exactly one tool/result`)
      else if (a.type !== 'tool/result') emit('L8', `a tool/result replacement hides seq ${a.seq}, which is not a tool/result but ${a.type}`)
      else if (a.callId !== d.callId || a.turn !== d.turn || a.step !== d.step) {
        emit('L8', `a tool/result replacement (${d.turn}.${d.step} ${d.callId}) does not keep the hidden result's ` +
          `turn, step and callId (${a.turn}.${a.step} ${a.callId})`)
      }
    }
  }

  apply(e: SessionEvent, at: number = e.seq): void {
    if (!SURFACE_TYPES.has(e.type) || e.surfaceOp === undefined || this.#nodes.has(at)) return
    const node: Node = { seq: at, key: 0, prev: null, next: null, type: e.type }
    if (e.type === 'tool/result') {
      node.callId = e.data.callId
      node.turn = e.data.turn
      node.step = e.data.step
    }
    const op = e.surfaceOp
    const a = op === 'append' ? undefined : this.#nodes.get(op.start)
    const b = op === 'append' ? undefined : this.#nodes.get(op.end)
    if (a === undefined || b === undefined || a.key > b.key) {
      // An append, or (best effort, after a violation) a replace that cannot be applied.
      node.key = ++this.#keys
      node.prev = this.#tail
      if (this.#tail) this.#tail.next = node
      else this.#head = node
      this.#tail = node
      this.#nodes.set(node.seq, node)
      return
    }
    for (let n: Node | null = a; n !== null; n = n === b ? null : n.next) this.#nodes.delete(n.seq)
    node.key = a.key
    node.prev = a.prev
    node.next = b.next
    if (a.prev) a.prev.next = node
    else this.#head = node
    if (b.next) b.next.prev = node
    else this.#tail = node
    this.#nodes.set(node.seq, node)
    this.generation++
  }
}
