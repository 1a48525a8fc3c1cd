/**
 * When a served tool body settles (docs/spec/lifecycle.md §5, seen from a re-run). The scheduler logs a step's
 * `tool/call`s and `tool/result`s in an order that depends on the order its bodies settle in: a
 * settlement frees a pool slot (the next parallel call's `tool/call`) and may complete the
 * model-order prefix (the next `tool/result`s). The golden's bodies settled in their own order;
 * a recorded result served at once would settle in start order, and a later `tool/call` would land
 * after a `tool/result` it preceded in the golden (round 14's divergence, seeds 1077737493 and
 * 558058480).
 *
 * So a served body is held, and so is each call's `tools/pre-execute` (an outermost pass-through
 * listener: with a deciding listener the start loop waits for each verdict before the next call
 * starts, docs/spec/lifecycle.md §9, and the golden's listeners took their time). A pump releases them when the
 * re-run is quiet (one macrotask turn: every microtask drained), reading the golden's next event,
 * as the replay engine's pump does (replay/reexecute/serve.ts):
 * - the `tool/result` of a call: its pre-execute, then its body, then its commit (the outermost
 *   `tools/post-execute` listener holds a commit whose result the golden does not log next);
 * - a `tool/approval-requested`: the asking call's pre-execute;
 * - a `tool/call`: the pre-execute under way (the start loop may wait for its verdict); else, while
 *   every pool slot is taken, one body frees a slot without logging a result — the held body
 *   with the highest index that is not the next to commit; the next to commit only when it is the
 *   only one (its result then races the start, as in the golden);
 * - anything else: nothing yet (an input, a decision or a hook will move the re-run).
 * Never a wedge: once the re-run's log departs from the golden's (another event type or call at a
 * seq), everything is released and nothing more is held; a pump that finds nothing to do twice in
 * a row at one log length looks past other events to the step's next call or result, and failing
 * that releases the first held thing; `close()` releases everything.
 */
import { PASS_THROUGH } from '../agent/hooks.js'
import type { EventOf, LogEvent } from '../events/index.js'
import type { PostExecutePayload, PreExecutePayload, ToolContext } from '../tools/types.js'

interface Body {
  key: string
  turn: number
  step: number
  /** The call's place in the step's model order (its assistant message's tool calls). */
  index: number
  /** Held: resolves to let the served body settle. */
  release: (() => void) | null
}

const keyOf = (turn: number, step: number, callId: string): string => `${turn}.${step}.${callId}`

/** Quiet pumps in a row at one log length before the pump looks past the golden's next event. */
const QUIET_ROUNDS = 2

export class SettleOrder {
  readonly #golden = new Map<number, LogEvent>()
  /** Every body running now (held or not), by call key. */
  readonly #running = new Map<string, Body>()
  /** Held `tools/pre-execute` listeners, by call key. */
  readonly #pre = new Map<string, Body>()
  /** Held `tools/post-execute` listeners (commits), by call key. */
  readonly #post = new Map<string, Body>()
  /** Serve at once: the re-run departed from the golden, or the run is over. */
  #off = false
  #scheduled = false
  #quiet = 0
  #lastLen = -1

  constructor(golden: readonly LogEvent[], readonly cap: number, readonly events: () => readonly LogEvent[]) {
    for (const e of golden) this.#golden.set(e.seq, e)
  }

  /** A body started (every wrapped body, held or not: a running body holds a pool slot). */
  started(ctx: ToolContext): void {
    const key = keyOf(ctx.turn, ctx.step, ctx.callId)
    this.#running.set(key, { key, turn: ctx.turn, step: ctx.step, index: this.#indexOf(ctx.turn, ctx.step, ctx.callId), release: null })
  }

  /** A body settled. */
  settled(ctx: ToolContext): void {
    this.#running.delete(keyOf(ctx.turn, ctx.step, ctx.callId))
  }

  /**
   * The outermost `tools/pre-execute` listener: passes the payload through once the golden's order
   * lets the call's verdict be known. A pass-through: it does not make the start loop wait for
   * verdicts (docs/spec/lifecycle.md §9) where the listeners under test would not.
   */
  readonly preExecute = Object.assign(async (p: PreExecutePayload, next: (p?: PreExecutePayload) => Promise<unknown>): Promise<unknown> => {
    if (!this.#off) {
      const key = keyOf(p.turn, p.step, p.call.id)
      await new Promise<void>((resolve) => {
        this.#pre.set(key, { key, turn: p.turn, step: p.step, index: this.#indexOf(p.turn, p.step, p.call.id), release: resolve })
        this.#schedule()
      })
    }
    return next()
  }, { [PASS_THROUGH]: true as const })

