/**
 * A real MCP server for the turnlog/mcp tests, on the SDK's own server package: tools with every
 * annotation, rich content, errors, a hang, a list that changes. Served over Streamable HTTP on
 * loopback (`startHttpServer`, both protocol eras through `createMcpHandler`) or over stdio
 * (test/mcp/stdio-server.ts, `serveStdio`).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { appendFileSync } from 'node:fs'
import { McpServer, acceptedContent, createMcpHandler, inputRequired } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { toNodeListener } from '../../http/node.js'

/** Shared between the server instances of one fixture (the HTTP handler builds one per request). */
export interface FixtureState {
  /** Calls of `count` so far (idempotency tests). */
  counter: number
  /** The `echo` tool's description (a list change changes it). */
  echoDescription: string
  /** An extra tool appears after `grow`. */
  extra: boolean
  /** Calls of `hang` started, and those the client cancelled. */
  hanging: number
  cancelled: number
  /** Every Authorization header the server saw (credential tests). */
  authorizations: string[]
  /** A file that `slow_write` appends a line to per call (SIGKILL tests count the lines). */
  callLog?: string
  /** While true, `slow_count` and `slow_write` hold every call until `release()` (or a cancel). */
  hold: boolean
  /** Calls of `slow_count` and `slow_write` that reached the server, in order. */
  calls: string[]
  release(): void
}

export function fixtureState(): FixtureState {
  const waiting: Array<() => void> = []
  const state: FixtureState & { [WAITING]: Array<() => void> } = {
    counter: 0, hanging: 0, cancelled: 0, echoDescription: 'Echoes its text.', extra: false, authorizations: [],
    hold: false,
    calls: [],
    release() {
      state.hold = false
      for (const w of waiting.splice(0)) w()
    },
    [WAITING]: waiting,
  }
  return state
}

const WAITING = Symbol('waiting')

/** Resolves when the state releases its held calls, or the request is cancelled. */
function held(state: FixtureState, signal: AbortSignal | undefined): Promise<void> {
  if (!state.hold) return Promise.resolve()
  return new Promise((resolve) => {
    ;(state as unknown as { [WAITING]: Array<() => void> })[WAITING].push(resolve)
    signal?.addEventListener('abort', () => resolve(), { once: true })
  })
}

export function buildServer(state: FixtureState): McpServer {
  const server = new McpServer({ name: 'fixture', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
  const echo = server.registerTool('echo', {
    description: state.echoDescription,
    inputSchema: z.object({ text: z.string() }),
    annotations: { readOnlyHint: true },
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }))
  server.registerTool('delete_file', {
    description: 'Deletes a file.',
    inputSchema: z.object({ path: z.string() }),
    annotations: { destructiveHint: true },
  }, async ({ path }) => ({ content: [{ type: 'text', text: `deleted ${path}` }] }))
  server.registerTool('count', {
    description: 'Counts calls.',
    inputSchema: z.object({}),
    annotations: { idempotentHint: true, readOnlyHint: false, destructiveHint: false },
  }, async () => {
    state.counter++
    return { content: [{ type: 'text', text: String(state.counter) }], structuredContent: { n: state.counter } }
  })
  server.registerTool('rich', {
    description: 'Answers with every kind of content block.',
    inputSchema: z.object({}),
  }, async () => ({
    content: [
      { type: 'text', text: 'hello' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'file:///tmp/a.txt', name: 'a.txt', mimeType: 'text/plain' },
      { type: 'resource', resource: { uri: 'file:///tmp/b.txt', mimeType: 'text/plain', text: 'inside b' } },
      { type: 'resource', resource: { uri: 'file:///tmp/c.bin', mimeType: 'application/octet-stream', blob: 'AAEC' } },
    ],
    structuredContent: { ok: true },
  }))
  server.registerTool('fail', {
    description: 'Always fails.',
    inputSchema: z.object({}),
  }, async () => ({ content: [{ type: 'text', text: 'it broke' }], isError: true }))
  server.registerTool('hang', {
    description: 'Never answers until cancelled.',
    inputSchema: z.object({}),
  }, async (_args, ctx) => {
    state.hanging++
    await new Promise<void>((resolve) => {
      ctx.mcpReq.signal.addEventListener('abort', () => {
        state.cancelled++
        resolve()
      }, { once: true })
    })
    return { content: [{ type: 'text', text: 'cancelled' }] }
  })
  server.registerTool('slow_write', {
    description: 'Writes something (not idempotent); held while the fixture holds calls.',
    inputSchema: z.object({}),
  }, async (_args, ctx) => {
    state.calls.push('slow_write')
    if (state.callLog) appendFileSync(state.callLog, 'slow_write\n')
    await held(state, ctx.mcpReq.signal)
    return { content: [{ type: 'text', text: 'written' }] }
  })
  server.registerTool('slow_count', {
    description: 'Counts (idempotent); held while the fixture holds calls.',
    inputSchema: z.object({}),
    annotations: { idempotentHint: true },
  }, async (_args, ctx) => {
    state.calls.push('slow_count')
    await held(state, ctx.mcpReq.signal)
    return { content: [{ type: 'text', text: `counted ${state.calls.length}` }] }
  })
  server.registerTool('grow', {
    description: 'Changes the tool list: a new tool appears and echo changes its description.',
    inputSchema: z.object({}),
  }, async () => {
    state.extra = true
    state.echoDescription = 'Echoes its text, louder.'
    // a long-lived server instance (stdio) changes its own list; the SDK notifies the client
    echo.update({ description: state.echoDescription })
    if (!server.isConnected() || extra === null) extra = addExtra()
    return { content: [{ type: 'text', text: 'grown' }] }
  })
  server.registerTool('deploy', {
    description: 'Deploys after asking for a confirmation (an input round).',
    inputSchema: z.object({ env: z.string() }),
  }, async ({ env }, ctx) => {
    const responses = ctx.mcpReq.inputResponses
    if (responses?.['confirm'] !== undefined) {
      const ok = acceptedContent<{ ok?: boolean; note?: string }>(responses, 'confirm')
      if (ok === undefined) return { content: [{ type: 'text', text: `not deployed (${String((responses['confirm'] as { action?: unknown }).action)})` }] }
      return { content: [{ type: 'text', text: `deployed to ${env}: ${String(ok.note)} (state ${String(ctx.mcpReq.requestState())})` }] }
    }
    state.calls.push('deploy')
    return inputRequired({
      inputRequests: { confirm: inputRequired.elicit({ message: `Deploy to ${env}?`, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' }, note: { type: 'string' } }, required: ['ok'] } }) },
      requestState: `asked-${env}`,
    })
  })
  const addExtra = () => server.registerTool('extra', { description: 'Appeared later.', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'extra' }] }))
  let extra = state.extra ? addExtra() : null
  return server
}

/** Serves the fixture over Streamable HTTP on 127.0.0.1 (both eras); `notifyToolsChanged` publishes a list change. */
export async function startHttpServer(state: FixtureState = fixtureState()): Promise<{ url: string; state: FixtureState; notifyToolsChanged(): void; close(): Promise<void> }> {
  const handler = createMcpHandler(() => buildServer(state))
  const listener = toNodeListener(async (req: Request) => {
    const auth = req.headers.get('authorization')
    if (auth !== null) state.authorizations.push(auth)
    return handler.fetch(req)
  })
  const server: Server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    notifyToolsChanged: () => { void handler.notify.toolsChanged() },
    close: async () => {
      await handler.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
