/**
 * One MCP server's connection (docs/spec/lifecycle.md §12): connects with the official SDK's
 * client over stdio or Streamable HTTP (both protocol eras), keeps the server's tool list (list
 * change notifications and reconnects refresh it and move `version`), reconnects with backoff when
 * the connection drops, and calls tools. Every wait is bounded: connecting by `connectTimeoutMs`,
 * a call by its timeout and the turn's signal. An expired server session is re-initialised once,
 * transparently, for a request that is safe to resend.
 */
import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import type { McpSdk } from './sdk.js'
import { TurnlogError } from '../events/index.js'
import { errorText } from '../tools/define.js'
import type { McpCallResult } from './content.js'
import { redact, secretsOf } from './redact.js'
import type { McpInputRequired } from './rounds.js'
import type { McpHttpServer, McpServerConfig, McpStdioServer, McpToolsOptions } from './types.js'

/** A tool as the server lists it (the SDK's `Tool`, structurally: the members read here). */
export interface ListedTool {
  name: string
  title?: string
  description?: string
  inputSchema: Record<string, unknown>
  outputSchema?: Record<string, unknown>
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean; title?: string }
  execution?: Record<string, unknown>
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

/** True for a request that failed because the server no longer knows the session (HTTP 404 on a session) or the connection is gone. */
function sessionGone(err: unknown): boolean {
  const e = err as { code?: unknown; data?: { status?: unknown } } | null
  if (e === null || typeof e !== 'object') return false
  return e.data?.status === 404 || e.code === 'CONNECTION_CLOSED' || e.code === 'NOT_CONNECTED'
}

export class ServerConnection {
  /** Moves when the tool list may have changed. */
  version = 0
  tools: readonly ListedTool[] = []
  readonly secrets: readonly string[]
  #client: Client | null = null
  #connecting: Promise<Client> | null = null
  #closed = false
  #attempts = 0
  #timer: ReturnType<typeof setTimeout> | null = null

  constructor(readonly name: string, readonly config: McpServerConfig, readonly options: McpToolsOptions, readonly sdk: McpSdk) {
    this.secrets = secretsOf(config as { auth?: unknown; env?: Record<string, string> })
  }

  /** A message naming the server, credentials removed. */
  describe(err: unknown): string {
    return redact(errorText(err), this.secrets)
  }

  /** Connects and lists the tools; rejects `MCP_CONNECT` (naming the server) when it cannot. */
  async start(): Promise<void> {
    await this.#connected()
  }

