// stores/group-commit.ts, shared by the jsonl and postgres writers (docs/decisions/module-layers.md
// , "Group commit"): appends accepted in one tick share one commit, appends made while a commit runs share
// the next, commits run one at a time in accept order (L1: seqs stay contiguous in the store), and
// the first failure rejects the failing batch and everything queued behind it. Synchronised with
// explicit deferred promises, never with timers.
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/errors.js'
import { GroupCommit, type Committer } from '../../stores/group-commit.js'

interface Deferred {
  promise: Promise<void>
  resolve: () => void
  reject: (e: unknown) => void
}
const deferred = (): Deferred => {
  let resolve!: () => void
  let reject!: (e: unknown) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** A committer whose commits finish when the test says so. */
function controlled() {
  const commits: Array<{ batch: readonly number[]; done: Deferred }> = []
  let failed: TurnlogError | null = null
  const stops: unknown[] = []
  let waiting: (() => void) | null = null
  const committer: Committer<number> = {
    commit: (batch) => {
      const done = deferred()
      commits.push({ batch: [...batch], done })
      waiting?.()
      return done.promise
    },
    stop: (err) => {
      stops.push(err)
      failed ??= new TurnlogError('IO_ERROR', `stopped: ${String((err as Error).message)}`)
      return failed
    },
    failed: () => failed,
  }
  /** Resolves once the n-th commit (1-based) has started. */
  const started = (n: number): Promise<void> =>
    commits.length >= n ? Promise.resolve() : new Promise<void>((r) => {
      waiting = () => {
        if (commits.length >= n) r()
      }
    })
  return { committer, commits, stops, started }
}

const result = (firstSeq: number, length: number) => ({ firstSeq, length })

describe('GroupCommit (L1, store durability)', () => {
  it('appends of one tick share one commit; appends made during a commit share the next; results resolve in order', async () => {
    const c = controlled()
    const g = new GroupCommit(c.committer)
    expect(g.running).toBeNull()
    const settled: number[] = []
    const a = g.enqueue(1, result(0, 1)).then((r) => (settled.push(1), r))
    const b = g.enqueue(2, result(1, 3)).then((r) => (settled.push(2), r))
    expect(g.running).not.toBeNull()
    await c.started(1)
    expect(c.commits.map((x) => x.batch)).toEqual([[1, 2]])
    // accepted while the first batch commits: queued for the next one, not started yet
    const d = g.enqueue(3, result(3, 4)).then((r) => (settled.push(3), r))
    const e = g.enqueue(4, result(4, 6)).then((r) => (settled.push(4), r))
    expect(c.commits).toHaveLength(1)
    expect(settled).toEqual([])
    c.commits[0]!.done.resolve()
    expect(await a).toEqual(result(0, 1))
    expect(await b).toEqual(result(1, 3))
    await c.started(2)
    expect(c.commits.map((x) => x.batch)).toEqual([[1, 2], [3, 4]])
    expect(settled).toEqual([1, 2])
    expect(g.batches).toBe(1)
    c.commits[1]!.done.resolve()
    expect(await d).toEqual(result(3, 4))
    expect(await e).toEqual(result(4, 6))
    expect(settled).toEqual([1, 2, 3, 4])
    expect(g.batches).toBe(2)
    await g.running
    expect(g.running).toBeNull()
  })

  it('barrier: at once when idle, after the batch in flight otherwise', async () => {
    const c = controlled()
    const g = new GroupCommit(c.committer)
    await expect(g.barrier()).resolves.toBeUndefined()
    void g.enqueue(1, result(0, 1))
    let passed = false
    const barrier = g.barrier().then(() => (passed = true))
    await c.started(1)
    expect(passed).toBe(false)
    c.commits[0]!.done.resolve()
    await barrier
    expect(passed).toBe(true)
    expect(g.batches).toBe(1)
  })

  it('a failing commit rejects its batch and every append queued behind it with the stop error; nothing more is committed', async () => {
    const c = controlled()
    const g = new GroupCommit(c.committer)
    const first = g.enqueue(1, result(0, 1))
    await c.started(1)
    const queued = g.enqueue(2, result(1, 2))
    const barrier = g.barrier()
    const cause = new Error('disk full')
    c.commits[0]!.done.reject(cause)
    const errors = await Promise.allSettled([first, queued, barrier])
    expect(errors.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected'])
    const reasons = errors.map((s) => (s as PromiseRejectedResult).reason as TurnlogError)
    expect(reasons[0]!.code).toBe('IO_ERROR')
    expect(reasons[0]!.message).toContain('stopped: disk full')
    // one error object for all: the one stop() returned
    expect(reasons[1]).toBe(reasons[0])
    expect(reasons[2]).toBe(reasons[0])
    expect(c.stops).toEqual([cause])
    expect(c.commits).toHaveLength(1)
    expect(g.batches).toBe(0)
    await expect(g.running ?? Promise.resolve()).resolves.toBeUndefined()
    expect(g.running).toBeNull()
    await expect(g.barrier()).rejects.toBe(reasons[0])
  })
})
