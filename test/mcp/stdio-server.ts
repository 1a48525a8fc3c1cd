/**
 * The fixture MCP server (test/mcp/fixture-server.ts) over stdio, both protocol eras
 * (`serveStdio`). `MCP_FIXTURE_CALL_LOG`: a file `slow_write` appends to.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import { buildServer, fixtureState } from './fixture-server.js'

const state = fixtureState()
if (process.env['MCP_FIXTURE_CALL_LOG']) state.callLog = process.env['MCP_FIXTURE_CALL_LOG']
serveStdio(() => buildServer(state))
