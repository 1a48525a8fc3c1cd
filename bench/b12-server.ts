/**
 * B12's MCP server (bench/README.md): one `echo` tool on the MCP SDK's own server package, over
 * stdio when run as a process (`node dist/bench/b12-server.js`), or over Streamable HTTP on
 * loopback through `startB12Http`.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pathToFileURL } from 'node:url'
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import { z } from 'zod'
import { toNodeListener } from '../http/node.js'

export function b12Server(): McpServer {
  const server = new McpServer({ name: 'b12', version: '1.0.0' }, { capabilities: { tools: {} } })
  server.registerTool('echo', { description: 'Echoes its text.', inputSchema: z.object({ text: z.string() }), annotations: { readOnlyHint: true } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }))
  return server
}

export async function startB12Http(): Promise<{ url: string; close(): Promise<void> }> {
  const handler = createMcpHandler(b12Server)
  const http = createServer(toNodeListener((req) => handler.fetch(req)))
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await handler.close()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) serveStdio(b12Server)
