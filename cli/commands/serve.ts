/**
 * `turnlog serve STORE [--port N] [--agent MODULE]`: turnlog/http's `sessionHandler` for
 * development, on 127.0.0.1 only. STORE is a JSONL directory or a `postgres://` URL.
 * - JSONL: with `--agent MODULE` (its default export: `(sessionId) => agentOptions`) this process
 *   runs the sessions and the chat routes work; without it the server only reads.
 * - PostgreSQL: prompts go through `store.send` and the store's workers run them (`workers: true`).
 * `authorize` allows a request only when its Host is this loopback address (a web page elsewhere
 * cannot reach the sessions through DNS rebinding); there is no other user here.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { TurnlogError } from '../../events/errors.js'
import { sessionHandler, type SessionHandlerOptions } from '../../http/handler.js'
import { toNodeListener } from '../../http/node.js'
import type { SessionAgentOptions } from '../../http/sessions.js'
import type { LogStore } from '../../stores/types.js'
import { EXIT_OK, parseCount } from '../errors.js'
import type { CliIo } from '../io.js'
import { isStoreUrl, openUrlStore, redact } from '../pg.js'
import { untilSignal } from '../signals.js'

export interface ServeCommandOptions {
  port?: string
  agent?: string
  /** Path prefix of every route (`--base-path /api`: the README's `Chat.tsx` posts to `/api/chat`). */
  basePath?: string
  /** Tests: called with the server's URL instead of waiting for a signal. */
  onListening?: (url: string) => Promise<void>
}

async function loadAgent(module: string): Promise<(id: string) => SessionAgentOptions | Promise<SessionAgentOptions>> {
  let mod: { default?: unknown }
  try {
    mod = await import(pathToFileURL(resolve(module)).href) as { default?: unknown }
  } catch (err) {
    throw new TurnlogError('INVALID_ARGUMENT', `--agent ${module}: cannot import it: ${(err as Error)?.message ?? String(err)}`, { field: '--agent' }, { cause: err })
  }
  if (typeof mod.default !== 'function') {
    throw new TurnlogError('INVALID_ARGUMENT', `--agent ${module}: its default export must be a function (sessionId) => agent options`, { field: '--agent' })
  }
  return mod.default as (id: string) => SessionAgentOptions
}

/** `--base-path`: `/` and segments of URL path characters, no `.`/`..` segment; the trailing `/` dropped. */
function parseBasePath(raw: string | undefined): string {
  if (raw === undefined || raw === '' || raw === '/') return ''
  const path = raw.replace(/\/+$/, '')
  const segments = path.split('/').slice(1)
  if (!path.startsWith('/') || segments.some((x) => x === '' || x === '.' || x === '..' || !/^[A-Za-z0-9._~!$&'()*+,;=:@-]+$/.test(x))) {
    throw new TurnlogError('INVALID_ARGUMENT', `--base-path ${JSON.stringify(raw)}: give a URL path such as /api`, { field: '--base-path' })
  }
  return path
}

export async function serveCommand(storeArg: string, opts: ServeCommandOptions, io: CliIo): Promise<number> {
  const port = opts.port !== undefined ? parseCount(opts.port, '--port') : 7358
  const basePath = parseBasePath(opts.basePath)
  let store: LogStore & { close?: () => Promise<void> }
  let mode: Pick<SessionHandlerOptions, 'agent' | 'workers' | 'readOnly'>
  let label: string
  if (isStoreUrl(storeArg)) {
    store = await openUrlStore(storeArg)
    mode = { workers: true }
    label = redact(storeArg)
  } else {
    const { jsonlStore } = await import('../../stores/jsonl/store.js')
    store = jsonlStore(resolve(storeArg))
    mode = opts.agent !== undefined ? { agent: await loadAgent(opts.agent) } : { readOnly: true }
    label = storeArg
  }
  let bound = 0
  const loopback = (req: Request): boolean => {
    const host = req.headers.get('host')
    return host === `127.0.0.1:${bound}` || host === `localhost:${bound}`
  }
  const handler = sessionHandler({
    store, ...mode, basePath,
    authorize: loopback,
    // the AI SDK's default transport (POST /chat, the id in the body) works here: the Host check
    // below answers before the handler reads any body, and it does not depend on the session
    chatIdInBody: true,
    onError: (err) => io.stderr(`serve: ${(err as Error)?.message ?? String(err)}\n`),
  })
  const guarded = Object.assign(
    (req: Request): Promise<Response> => loopback(req) ? handler(req) : Promise.resolve(Response.json({ error: { code: 'FORBIDDEN', message: 'this server answers requests to its loopback address only' } }, { status: 403 })),
    { close: handler.close, held: handler.held },
  )
  const server = createServer(toNodeListener(guarded))
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', (err: Error) => fail(new TurnlogError('INVALID_ARGUMENT', `cannot listen on 127.0.0.1:${port}: ${err.message}`, { field: '--port' }, { cause: err })))
      server.listen(port, '127.0.0.1', () => ok())
    })
    bound = (server.address() as AddressInfo).port
    const url = `http://127.0.0.1:${bound}`
    const what = 'workers' in mode && mode.workers ? 'chat through the store\'s workers' : 'agent' in mode && mode.agent ? 'chat with --agent' : 'read-only'
    io.stdout(`serving ${label} at ${url} (127.0.0.1 only; ${what}): GET ${basePath}/sessions/:id, POST ${basePath}/chat, GET ${basePath}/chat/:id/messages; Ctrl-C to stop\n`)
    if (opts.onListening) await opts.onListening(url)
    else await untilSignal()
  } finally {
    server.closeAllConnections()
    await new Promise<void>((r) => server.close(() => r()))
    await handler.close()
    await store.close?.()
  }
  return EXIT_OK
}
