/**
 * `turnlog/mcp` against `@modelcontextprotocol/server-everything` (issue 35, "Tests": the
 * protocol's reference server, over stdio, spawned by the SDK's stdio transport): its tools listed
 * with their annotations as policy (read-only → concurrency safe, no approval; idempotent →
 * re-issued after a crash), calls through the agent's whole step, and its result kinds mapped
 * without loss (text, a sum, `structuredContent` beside its text block, an image), all in one
 * step's pool. The log verifies, and re-executes without the server (P4).
 */
import { createRequire } from 'node:module'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { mcpTools, type McpServerConfig, type McpTools } from '../../mcp/index.js'
import { scriptedModel } from '../../models/index.js'
import { reexecute, verify } from '../../replay/index.js'

const require = createRequire(import.meta.url)
/** The package's own launcher (`mcp-server-everything stdio`), run by this Node. */
const everything = (): McpServerConfig => ({
  command: process.execPath,
  args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
  env: { PATH: process.env['PATH'] ?? '' },
  stderr: 'ignore',
})

const open: McpTools[] = []
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close()
})

const results = (events: readonly LogEvent[]) => new Map(events.filter((e) => e.type === 'tool/result').map((e) => {
  const d = e.data as { callId: string; message: { content: Array<Record<string, any>> }; error?: { code: string } }
  return [d.callId, d] as const
}))

describe('turnlog/mcp against @modelcontextprotocol/server-everything over stdio', () => {
  it('its tools carry their annotations as policy; echo, get-sum, get-structured-content and get-tiny-image run in one step and map without loss; the log verifies and re-executes without the server (P4)', async () => {
    const ts = await mcpTools({ servers: { everything: everything() } })
    open.push(ts)
    const byName = new Map(ts.map((t) => [t.name, t]))
    for (const name of ['echo', 'get-sum', 'get-structured-content', 'get-tiny-image']) {
      const t = byName.get(name)
      expect(t, name).toBeDefined()
      // readOnlyHint: true, destructiveHint: false in the server's definitions
      expect(t!.needsApproval, name).toBe(false)
      expect((t as { isConcurrencySafe?: () => boolean }).isConcurrencySafe?.(), name).toBe(true)
      expect((t as { source?: unknown }).source).toMatchObject({ mcp: 'everything', tool: name })
    }

    const agent = createAgent({
      model: scriptedModel([
        { toolCalls: [
          { name: 'echo', args: { message: 'hello' }, id: 'c1' },
          { name: 'get-sum', args: { a: 2, b: 3 }, id: 'c2' },
          { name: 'get-structured-content', args: { location: 'Chicago' }, id: 'c3' },
          { name: 'get-tiny-image', args: {}, id: 'c4' },
        ] },
        { text: 'done' },
      ], { info: { name: 'scripted' } }),
      tools: [...ts],
      checkRequests: 'full',
    })
    agent.followup('use the reference server')
    await agent.whenIdle()
    const events = agent.events
    const r = results(events)
    expect([...r.values()].map((x) => x.error?.code)).toEqual([undefined, undefined, undefined, undefined])
    expect(r.get('c1')!.message.content).toEqual([{ type: 'text', text: 'Echo: hello' }])
    expect(r.get('c2')!.message.content).toEqual([{ type: 'text', text: 'The sum of 2 and 3 is 5.' }])
    // structuredContent kept on the first block (logged, not sent to a provider), its text beside it
    const weather = { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 }
    const c3 = r.get('c3')!.message.content
    expect(c3).toHaveLength(1)
    expect(JSON.parse(c3[0]!.text)).toEqual(weather)
    expect(c3[0]!.providerData).toEqual({ mcp: { structuredContent: weather } })
    // an image block: a PNG, as the server sent it
    const c4 = r.get('c4')!.message.content
    expect(c4.find((b) => b.type === 'image')).toMatchObject({ type: 'image', mediaType: 'image/png' })
    expect(Buffer.from(c4.find((b) => b.type === 'image')!.data, 'base64').subarray(1, 4).toString('latin1')).toBe('PNG')
    // the four calls shared the pool: every tool/call before the first result
    const types = events.map((e) => e.type)
    expect(types.lastIndexOf('tool/call')).toBeLessThan(types.indexOf('tool/result'))
    expect(verify(events).ok).toBe(true)

    // P4: the recorded log re-executes with the same tool definitions, the server closed
    await ts.close()
    open.pop()
    const again = await reexecute(events, { tools: [...ts], stallMs: 300 })
    expect(again).toEqual({ ok: true, eventCount: events.length })
  })
})
