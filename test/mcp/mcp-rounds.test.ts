/**
 * MCP input rounds (docs/spec/lifecycle.md §11, §12; R10, R11): a 2026-07-28 server's
 * `input_required` result is a turnlog round — its elicitation a `form` request, its
 * `requestState` in the round's state — and the answer re-issues `tools/call` with
 * `inputResponses` and that state, from whichever process holds the session. Here the session is
 * parked, its agent disposed, the round answered through the store with no agent running, and
 * another agent (over a new connection) re-issues the call: the server's handler runs again with
 * the answer and the state it gave.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { resumeAgent, verify } from '../../replay/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { mcpTools } from '../../mcp/index.js'
import { startHttpServer } from './fixture-server.js'

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!()
})

const of = (events: readonly LogEvent[], type: string) => events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>)

async function setup() {
  const s = await startHttpServer()
  cleanup.push(() => s.close())
  const tools = await mcpTools({ servers: { fx: { url: s.url } } })
  cleanup.push(() => tools.close())
  return { s, tools }
}

describe('MCP input rounds (2026-07-28 input_required)', () => {
  it('R11: the elicitation is a logged round; agent.answer re-issues the call with inputResponses and the server\'s requestState', async () => {
    const { s, tools } = await setup()
    const agent = createAgent({ model: scriptedModel([{ toolCalls: [{ name: 'deploy', args: { env: 'prod' }, id: 'c1' }] }, { text: 'done' }], { info: { name: 'scripted' } }), tools: [...tools] })
    agent.followup('deploy')
    expect(await agent.whenSettled()).toBe('parked')
    const asked = of(agent.events, 'tool/input-requested')
    expect(asked).toMatchObject([{ callId: 'c1', round: 1, requests: { confirm: { kind: 'form', message: 'Deploy to prod?', schema: { type: 'object', required: ['ok'] } } } }])
    expect(asked[0]!.state).toEqual({ mcp: { requestState: 'asked-prod', kinds: { confirm: 'form' } } })
    const [open] = agent.inputs()
    await agent.answer(open!.requestId, { action: 'accept', responses: { confirm: { ok: true, note: 'go' } } })
    await agent.whenIdle()
    expect(of(agent.events, 'tool/result')[0]!.message.content).toEqual([{ type: 'text', text: 'deployed to prod: go (state asked-prod)' }])
    expect(s.state.calls).toEqual(['deploy'])
    expect(verify(agent.events).violations).toEqual([])
  })

  it('a 2025-11-25 connection: the server\'s elicitation is refused by the client (no live rounds yet) and the call ends as the server\'s error result, never hanging', async () => {
    const s = await startHttpServer()
    cleanup.push(() => s.close())
    const tools = await mcpTools({ servers: { fx: { url: s.url, protocol: 'legacy' } } })
    cleanup.push(() => tools.close())
    const agent = createAgent({ model: scriptedModel([{ toolCalls: [{ name: 'deploy', args: { env: 'prod' }, id: 'c1' }] }, { text: 'done' }], { info: { name: 'scripted' } }), tools: [...tools] })
    agent.followup('deploy')
    expect(await agent.whenSettled()).toBe('idle')
    const r = of(agent.events, 'tool/result')[0]!
    expect(r.error?.code).toBe('TOOL_ERROR')
    expect(of(agent.events, 'tool/input-requested')).toEqual([])
  })

  it('R10 R11: a decline reaches the server as a declined elicitation', async () => {
    const { tools } = await setup()
    const agent = createAgent({ model: scriptedModel([{ toolCalls: [{ name: 'deploy', args: { env: 'dev' }, id: 'c1' }] }, { text: 'done' }], { info: { name: 'scripted' } }), tools: [...tools] })
    agent.followup('deploy')
    expect(await agent.whenSettled()).toBe('parked')
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'decline' })
    await agent.whenIdle()
    expect(of(agent.events, 'tool/result')[0]!.message.content).toEqual([{ type: 'text', text: 'not deployed (decline)' }])
  })

  it('R10 R11: answered through the store with no agent running; another process\'s agent re-issues the call once', async () => {
    const { s, tools } = await setup()
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-mcp-rounds-'))
    cleanup.push(() => rm(dir, { recursive: true, force: true }))
    const a = createAgent({ store: jsonlStore(dir), sessionId: 's', model: scriptedModel([{ toolCalls: [{ name: 'deploy', args: { env: 'prod' }, id: 'c1' }] }], { info: { name: 'scripted' } }), tools: [...tools] })
    a.followup('deploy')
    expect(await a.whenSettled()).toBe('parked')
    const requestId = a.inputs()[0]!.requestId
    await a.dispose()
    await tools.close()
    // another process: a store of its own, no agent
    await jsonlStore(dir).answer('s', requestId, { action: 'accept', responses: { confirm: { ok: true, note: 'from afar' } } }, { by: { kind: 'user', id: 'ann' } })
    // the next owner, with its own connection to the server
    const later = await mcpTools({ servers: { fx: { url: s.url } } })
    cleanup.push(() => later.close())
    const b = await resumeAgent({ store: jsonlStore(dir), sessionId: 's', model: scriptedModel([{ text: 'done' }], { info: { name: 'scripted' } }), tools: [...later] })
    await b.whenIdle()
    const events = b.events
    await b.dispose()
    expect(of(events, 'tool/result').map((r) => r.message.content)).toEqual([[{ type: 'text', text: 'deployed to prod: from afar (state asked-prod)' }]])
    expect(of(events, 'tool/input-provided')).toMatchObject([{ callId: 'c1', round: 1, by: { kind: 'user', id: 'ann' } }])
    expect(s.state.calls).toEqual(['deploy'])
    expect(verify(events).violations).toEqual([])
  })
})
