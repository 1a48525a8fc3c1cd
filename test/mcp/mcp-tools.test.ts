/**
 * turnlog/mcp end to end over real MCP servers on loopback (docs/spec/lifecycle.md §12): the SDK's
 * own server package serves test/mcp/fixture-server.ts over Streamable HTTP (both protocol eras)
 * and over stdio; the agent calls its tools through `mcpTools`. Covers the catalog in the log
 * (`source`), the policy from annotations, content blocks without loss, `isError`, timeouts and
 * cancel, list changes at step boundaries (R11), drift, credentials (never logged) and `close()`.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent, type Agent } from '../../agent/index.js'
import { TurnlogError, type LogEvent } from '../../events/index.js'
import { verify } from '../../replay/index.js'
import { scriptedModel } from '../../models/index.js'
import { mcpTools, type McpTools } from '../../mcp/index.js'
import { startHttpServer } from './fixture-server.js'

type Srv = Awaited<ReturnType<typeof startHttpServer>>
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close()
})

async function server(): Promise<Srv> {
  const s = await startHttpServer()
  open.push(s)
  return s
}

async function tools(servers: Parameters<typeof mcpTools>[0]['servers']): Promise<McpTools> {
  const t = await mcpTools({ servers })
  open.push(t)
  return t
}

/** Waits for a condition the server's side reaches on its own (bounded: fails after 10 s). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
  expect(cond()).toBe(true)
}

function data(events: readonly LogEvent[], type: string): Array<Record<string, any>> {
  return events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>)
}

function agentWith(ts: McpTools, script: Parameters<typeof scriptedModel>[0]): Agent {
  return createAgent({ model: scriptedModel(script, { info: { name: 'scripted' } }), tools: [...ts], checkRequests: 'full' })
}

describe('turnlog/mcp over Streamable HTTP', () => {
  for (const protocol of ['auto', 'legacy'] as const) {
    it(`L5/R11: a call is an ordinary tool/call + tool/result; definitions carry source {mcp, tool, hash} (${protocol === 'auto' ? '2026-07-28' : '2025-11-25'})`, async () => {
      const s = await server()
      const ts = await tools({ fx: { url: s.url, protocol } })
      expect(ts.map((t) => t.name)).toContain('echo')
      const agent = agentWith(ts, [{ toolCalls: [{ name: 'echo', args: { text: 'hi' }, id: 'c1' }] }, { text: 'done' }])
      agent.followup('go')
      await agent.whenIdle()
      const header = data(agent.events, 'request/header')[0]!
      const echo = header.tools.find((t: any) => t.name === 'echo')
      expect(echo.source).toEqual({ mcp: 'fx', tool: 'echo', hash: expect.stringMatching(/^sha256:[0-9a-f]{32}$/) })
      expect(echo.parameters).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } })
      expect(data(agent.events, 'tool/call')).toMatchObject([{ callId: 'c1', name: 'echo', arguments: '{"text":"hi"}' }])
      expect(data(agent.events, 'tool/result')[0]).toMatchObject({ callId: 'c1', message: { content: [{ type: 'text', text: 'hi' }] } })
      expect(data(agent.events, 'tool/result')[0]!.error).toBeUndefined()
      expect(verify(agent.events).violations).toEqual([])
    })
  }

  it('content blocks (text, image, audio, resource link, embedded resources) and structuredContent reach the result without loss', async () => {
    const s = await server()
    const ts = await tools({ fx: { url: s.url } })
    const agent = agentWith(ts, [{ toolCalls: [{ name: 'rich', args: {}, id: 'c1' }] }, { text: 'done' }])
    agent.followup('go')
    await agent.whenIdle()
    const content = data(agent.events, 'tool/result')[0]!.message.content
    expect(content).toEqual([
      { type: 'text', text: 'hello', providerData: { mcp: { structuredContent: { ok: true } } } },
      { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'file', mediaType: 'audio/wav', data: 'UklGRg==', providerData: { mcp: { type: 'audio', mimeType: 'audio/wav' } } },
      { type: 'text', text: '[resource] a.txt <file:///tmp/a.txt>', providerData: { mcp: { type: 'resource_link', uri: 'file:///tmp/a.txt', name: 'a.txt', mimeType: 'text/plain' } } },
      { type: 'text', text: 'inside b', providerData: { mcp: { type: 'resource', resource: { uri: 'file:///tmp/b.txt', mimeType: 'text/plain' } } } },
      { type: 'file', mediaType: 'application/octet-stream', data: 'AAEC', providerData: { mcp: { type: 'resource', resource: { uri: 'file:///tmp/c.bin', mimeType: 'application/octet-stream' } } } },
    ])
    expect(verify(agent.events).violations).toEqual([])
  })

  it('isError is an error result the model sees (TOOL_ERROR with the server\'s text)', async () => {
    const s = await server()
    const ts = await tools({ fx: { url: s.url } })
    const agent = agentWith(ts, [{ toolCalls: [{ name: 'fail', args: {}, id: 'c1' }] }, { text: 'done' }])
    agent.followup('go')
    await agent.whenIdle()
    const r = data(agent.events, 'tool/result')[0]!
    expect(r.error).toEqual({ code: 'TOOL_ERROR', message: 'it broke' })
    expect(r.message).toMatchObject({ isError: true, content: [{ type: 'text', text: 'it broke' }] })
  })

  it('policy from annotations: readOnlyHint → parallel, destructiveHint → needsApproval, idempotentHint → re-issuable; overrides win', async () => {
    const s = await server()
    const ts = await tools({ fx: { url: s.url, tools: { rich: { needsApproval: true }, echo: { concurrencySafe: false } } } })
    const by = new Map(ts.map((t) => [t.name, t]))
    expect(by.get('echo')!.isConcurrencySafe).toBeUndefined()
    expect(by.get('delete_file')!.needsApproval).toBe(true)
    expect(by.get('rich')!.needsApproval).toBe(true)
    expect(by.get('count')!.needsApproval).toBe(false)
    expect(by.get('count')!.isConcurrencySafe).toBeUndefined()
    const plain = await tools({ fx2: { url: s.url } })
    const p = new Map(plain.map((t) => [t.name, t]))
    expect(p.get('echo')!.isConcurrencySafe!({})).toBe(true)
    expect(p.get('rich')!.needsApproval).toBe(false)
  })

  it('L17: a destructive tool waits for a person before its request reaches the server', async () => {
    const s = await server()
    const ts = await tools({ fx: { url: s.url } })
    const agent = agentWith(ts, [{ toolCalls: [{ name: 'delete_file', args: { path: '/x' }, id: 'c1' }] }, { text: 'done' }])
    agent.followup('go')
    expect(await agent.whenSettled()).toBe('parked')
    expect(data(agent.events, 'tool/call')).toEqual([])
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve' })
    await agent.whenIdle()
    expect(data(agent.events, 'tool/result')[0]!.message.content).toEqual([{ type: 'text', text: 'deleted /x' }])
  })

  it('a timeout cancels the request: TOOL_TIMEOUT, and the agent goes on', async () => {
    const s = await server()
    const ts = await tools({ fx: { url: s.url, tools: { hang: { timeoutMs: 200 } } } })
    const agent = agentWith(ts, [{ toolCalls: [{ name: 'hang', args: {}, id: 'c1' }] }, { text: 'done' }])
    agent.followup('go')
    await agent.whenIdle()
    expect(data(agent.events, 'tool/result')[0]!.error.code).toBe('TOOL_TIMEOUT')
    expect(data(agent.events, 'turn/end')[0]!.reason.kind).toBe('completed')
    await until(() => s.state.cancelled > 0)
  })

  it('the turn\'s cancel aborts the request: ABORTED', async () => {
    const s = await server()
    const ts = await tools({ fx: { url: s.url } })
    const agent = agentWith(ts, [{ toolCalls: [{ name: 'hang', args: {}, id: 'c1' }] }, { text: 'done' }])
    agent.followup('go')
    await until(() => s.state.hanging > 0)
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(data(agent.events, 'tool/result')[0]!.error.code).toBe('ABORTED')
    // the server saw the cancellation (notifications/cancelled, or the request's stream closed)
    await until(() => s.state.cancelled > 0)
  })

  it('a server without a command or a url is INVALID_ARGUMENT naming it, before anything is started', async () => {
    const err = await mcpTools({ servers: { broken: {} as never } }).catch((e: unknown) => e)
    expect(TurnlogError.is(err) && [err.code, err.field]).toEqual(['INVALID_ARGUMENT', 'servers.broken'])
  })

  it('credentials: static headers reach the server, never the log or an error message', async () => {
    const s = await server()
    const secret = 'Bearer tok-very-secret-123'
    const ts = await tools({ fx: { url: s.url, auth: { headers: { Authorization: secret } } } })
    const agent = agentWith(ts, [{ toolCalls: [{ name: 'echo', args: { text: 'x' }, id: 'c1' }] }, { text: 'done' }])
    agent.followup('go')
    await agent.whenIdle()
    expect(s.state.authorizations).toContain(secret)
    expect(JSON.stringify(agent.events)).not.toContain('tok-very-secret')
    // a server that refuses: the error names the server, not the token
    let caught: unknown
    try {
      await mcpTools({ servers: { down: { url: 'http://127.0.0.1:1/mcp', auth: { headers: { Authorization: secret } }, connectTimeoutMs: 2000 } } })
    } catch (err) {
      caught = err
    }
    expect(TurnlogError.is(caught) && caught.code).toBe('MCP_CONNECT')
    expect(String((caught as Error).message)).toContain("'down'")
    expect(String((caught as Error).message)).not.toContain('tok-very-secret')
  })
})
