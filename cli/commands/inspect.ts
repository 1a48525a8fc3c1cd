/**
 * `turnlog inspect LOG [--port N]`: serves the report page on 127.0.0.1 and follows LOG as it grows
 * (a JSONL file, or a `postgres://…#session-id` session by seq offset: cli/inspect-pg.ts). Runs
 * until interrupted.
 */
import { EXIT_OK, parseCount } from '../errors.js'
import type { CliIo } from '../io.js'
import { resolveLogPath } from '../load.js'
import { startInspector, type Inspector, type InspectorOptions } from '../inspect-server.js'
import { displayLog, isStoreUrl } from '../pg.js'
import { verifyOptions } from './report.js'
import { untilSignal } from '../signals.js'

export interface InspectCommandOptions {
  port?: string
  maxSteps?: string
  maxRetries?: string
  /** Tests: called with the running server instead of waiting for a signal. */
  onListening?: (i: Inspector) => Promise<void>
}

export async function inspectCommand(logArg: string, opts: InspectCommandOptions, io: CliIo): Promise<number> {
  const port = opts.port !== undefined ? parseCount(opts.port, '--port') : 7357
  let from: Pick<InspectorOptions, 'file' | 'source' | 'label'>
  if (isStoreUrl(logArg)) {
    // only a postgres URL loads the store (and pg)
    const { pgInspectorSource } = await import('../inspect-pg.js')
    from = await pgInspectorSource(logArg)
  } else {
    from = { file: resolveLogPath(logArg, io), label: logArg }
  }
  const inspector = await startInspector({
    ...from, port, verifyOptions: verifyOptions(opts),
    onError: (err) => io.stderr(`inspect: the log stopped decoding: ${(err as Error)?.message ?? String(err)}\n`),
  })
  io.stdout(`inspecting ${from.label ?? displayLog(logArg)} at ${inspector.url} (127.0.0.1 only; Ctrl-C to stop)\n`)
  try {
    if (opts.onListening) await opts.onListening(inspector)
    else await untilSignal()
  } finally {
    await inspector.close()
  }
  return EXIT_OK
}
