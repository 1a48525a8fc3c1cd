/**
 * The MCP catalog in the log (docs/spec/lifecycle.md §12, invariant R11): a server's list change
 * reaches the model only at a step boundary, as `request/header {reason: 'change'}`; a changed
 * definition of a tool the session already offered follows the server's `onDrift`; names collide
 * into `server__tool`; stdio servers (spawned by the test) work as HTTP ones do, and `close()`
 * ends every connection.
 */
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent, type Agent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { verify } from '../../replay/index.js'
import { TOOL_CATALOG, type ToolCatalog } from '../../tools/types.js'
import { mcpTools, type McpServerConfig, type McpTools } from '../../mcp/index.js'
import { startHttpServer } from './fixture-server.js'

const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close()
})

const root = fileURLToPath(new URL('../..', import.meta.url))
/** The fixture over stdio: a child process the SDK's stdio transport spawns. */
export const stdioServer = (env: Record<string, string> = {}): McpServerConfig => ({
  command: process.execPath,
  args: ['--import', 'tsx', 'test/mcp/stdio-server.ts'],
  cwd: root,
  env: { ...env, PATH: process.env['PATH'] ?? '' },
  stderr: 'inherit',
})

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
  expect(cond()).toBe(true)
}

function data(events: readonly LogEvent[], type: string): Array<Record<string, any>> {
  return events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>)
}

const versionOf = (ts: McpTools): number => (ts[0] as unknown as Record<symbol, ToolCatalog>)[TOOL_CATALOG]!.version

function agentWith(ts: McpTools, script: Parameters<typeof scriptedModel>[0]): Agent {
  return createAgent({ model: scriptedModel(script, { info: { name: 'scripted' } }), tools: [...ts], checkRequests: 'full' })
}

describe('the MCP catalog in the log', () => {
  it('R11: a list change over stdio reaches the model at the next step boundary as request/header {reason: change}', async () => {
    const ts = await mcpTools({ servers: { fx: stdioServer() } })
    open.push(ts)
    const agent = agentWith(ts, [
      { toolCalls: [{ name: 'grow', args: {}, id: 'c1' }] },
      { text: 'grown' },
      { toolCalls: [{ name: 'extra', args: {}, id: 'c2' }] },
      { text: 'done' },
    ])
    const before = versionOf(ts)
    agent.followup('grow')
    await agent.whenIdle()
    await until(() => versionOf(ts) !== before)
    agent.followup('use it')
    await agent.whenIdle()
    const headers = data(agent.events, 'request/header')
    expect(headers.map((h) => h.reason)).toEqual(['initial', 'change'])
    expect(headers[0]!.tools.map((t: any) => t.name)).not.toContain('extra')
    expect(headers[1]!.tools.map((t: any) => t.name)).toContain('extra')
    // the first turn's two steps saw one header: nothing changed inside the turn's request
    expect(data(agent.events, 'tool/result')[1]!.message.content).toEqual([{ type: 'text', text: 'extra' }])
    expect(verify(agent.events).violations).toEqual([])
  })

  for (const onDrift of ['allow', 'block', 'ask'] as const) {
    it(`R11: a changed definition of a tool already offered gets onDrift '${onDrift}'`, async () => {
      const s = await startHttpServer()
      open.push(s)
      const ts = await mcpTools({ servers: { fx: { url: s.url, onDrift } } })
      open.push(ts)
      const agent = agentWith(ts, [
        { toolCalls: [{ name: 'grow', args: {}, id: 'c1' }] },
        { text: 'grown' },
        { toolCalls: [{ name: 'echo', args: { text: 'again' }, id: 'c2' }] },
        { text: 'done' },
      ])
      const before = versionOf(ts)
      agent.followup('grow')
      await agent.whenIdle()
      s.notifyToolsChanged()
      await until(() => versionOf(ts) !== before)
      agent.followup('echo')
      const settled = await agent.whenSettled()
      const headers = data(agent.events, 'request/header')
      expect(headers.map((h) => h.reason)).toEqual(['initial', 'change'])
      const echo1 = headers[0]!.tools.find((t: any) => t.name === 'echo')
      const echo2 = headers[1]!.tools.find((t: any) => t.name === 'echo')
      expect(echo1.description).toBe('Echoes its text.')
      if (onDrift === 'block') {
        expect(echo2).toBeUndefined()
        expect(data(agent.events, 'tool/result')[1]!.error.code).toBe('UNKNOWN_TOOL')
        expect(settled).toBe('idle')
      } else {
        expect(echo2.description).toBe('Echoes its text, louder.')
        expect(echo2.source.hash).not.toBe(echo1.source.hash)
        if (onDrift === 'ask') {
          expect(settled).toBe('parked')
          expect(agent.approvals()).toMatchObject([{ callId: 'c2', name: 'echo' }])
          await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve' })
          await agent.whenIdle()
        } else expect(settled).toBe('idle')
        expect(data(agent.events, 'tool/result')[1]!.message.content).toEqual([{ type: 'text', text: 'again' }])
      }
      expect(verify(agent.events).violations).toEqual([])
    })
  }

  it('drift is measured against the log: a resumed session whose server changed meanwhile asks (onDrift ask)', async () => {
    const s = await startHttpServer()
    open.push(s)
    const first = await mcpTools({ servers: { fx: { url: s.url } } })
    open.push(first)
    const a1 = agentWith(first, [{ text: 'hello' }])
    a1.followup('hi')
    await a1.whenIdle()
    s.state.echoDescription = 'Echoes its text, louder.'
    const second = await mcpTools({ servers: { fx: { url: s.url } } })
    open.push(second)
    const a2 = createAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'echo', args: { text: 'x' }, id: 'c9' }] }, { text: 'done' }], { info: { name: 'scripted' } }),
      tools: [...second], prefix: a1.events,
    })
    a2.followup('echo')
    expect(await a2.whenSettled()).toBe('parked')
    expect(a2.approvals()).toMatchObject([{ callId: 'c9', name: 'echo' }])
  })

  it('names: a tool name two servers share becomes server__tool; source still names the server\'s tool', async () => {
    const s = await startHttpServer()
    open.push(s)
    const ts = await mcpTools({ servers: { a: { url: s.url }, b: { url: s.url, tools: { rich: { enabled: false }, count: { name: 'b_count' } } } } })
    open.push(ts)
    const names = ts.map((t) => t.name)
    expect(names).toContain('a__echo')
    expect(names).toContain('b__echo')
    expect(names).toContain('rich')
    expect(names).not.toContain('b__rich')
    expect(names).toContain('b_count')
    expect(ts.find((t) => t.name === 'b__echo')!.source).toMatchObject({ mcp: 'b', tool: 'echo' })
  })

  it('close() ends every connection: a stdio server process exits, later calls fail as TOOL_ERROR (the agent goes on)', async () => {
    const ts = await mcpTools({ servers: { fx: stdioServer() } })
    await ts.close()
    await ts.close()
    const agent = agentWith(ts, [{ toolCalls: [{ name: 'echo', args: { text: 'x' }, id: 'c1' }] }, { text: 'done' }])
    agent.followup('go')
    await agent.whenIdle()
    const r = data(agent.events, 'tool/result')[0]!
    expect(r.error.code).toBe('TOOL_ERROR')
    expect(r.error.message).toContain("MCP server 'fx' is closed")
  })
})
