/**
 * A child process with line-based stdout: the fault, restart and crash tests' workers and writers.
 * Waiting for a line wakes on the line itself (or the exit), not on a polling timer: under a loaded
 * machine a 5 ms poll per waiter was hundreds of wake-ups a second, and a 200 ms one was latency.
 */
import type { ChildProcessWithoutNullStreams, spawn as spawnFn } from 'node:child_process'

export class LineChild {
  readonly proc: ChildProcessWithoutNullStreams
  readonly lines: string[] = []
  stderr = ''
  #buf = ''
  #waiters = new Set<() => void>()
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>

  /** Runs `node script ...args` in `cwd` (with `env` when given). */
  constructor(spawn: typeof spawnFn, script: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv) {
    this.proc = spawn(process.execPath, [script, ...args], { cwd, stdio: 'pipe', ...(env ? { env } : {}) })
    this.proc.stdout.setEncoding('utf8')
    this.proc.stdout.on('data', (d: string) => {
      this.#buf += d
      let i: number
      while ((i = this.#buf.indexOf('\n')) >= 0) {
        this.lines.push(this.#buf.slice(0, i))
        this.#buf = this.#buf.slice(i + 1)
      }
      this.#wake()
    })
    this.proc.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()))
    this.exited = new Promise((r) => this.proc.on('exit', (code, signal) => {
      r({ code, signal })
      this.#wake()
    }))
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w()
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null
  }

  /** Waits for a line at index `from` or later that matches; null on timeout or exit. */
  waitFor(pred: (l: string) => boolean, from: number, timeoutMs: number): Promise<string | null> {
    let next = from
    const scan = (): string | undefined => {
      for (; next < this.lines.length; next++) if (pred(this.lines[next]!)) return this.lines[next]!
      return undefined
    }
    const now = scan()
    if (now !== undefined) return Promise.resolve(now)
    if (!this.alive) return Promise.resolve(null)
    return new Promise((resolve) => {
      const done = (v: string | null) => {
        clearTimeout(timer)
        this.#waiters.delete(wake)
        resolve(v)
      }
      const wake = () => {
        const hit = scan()
        if (hit !== undefined) done(hit)
        else if (!this.alive) done(null)
      }
      const timer = setTimeout(() => done(null), timeoutMs)
      this.#waiters.add(wake)
    })
  }

  /** Like `waitFor`, but a timeout or an exit throws with the lines and stderr so far. */
  async line(pred: (l: string) => boolean, from = 0, timeoutMs = 20_000): Promise<string> {
    const hit = await this.waitFor(pred, from, timeoutMs)
    if (hit !== null) return hit
    const why = this.alive ? `timed out after ${timeoutMs} ms` : 'the child exited'
    throw new Error(`${why} waiting for a line; lines: ${this.lines.join(' | ')}; stderr: ${this.stderr}`)
  }

  /** Writes one line to the child's stdin. */
  send(line: string): void {
    this.proc.stdin.write(line + '\n')
  }
}

/** SIGKILLs every child still alive (an afterAll's clean-up). */
export function killAll(children: Iterable<LineChild>): void {
  for (const c of children) if (c.alive) c.proc.kill('SIGKILL')
}