  #transport(): StdioClientTransport | StreamableHTTPClientTransport {
    if ('command' in this.config && typeof this.config.command === 'string') {
      const c = this.config as McpStdioServer
      return new this.sdk.StdioClientTransport({
        command: c.command,
        ...(c.args !== undefined ? { args: c.args } : {}),
        ...(c.env !== undefined ? { env: c.env } : {}),
        ...(c.cwd !== undefined ? { cwd: c.cwd } : {}),
        stderr: c.stderr ?? 'ignore',
      })
    }
    const c = this.config as McpHttpServer
    const auth = c.auth as { headers?: Record<string, string> } | undefined
    const headers = auth !== undefined && typeof auth.headers === 'object' && auth.headers !== null ? auth.headers : undefined
    return new this.sdk.StreamableHTTPClientTransport(new URL(String(c.url)), {
      ...(headers !== undefined ? { requestInit: { headers } } : {}),
      // anything else given as `auth` is the SDK's own provider (OAuth client provider or AuthProvider)
      ...(auth !== undefined && headers === undefined ? { authProvider: auth as never } : {}),
    })
  }

  /** The connected client, connecting (once, shared) when there is none. */
  #connected(): Promise<Client> {
    if (this.#closed) return Promise.reject(new TurnlogError('MCP_CONNECT', `MCP server '${this.name}' is closed`))
    if (this.#client !== null) return Promise.resolve(this.#client)
    this.#connecting ??= this.#connect().finally(() => { this.#connecting = null })
    return this.#connecting
  }

  async #connect(): Promise<Client> {
    const protocol = this.config.protocol ?? 'auto'
    const client = new this.sdk.Client(this.options.clientInfo ?? { name: 'turnlog', version: '1' }, {
      // elicitations become turnlog input rounds (mcp/rounds.ts): answered by a person, durably
      capabilities: { elicitation: { form: {}, url: {} } },
      inputRequired: { autoFulfill: false },
      versionNegotiation: { mode: protocol === 'legacy' ? 'legacy' : protocol === 'auto' ? 'auto' : { pin: protocol } },
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (error === null && tools !== null && !this.#closed) this.#setTools(tools as unknown as ListedTool[])
          },
        },
      },
    })
    const timeout = this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
    try {
      await client.connect(this.#transport(), { timeout })
      const listed = await client.listTools(undefined, { timeout })
      if (this.#closed) {
        await client.close().catch(() => {})
        throw new TurnlogError('MCP_CONNECT', `MCP server '${this.name}' was closed while connecting`)
      }
      this.#setTools(listed.tools as unknown as ListedTool[])
    } catch (err) {
      await client.close().catch(() => {})
      if (TurnlogError.is(err)) throw err
      throw new TurnlogError('MCP_CONNECT', `MCP server '${this.name}' could not be connected: ${this.describe(err)}`, { field: `servers.${this.name}` })
    }
    client.onclose = () => this.#dropped(client)
    this.#client = client
    this.#attempts = 0
    return client
  }

  #setTools(tools: readonly ListedTool[]): void {
    this.tools = tools
    this.version++
  }

  /** The connection dropped (a server died, a network failure): reconnect with backoff, bounded. */
  #dropped(client: Client): void {
    if (this.#client !== client) return
    this.#client = null
    if (this.#closed) return
    const r = this.options.reconnect ?? {}
    const max = r.maxAttempts ?? 5
    if (this.#attempts >= max) return
    const delay = Math.min((r.initialDelayMs ?? 200) * 2 ** this.#attempts, r.maxDelayMs ?? 5000)
    this.#attempts++
    this.#timer = setTimeout(() => {
      this.#timer = null
      this.#connected().catch(() => {
        // each failed attempt schedules the next until the attempts run out; a call connects on demand
        if (this.#client === null && !this.#closed && this.#attempts < max) this.#dropped(client)
      })
    }, delay)
    this.#timer.unref?.()
  }

  /**
   * Calls a tool. `resend`: the request is safe to send again (an idempotent or read-only tool):
   * then a call whose server session expired or whose connection dropped is re-issued once on a
   * fresh connection. Rejects with a message free of credentials.
   */
  async call(name: string, args: unknown, opts: { signal: AbortSignal; timeoutMs: number; resend: boolean; retry?: { inputResponses: Record<string, unknown>; requestState?: string } }): Promise<McpCallResult | McpInputRequired> {
    const attempt = async (): Promise<McpCallResult | McpInputRequired> => {
      const client = await this.#connected()
      opts.signal.throwIfAborted()
      try {
        // an `input_required` result (2026-07-28) comes back as is: it is a turnlog round
        const params = { name, arguments: (args ?? {}) as Record<string, unknown>, ...opts.retry }
        return (await client.callTool(params, { signal: opts.signal, timeout: opts.timeoutMs, allowInputRequired: true })) as McpCallResult
      } catch (err) {
        if (sessionGone(err) && this.#client === client) {
          this.#client = null
          await client.close().catch(() => {})
        }
        throw err
      }
    }
    try {
      return await attempt()
    } catch (err) {
      if (opts.resend && sessionGone(err) && !opts.signal.aborted) {
        try {
          return await attempt()
        } catch (again) {
          throw new Error(this.describe(again))
        }
      }
      throw new Error(this.describe(err))
    }
  }

  /** Ends the connection (a stdio server is stopped). Idempotent. */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#timer !== null) clearTimeout(this.#timer)
    const c = this.#client
    this.#client = null
    const pending = this.#connecting
    await c?.close().catch(() => {})
    await pending?.then((cl) => cl.close(), () => {}).catch(() => {})
  }
}
