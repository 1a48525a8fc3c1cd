/**
 * One small typed dispatcher with three modes:
 * - **waterfall**: listeners wrap each other, first registered outermost; each gets `(payload, next)`
 *   and returns a result; `next(payload?)` calls the next listener, the innermost default last.
 * - **serial**: listeners run one after another, awaited; no `next`, no result.
 * - **emit**: listeners are called synchronously for live events; a throw is reported, never propagated.
 */

export type Next<P, R> = (payload?: P) => Promise<R>
export type WaterfallListener<P, R> = (payload: P, next: Next<P, R>) => R | Promise<R>
export type SerialListener<P> = (payload: P) => void | Promise<void>
export type EmitListener<P> = (payload: P) => void

/**
 * Marks a listener that only passes its payload through (`next(p)`, its result unchanged): the
 * re-execution engine's gates (replay/reexecute/hooks.ts). Such a listener never decides, so it
 * does not count for {@link HookRegistry.decidingCount}: a `tools/pre-execute` gate must not make
 * a re-execution wait for verdicts the recorded process never waited for (docs/spec/lifecycle.md §9, P4).
 */
export const PASS_THROUGH: unique symbol = Symbol.for('turnlog.passThroughListener')

export class HookRegistry {
  readonly #listeners = new Map<string, Array<(...args: never[]) => unknown>>()
  /**
   * Per hook, listeners that always run after (inside) every listener added with `on`, whenever
   * that was: the built-in retry policy sits here, so each user listener decides first.
   */
  #innermost: Map<string, Array<(...args: never[]) => unknown>> | null = null

  /** Adds a listener inside every `on` listener, now and later (the built-in policies). */
  onInnermost(name: string, fn: (...args: never[]) => unknown): void {
    const inner = (this.#innermost ??= new Map())
    inner.set(name, [...(inner.get(name) ?? []), fn])
  }

  /** The dispatch order: `on` listeners in registration order, then the innermost ones. */
  #list(name: string): Array<(...args: never[]) => unknown> | undefined {
    const inner = this.#innermost?.get(name)
    const outer = this.#listeners.get(name)
    if (!inner) return outer
    return outer ? [...outer, ...inner] : inner
  }

  /** Adds a listener; returns a disposer that removes exactly this registration. */
  on(name: string, fn: (...args: never[]) => unknown): () => void {
    let list = this.#listeners.get(name)
    if (!list) this.#listeners.set(name, (list = []))
    // Copy-on-write: a dispatch in flight keeps the list it started with.
    const entry = fn
    this.#listeners.set(name, [...list, entry])
    let disposed = false
    return () => {
      if (disposed) return
      disposed = true
      const cur = this.#listeners.get(name) ?? []
      const i = cur.indexOf(entry)
      if (i >= 0) this.#listeners.set(name, [...cur.slice(0, i), ...cur.slice(i + 1)])
    }
  }

  count(name: string): number {
    return this.#list(name)?.length ?? 0
  }

  /** The listeners of `name` that may decide something: every one not marked {@link PASS_THROUGH}. */
  decidingCount(name: string): number {
    return (this.#list(name) ?? []).filter((fn) => (fn as { [PASS_THROUGH]?: unknown })[PASS_THROUGH] !== true).length
  }

  /** Runs the waterfall; a throwing listener rejects the returned promise (the caller decides what that means). */
  async waterfall<P, R>(name: string, payload: P, innermost: (payload: P) => R | Promise<R>): Promise<R> {
    const list = (this.#list(name) ?? []) as unknown as WaterfallListener<P, R>[]
    if (list.length === 0) return innermost(payload)
    const call = async (i: number, p: P): Promise<R> => {
      if (i >= list.length) return innermost(p)
      let called = false
      return list[i]!(p, async (np?: P) => {
        if (called) throw new Error(`${name}: next() called twice by one listener`)
        called = true
        return call(i + 1, np === undefined ? p : np)
      })
    }
    return call(0, payload)
  }

  /** Runs every listener in order, awaiting each; the first throw rejects. */
  async serial<P>(name: string, payload: P): Promise<void> {
    const list = (this.#list(name) ?? []) as unknown as SerialListener<P>[]
    for (const fn of list) await fn(payload)
  }

  /** Calls every listener synchronously; throws are handed to `onError`. */
  emit<P>(name: string, payload: P, onError: (err: unknown, name: string) => void): void {
    const list = this.#list(name)
    if (!list) return
    for (const fn of list as unknown as EmitListener<P>[]) {
      try {
        fn(payload)
      } catch (err) {
        onError(err, name)
      }
    }
  }
}
