/**
 * The MCP SDK's client, loaded when `mcpTools` is first called: `@modelcontextprotocol/client` is
 * an optional peer dependency of `turnlog/mcp`, so importing this subpath never fails; calling
 * `mcpTools` without it is `MISSING_DEPENDENCY` saying what to install.
 */
import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { TurnlogError } from '../events/index.js'

export interface McpSdk {
  Client: typeof Client
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport
  StdioClientTransport: typeof StdioClientTransport
}

let loaded: Promise<McpSdk> | undefined

export function loadSdk(): Promise<McpSdk> {
  loaded ??= Promise.all([import('@modelcontextprotocol/client'), import('@modelcontextprotocol/client/stdio')]).then(
    ([main, stdio]) => ({ Client: main.Client, StreamableHTTPClientTransport: main.StreamableHTTPClientTransport, StdioClientTransport: stdio.StdioClientTransport }),
    (err: unknown) => {
      loaded = undefined
      throw new TurnlogError('MISSING_DEPENDENCY', 'turnlog/mcp needs the MCP SDK\'s client (2.4 or later): npm install @modelcontextprotocol/client', {}, { cause: err })
    },
  )
  return loaded
}
