/**
 * B12 MCP (bench/README.md): one MCP tool call through `turnlog/mcp`, logged and durable, against
 * the same call through the MCP SDK's bare client, over stdio and Streamable HTTP on loopback.
 *
 * turnlog: an agent over a JSONL store (an `fsync` per batch) whose scripted model calls `echo`
 * once per step, `TURNLOG_B12_CALLS` steps in one turn; the time per call is the turn's wall time
 * over the calls (so it includes the step around each call: the model request, the events, the
 * fsyncs). Bare: `client.callTool` the same number of times on one connection. value = turnlog
 * ms per call ÷ bare ms per call, the worse of the two transports, median of 3 interleaved runs.
 * Target ≤ 1.2.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { createAgent } from '../agent/index.js'
import { mcpTools, type McpServerConfig } from '../mcp/index.js'
import { scriptedModel } from '../models/index.js'
import { jsonlStore } from '../stores/jsonl/index.js'
import { envInt, median, round, type BenchResult } from './common.js'
import { startB12Http } from './b12-server.js'

export const B12_TARGET = '<= 1.2'
const HERE = fileURLToPath(import.meta.url)
/** The stdio server's command line: the built file, or the source through tsx when run from source. */
const SERVER_ARGS = HERE.endsWith('.ts') ? ['--import', 'tsx', HERE.replace(/b12-mcp\.ts$/, 'b12-server.ts')] : [HERE.replace(/b12-mcp\.js$/, 'b12-server.js')]

async function bare(config: McpServerConfig, calls: number): Promise<number> {
  const client = new Client({ name: 'b12', version: '1' }, { versionNegotiation: { mode: 'auto' } })
  const transport = 'url' in config ? new StreamableHTTPClientTransport(new URL(String(config.url))) : new StdioClientTransport({ command: config.command, args: config.args ?? [] })
  await client.connect(transport)
  await client.listTools()
  const t0 = performance.now()
  for (let i = 0; i < calls; i++) await client.callTool({ name: 'echo', arguments: { text: `x${i}` } })
  const ms = performance.now() - t0
  await client.close()
  return ms / calls
}

async function turnlog(config: McpServerConfig, calls: number): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-b12-'))
  const tools = await mcpTools({ servers: { b12: config } })
  try {
    const script = Array.from({ length: calls }, (_, i) => ({ toolCalls: [{ name: 'echo', args: { text: `x${i}` }, id: `c${i}` }] }))
    const agent = createAgent({
      store: jsonlStore(dir), sessionId: 'b12', tools: [...tools], maxStepsPerTurn: calls + 2,
      model: scriptedModel([...script, { text: 'done' }], { info: { name: 'scripted' } }),
    })
    const t0 = performance.now()
    agent.followup('go')
    await agent.whenIdle()
    await agent.flush()
    const ms = performance.now() - t0
    await agent.dispose()
    return ms / calls
  } finally {
    await tools.close()
    await rm(dir, { recursive: true, force: true })
  }
}

export async function benchMcp(): Promise<BenchResult> {
  const calls = envInt('TURNLOG_B12_CALLS', 200)
  const http = await startB12Http()
  const detail: Record<string, unknown> = { calls }
  let worst = 0
  try {
    const transports: Array<[string, McpServerConfig]> = [
      ['http', { url: http.url }],
      ['stdio', { command: process.execPath, args: SERVER_ARGS }],
    ]
    for (const [name, config] of transports) {
      const ratios: number[] = []
      const ours: number[] = []
      const theirs: number[] = []
      for (let r = 0; r < 3; r++) {
        const b = await bare(config, calls)
        const t = await turnlog(config, calls)
        theirs.push(b)
        ours.push(t)
        ratios.push(t / b)
      }
      const ratio = median(ratios)
      detail[name] = { ratio: round(ratio, 3), turnlogMsPerCall: round(median(ours), 3), bareMsPerCall: round(median(theirs), 3) }
      worst = Math.max(worst, ratio)
    }
  } finally {
    await http.close()
  }
  return { value: round(worst, 3), unit: 'x bare SDK client', target: B12_TARGET, detail }
}
