/**
 * Re-execution of a session with MCP calls (P4, docs/spec/lifecycle.md §12): the recorded results
 * are served and no server is contacted — the server is gone and the tools are closed when the
 * session is re-executed, and it re-executes without a divergence. Replay and the report read MCP
 * calls as ordinary tool calls.
 */
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import { scriptedModel } from '../../models/index.js'
import { reexecute, verify } from '../../replay/index.js'
import { mcpTools } from '../../mcp/index.js'
import { rerun } from '../../evals/index.js'
import { logToSpans } from '../../otel/index.js'
import { replay } from '../../replay/index.js'
import { startHttpServer } from './fixture-server.js'

describe('re-execution of MCP calls', () => {
  it('P4: served from the log, with the server gone and the connections closed', async () => {
    const s = await startHttpServer()
    const tools = await mcpTools({ servers: { fx: { url: s.url } } })
    const agent = createAgent({
      model: scriptedModel([
        { toolCalls: [{ name: 'echo', args: { text: 'a' }, id: 'c1' }, { name: 'echo', args: { text: 'b' }, id: 'c2' }, { name: 'fail', args: {}, id: 'c3' }] },
        { toolCalls: [{ name: 'rich', args: {}, id: 'c4' }] },
        { text: 'done' },
      ], { info: { name: 'scripted' } }),
      tools: [...tools],
    })
    agent.followup('go')
    await agent.whenIdle()
    const events = agent.events
    expect(verify(events).violations).toEqual([])
    await tools.close()
    await s.close()
    const r = await reexecute(events, { tools: [...tools] })
    expect(r.ok ? 'ok' : JSON.stringify(r.divergence).slice(0, 400)).toBe('ok')
    // a golden re-run with the same script serves the recorded results too (toolResults: 'recorded')
    const g = await rerun(events, {
      model: scriptedModel([
        { toolCalls: [{ name: 'echo', args: { text: 'a' }, id: 'c1' }, { name: 'echo', args: { text: 'b' }, id: 'c2' }, { name: 'fail', args: {}, id: 'c3' }] },
        { toolCalls: [{ name: 'rich', args: {}, id: 'c4' }] },
        { text: 'done' },
      ], { info: { name: 'scripted' } }),
      tools: [...tools],
    })
    expect(g.divergence).toBeNull()
  })

  it('replay and spans read MCP calls as ordinary tool calls; execute_tool spans name the server', async () => {
    const s = await startHttpServer()
    const tools = await mcpTools({ servers: { fx: { url: s.url } } })
    const agent = createAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'echo', args: { text: 'a' }, id: 'c1' }] }, { text: 'done' }], { info: { name: 'scripted' } }),
      tools: [...tools],
    })
    agent.followup('go')
    await agent.whenIdle()
    await tools.close()
    await s.close()
    const state = replay(agent.events)
    expect(JSON.stringify(state)).toContain('"callId":"c1"')
    const span = logToSpans(agent.events, { sessionId: 's' }).find((x) => x.name === 'execute_tool echo')!
    expect(span.attributes).toMatchObject({ 'gen_ai.tool.name': 'echo', 'turnlog.mcp.server': 'fx', 'turnlog.mcp.tool': 'echo' })
  })
})
