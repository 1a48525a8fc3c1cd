/**
 * Helpers of the turnlog/http tests: a real node:http server around a handler, a gate that
 * releases a scripted model's chunks one at a time (no sleeps: the test decides when the model
 * speaks), and waiting for a condition the server brings about.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toNodeListener, type FetchHandler } from '../../http/index.js'

export interface Served { url: string; server: Server; close(): Promise<void> }

export async function serve(handler: FetchHandler): Promise<Served> {
  const server = createServer(toNodeListener(handler))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

/** Holds a scripted model's chunks until released: `beforeChunk: gate.wait`. */
export class Gate {
  private open = 0
  private waiting: Array<() => void> = []
  /** Chunks that asked to be released so far. */
  asked = 0
  readonly wait = (): Promise<void> => {
    this.asked++
    if (this.open > 0) { this.open--; return Promise.resolve() }
    return new Promise((r) => this.waiting.push(r))
  }
  /** Lets `n` more chunks through (Infinity: all from now on). */
  release(n = 1): void {
    if (n === Infinity) { this.open = Infinity; for (const w of this.waiting.splice(0)) w(); return }
    for (let i = 0; i < n; i++) {
      const w = this.waiting.shift()
      if (w) w()
      else this.open++
    }
  }
  /** Holds chunks again from now on (after `release(Infinity)`). */
  close(): void { this.open = 0 }
  /** Resolves when the model waits at a chunk (so the log holds everything before it). */
  async held(): Promise<void> {
    await until(() => this.waiting.length > 0)
  }
}

/** Waits for `cond` (checked on every macrotask turn; the test's own timeout bounds it). */
export async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await cond())) await new Promise((r) => setTimeout(r, 5))
}

export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'turnlog-http-'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export const allow = (): boolean => true
