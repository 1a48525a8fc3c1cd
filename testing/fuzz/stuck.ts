/**
 * Stuck detection. A run makes progress when the log grows, the scheduler releases a task, a
 * command runs, or a tracked call (a tool body, a hook listener) starts or settles. A run with no
 * progress for `stuckAfterMs` fails `STUCK`, naming what was pending: without this, a hook or tool
 * that never settles leaves `s.waitFor(agent.whenIdle())` pending forever, and a process whose
 * event loop drains exits 0 having checked nothing.
 *
 * Why a wall-clock timer is sound here: the fuzzer's own model, tools, hooks and the scheduler
 * advance through microtasks only, and a timer callback runs only once the microtask queue is
 * empty. So the watchdog can fire during a run only when the run waits on something outside
 * (user code doing I/O, or nothing at all); a slow machine delays the timer, never the run.
 */

/** A progress counter shared by everything that observes a run. */
export class Progress {
  n = 0
  tick(): void {
    this.n++
  }
}

/** Calls that have started and not yet settled: user tool bodies and hook listeners, the fuzzer's own hooks. */
export class PendingCalls {
  readonly #open = new Map<number, string>()
  #next = 0
  constructor(private readonly progress: Progress) {}

  /** What is pending now, oldest first. */
  list(): string[] {
    return [...this.#open.values()]
  }

  /**
   * Runs `fn` as a tracked call named `what`: pending from now until it returns, throws, or (when
   * it returns a thenable) until that settles. The value (or throw) is passed through untouched.
   */
  track<T>(what: string, fn: () => T): T {
    const id = ++this.#next
    this.#open.set(id, what)
    this.progress.tick()
    const end = () => {
      this.#open.delete(id)
      this.progress.tick()
    }
    let out: T
    try {
      out = fn()
    } catch (err) {
      end()
      throw err
    }
    let then: unknown
    try {
      then = (out as { then?: unknown } | null)?.then
    } catch {
      then = undefined // a throwing `then` getter: the agent's own guard deals with the value
    }
    if (typeof then === 'function') {
      Promise.resolve(out).then(end, end)
    } else {
      end()
    }
    return out
  }
}

/** The signature of a pending call: its text without the call id, turn and step. */
export const signature = (what: string): string => what.replace(/ at .*$/, '').replace(/ \(call [^)]*\)/, '')

export interface Watchdog {
  /** Rejects with `onStuck()`'s error when the run is stuck; never resolves. */
  readonly stuck: Promise<never>
  stop(): void
}

/**
 * Checks progress every `ms`: stuck when nothing happened in a whole period. With `quick` (used
 * while shrinking a failure that was already a hang), also polls with `setImmediate` and reports
 * stuck as soon as the run is quiet (no progress between two polls, so the microtask queue drained
 * with nothing moving) while `quick()` says the known hang is pending again.
 */
export function watchdog(ms: number, progress: Progress, onStuck: (how: 'timer' | 'quick') => Error, quick?: () => boolean): Watchdog {
  let timer: ReturnType<typeof setTimeout> | undefined
  let immediate: ReturnType<typeof setImmediate> | undefined
  let stopped = false
  let reject!: (err: Error) => void
  const stuck = new Promise<never>((_, r) => {
    reject = r
  })
  stuck.catch(() => {}) // observed by the race; never an unhandled rejection when unused
  const fire = (how: 'timer' | 'quick') => {
    if (stopped) return
    stopped = true
    if (timer !== undefined) clearTimeout(timer)
    if (immediate !== undefined) clearImmediate(immediate)
    reject(onStuck(how))
  }
  let seen = progress.n
  const tick = () => {
    if (stopped) return
    if (progress.n === seen) return fire('timer')
    seen = progress.n
    timer = setTimeout(tick, ms)
  }
  timer = setTimeout(tick, ms)
  if (quick) {
    let last = progress.n
    const poll = () => {
      if (stopped) return
      if (progress.n === last && quick()) return fire('quick')
      last = progress.n
      immediate = setImmediate(poll)
    }
    immediate = setImmediate(poll)
  }
  return {
    stuck,
    stop() {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      if (immediate !== undefined) clearImmediate(immediate)
    },
  }
}
