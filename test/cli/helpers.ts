/** Runs the CLI in-process with string writers. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../../cli/main.js'
import type { CliIo } from '../../cli/io.js'

export const ROOT = join(import.meta.dirname, '..', '..')

export interface CliRun {
  code: number
  stdout: string
  stderr: string
}

export async function cli(argv: readonly string[], opts: Partial<CliIo> = {}): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const code = await run(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    color: false,
    progress: false,
    cwd: ROOT,
    ...opts,
  })
  return { code, stdout, stderr }
}

/** A fresh temp dir, removed by the returned function. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'turnlog-cli-'))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

// eslint-disable-next-line no-control-regex
export const ANSI = /\u001b\[/
