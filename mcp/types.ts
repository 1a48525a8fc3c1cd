/**
 * The options of `mcpTools` (docs/spec/lifecycle.md §12). The MCP SDK's types are named
 * structurally where they cross this surface, so these declarations read without the SDK.
 */
import type { AnyTool } from '../tools/types.js'

/** What a changed definition of a tool the session already offered gets (docs/spec/lifecycle.md §12). */
export type DriftPolicy = 'allow' | 'block' | 'ask'

/**
 * Per-tool overrides of what the server's annotations say (annotations are hints, not a
 * guarantee). Each member left out follows the annotations.
 */
export interface McpToolOverride {
  /** The name the model sees (1–64 of `A-Za-z0-9_-`). */
  name?: string
  /** Runs as a parallel call (default: an explicit `readOnlyHint: true`). */
  concurrencySafe?: boolean
  /** Asks a person first (default: an explicit `destructiveHint: true` without `readOnlyHint`). */
  needsApproval?: boolean
  /** May be called again after a crash interrupted it (default: an explicit `idempotentHint: true`). */
  idempotent?: boolean
  /** This tool's call timeout in ms (default: the server's `timeoutMs`). */
  timeoutMs?: number
  /** `false` leaves the tool out. */
  enabled?: boolean
}

/**
 * Credentials of an HTTP server: static headers (e.g. `{ headers: { Authorization: 'Bearer …' } }`)
 * or the MCP SDK's OAuth client provider (its `OAuthClientProvider` or `AuthProvider`). They reach
 * the server only: never the log, an error message or a span.
 */
export type McpAuth = { headers: Record<string, string> } | { readonly [key: string]: unknown }

/** What every server accepts, whatever its transport. */
export interface McpServerCommon {
  /** What a changed definition of a tool already offered in the session gets. Default `'ask'`. */
  onDrift?: DriftPolicy
  /** Per-tool overrides, by the tool's name on the server. */
  tools?: Record<string, McpToolOverride>
  /** A call's timeout in ms (its result is then `TOOL_TIMEOUT` and the request is cancelled). Default 60000. */
  timeoutMs?: number
  /** How long connecting (and each reconnect) may take, in ms. Default 10000. */
  connectTimeoutMs?: number
  /**
   * The protocol era: `'auto'` (default) probes for 2026-07-28 and falls back to the 2025-11-25
   * handshake; `'legacy'` speaks 2025-11-25 only; `'2026-07-28'` requires it.
   */
  protocol?: 'auto' | 'legacy' | '2026-07-28'
}

/** A server started as a child process, spoken to over stdio. */
export interface McpStdioServer extends McpServerCommon {
  command: string
  args?: string[]
  /** Its environment (default: the SDK's safe subset of this process's). Values are treated as secrets. */
  env?: Record<string, string>
  cwd?: string
  /** Its stderr: `'ignore'` (default), `'inherit'`. */
  stderr?: 'ignore' | 'inherit'
}

/** A server spoken to over Streamable HTTP. */
export interface McpHttpServer extends McpServerCommon {
  url: string | URL
  auth?: McpAuth
}

export type McpServerConfig = McpStdioServer | McpHttpServer

export interface McpToolsOptions {
  /** The servers, by name (the name goes into the log as `source.mcp`). */
  servers: Record<string, McpServerConfig>
  /** Reconnection after a connection drops: attempts and backoff. Defaults: 5, 200 ms doubling to 5000 ms. */
  reconnect?: { maxAttempts?: number; initialDelayMs?: number; maxDelayMs?: number }
  /** The client's name and version sent to the servers. Default `{ name: 'turnlog', version: '1' }`. */
  clientInfo?: { name: string; version: string }
}

/** The tools of `mcpTools`: an array of turnlog tools (spread it into `tools`) that closes its connections. */
export interface McpTools extends Array<AnyTool> {
  /** Ends every connection (stdio servers are stopped). Idempotent; the tools then fail their calls. */
  close(): Promise<void>
}