  /**
   * The outermost `tools/post-execute` listener: a commit whose `tool/result` is not the golden's
   * next event waits until it is (seed 457230189: a body settled early to free a slot; once the call
   * before it committed, its own commit followed at once, where the golden logged the next call's
   * approval request first — the golden's commit waited for its hooks). When it is the next event
   * it passes through at once, so the commit loop's race with the start loop stays as it was.
   */
  readonly postExecute = Object.assign((p: PostExecutePayload, next: (p?: PostExecutePayload) => Promise<unknown>): Promise<unknown> => {
    const key = keyOf(p.turn, p.step, p.call.id)
    const g = this.#golden.get(this.events().length)
    if (this.#off || (g?.type === 'tool/result' && keyOf(p.turn, p.step, (g as EventOf<'tool/result'>).data.callId) === key)) return next()
    return new Promise<void>((resolve) => {
      this.#post.set(key, { key, turn: p.turn, step: p.step, index: this.#indexOf(p.turn, p.step, p.call.id), release: resolve })
      this.#schedule()
    }).then(() => next())
  }, { [PASS_THROUGH]: true as const })

  /** Resolves when the served body of `ctx`'s call may settle (at once when the order is off). */
  hold(ctx: ToolContext): Promise<void> {
    const b = this.#running.get(keyOf(ctx.turn, ctx.step, ctx.callId))
    if (this.#off || b === undefined) return Promise.resolve()
    return new Promise<void>((resolve) => {
      b.release = resolve
      this.#schedule()
    })
  }

  /** The re-run appended `e` (its `subscribe`): a departure from the golden turns holding off. */
  onAppend(e: LogEvent): void {
    if (this.#off) return
    const g = this.#golden.get(e.seq)
    if (g === undefined || g.type !== e.type || !sameCall(g, e)) {
      this.close()
      return
    }
    this.#schedule()
  }

  /** Releases every held body; later ones are served at once. */
  close(): void {
    this.#off = true
    for (const b of this.#pre.values()) this.#release(b)
    for (const b of this.#post.values()) this.#release(b)
    for (const b of this.#running.values()) this.#release(b)
  }

  /** What is held: pre-execute listeners first, then commits, then bodies (each in model order). */
  #held(): Body[] {
    const byIndex = (x: Body, y: Body) => x.index - y.index
    return [...[...this.#pre.values()].sort(byIndex), ...[...this.#post.values()].sort(byIndex),
      ...[...this.#running.values()].filter((b) => b.release !== null).sort(byIndex)]
  }

  #release(b: Body): void {
    const r = b.release
    if (r === null) return
    b.release = null
    if (this.#pre.get(b.key) === b) this.#pre.delete(b.key)
    if (this.#post.get(b.key) === b) this.#post.delete(b.key)
    r()
  }

  #schedule(): void {
    if (this.#scheduled || this.#off) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      this.#pump()
    })
  }

  #pump(): void {
    if (this.#off || this.#held().length === 0) return
    const len = this.events().length
    if (len !== this.#lastLen) {
      this.#lastLen = len
      this.#quiet = 0
    }
    if (this.#act(this.#golden.get(len))) {
      this.#quiet = 0
    } else if (++this.#quiet >= QUIET_ROUNDS) {
      // nothing the golden's next event asks for: the step's next call or result further on, else
      // the lowest held body (an input or a decision the re-run issues elsewhere must not wedge it)
      this.#quiet = 0
      if (!this.#act(this.#lookahead(len))) {
        const first = this.#held()[0]
        if (first !== undefined) this.#release(first)
      }
    }
    this.#schedule()
  }

  /** Releases what `next` asks for; true when it released a body. */
  #act(next: LogEvent | undefined): boolean {
    if (next === undefined) return false
    if (next.type === 'tool/result' || next.type === 'tool/approval-requested') {
      const d = next.data as { turn: number; step: number; callId: string }
      const key = keyOf(d.turn, d.step, d.callId)
      const pre = this.#pre.get(key) ?? (next.type === 'tool/result' ? this.#post.get(key) : undefined)
      if (pre !== undefined) {
        this.#release(pre)
        return true
      }
      const b = this.#running.get(key)
      if (next.type !== 'tool/result' || b === undefined || b.release === null) return false
      this.#release(b)
      return true
    }
    if (next.type !== 'tool/call') return false
    const d = (next as EventOf<'tool/call'>).data
    // the verdict under way first: with a deciding listener the next call starts only after it
    const pre = [...this.#pre.values()].find((b) => b.turn === d.turn && b.step === d.step)
    if (pre !== undefined) {
      this.#release(pre)
      return true
    }
    const inStep = [...this.#running.values()].filter((b) => b.turn === d.turn && b.step === d.step)
    // a slot is free (or the call waits for something else: a commit, a decision): no settlement needed
    if (inStep.length < this.cap) return false
    const frontier = Math.min(...inStep.map((b) => b.index))
    const held = inStep.filter((b) => b.release !== null).sort((x, y) => y.index - x.index)
    const pick = held.find((b) => b.index !== frontier) ?? held[0]
    if (pick === undefined) return false
    this.#release(pick)
    return true
  }

  /** The golden's next `tool/call` or `tool/result` at or after `len`, within the open step. */
  #lookahead(len: number): LogEvent | undefined {
    for (let i = len; ; i++) {
      const e = this.#golden.get(i)
      if (e === undefined || e.type === 'step/end' || e.type === 'turn/end') return undefined
      if (e.type === 'tool/call' || e.type === 'tool/result' || e.type === 'tool/approval-requested') return e
    }
  }

  /** The call's index in its step's assistant message (the scheduler's model order). */
  #indexOf(turn: number, step: number, callId: string): number {
    const ev = this.events()
    for (let i = ev.length - 1; i >= 0; i--) {
      const e = ev[i]!
      if (e.type !== 'assistant/message') continue
      const d = (e as EventOf<'assistant/message'>).data
      if (d.turn !== turn || d.step !== step) continue
      const ids = d.message.content.filter((b) => b.type === 'tool-call').map((b) => (b as { id: string }).id)
      const i2 = ids.indexOf(callId)
      return i2 >= 0 ? i2 : ids.length
    }
    return 0
  }
}

/** For tool events: the same call (turn, step, call id). */
function sameCall(g: LogEvent, e: LogEvent): boolean {
  if (g.type !== 'tool/call' && g.type !== 'tool/result') return true
  const a = g.data as { turn: number; step: number; callId: string }
  const b = e.data as { turn: number; step: number; callId: string }
  return a.turn === b.turn && a.step === b.step && a.callId === b.callId
}
