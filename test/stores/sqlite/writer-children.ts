/**
 * Writer processes on one SQLite file (children/writer-child.mjs), shared by the racing-writers
 * tests (processes.test.ts) and the SIGKILL loop (test/faults/sqlite-writer-kill-loop.test.ts): a
 * child opens session `s` for write with a lease, prints `WON <token> <length>`, appends batches and
 * prints `D <durable length>` as each resolves.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { LogEvent } from '../../../events/envelope.js'
import { sqliteStore } from '../../../stores/sqlite/index.js'
import { LineChild } from '../../support/line-child.js'
import { ROOT } from '../child-lib.js'

const WRITER = fileURLToPath(new URL('./children/writer-child.mjs', import.meta.url))
/** Long enough that a heartbeat delayed by a loaded machine does not lose the lease mid-loop. */
export const LEASE = 1500

/** A writer child on `file` with `driver`, running the compiled library at `lib`. */
export function writer(lib: string, file: string, driver: string, seed: number, leaseMs = LEASE): LineChild {
  return new LineChild(spawn, WRITER, [lib, file, driver, 's', String(seed), String(leaseMs)], ROOT)
}

/** The child's last lines and its stderr (Node's SQLite warning removed), for a failure message. */
export const why = (c: LineChild): string => `${c.lines.slice(-5).join(' | ')} ${c.stderr.replace(/.*ExperimentalWarning.*\n?|.*trace-warnings.*\n?/g, '')}`

/** The longest durable length the child reported. */
export const durable = (c: LineChild): number => Math.max(0, ...c.lines.filter((l) => l.startsWith('D ')).map((l) => Number(l.split(' ')[1])))

/** The file's session `s` as it reads back: its length and every seq. */
export async function reread(file: string): Promise<{ length: number; seqs: number[] }> {
  const store = sqliteStore(file)
  try {
    const r = await store.open('s', 'read')
    const seqs: number[] = []
    for await (const e of r.events()) seqs.push((e as LogEvent).seq)
    return { length: r.length, seqs }
  } finally {
    await store.close()
  }
}
