/**
 * A child process for the MCP SIGKILL tests (docs/spec/lifecycle.md §8, §12): an agent over a
 * JSONL store whose model calls one MCP tool of the fixture server at URL; the parent SIGKILLs
 * this process while the call runs. argv: URL DIR SESSION TOOL
 */
import { createAgent } from '../../../agent/index.js'
import { scriptedModel } from '../../../models/index.js'
import { jsonlStore } from '../../../stores/jsonl/index.js'
import { mcpTools } from '../../../mcp/index.js'

const [url, dir, sessionId, tool] = process.argv.slice(2) as [string, string, string, string]
const tools = await mcpTools({ servers: { fx: { url } } })
const agent = createAgent({
  store: jsonlStore(dir), sessionId, system: 'sys', tools: [...tools],
  model: scriptedModel([{ toolCalls: [{ name: tool, args: {}, id: 'c1' }] }, { text: 'done' }], { info: { name: 'scripted' } }),
})
agent.followup('go')
await agent.whenIdle()
process.stdout.write('finished\n')
