/**
 * The fuzzer's oracle, R3 ("each request equals the request rebuilt from the log at that seq"),
 * checked on its own: a real agent's requests pass; a request whose messages, system, tools or
 * config differ from the log at its seq is reported as R3 — whether the requests come in log order
 * (the one-pass fold) or not (the fold restarts). Without this, a broken R3 check would let every
 * fuzz run pass falsely.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import type { ModelAdapter, ModelRequest } from '../../models/index.js'
import { scriptedModel } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import { finalChecks } from '../../testing/fuzz/oracle.js'
import type { Run } from '../../testing/fuzz/run.js'

async function recordedRun(): Promise<Run> {
  const requests: Run['requests'] = []
  const statuses: Run['statuses'] = []
  const inner = scriptedModel([
    { toolCalls: [{ name: 'echo', args: { text: 'a' } }] },
    { text: 'one' },
    { text: 'two' },
  ])
  let agent: ReturnType<typeof createAgent>
  const model: ModelAdapter = {
    info: inner.info,
    stream(request, signal) {
      requests.push({ request, at: agent.events.length, turn: null })
      return inner.stream(request, signal)
    },
  }
  const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), execute: async ({ text }) => text })
  agent = createAgent({ model, tools: [echo], system: 'sys' })
  agent.on('agent/status', (e) => void statuses.push({ status: e.status, at: agent.events.length }))
  agent.followup('first')
  await agent.whenIdle()
  agent.followup('second')
  await agent.whenIdle()
  return {
    agent, plugins: [], decisions: [], summaryRequests: [], deferred: [], statuses, requests, cancels: [],
    canceller: 'hook', errors: [], bodies: { started: [], maxInFlight: 1, exclusiveOverlap: false },
    maxParallel: 10, preOrder: [], postOrder: [], accepted: [], bodyCount: {}, hostile: {},
  } as unknown as Run
}

const r3 = (run: Run) => {
  try {
    finalChecks(run, 10)
    return null
  } catch (err) {
    return (err as { invariant?: string }).invariant ?? String(err)
  }
}

describe('fuzz oracle: R3 (requests equal the log at their seq)', () => {
  it('a real run passes; each kind of difference in any request is R3', async () => {
    const run = await recordedRun()
    expect(run.requests.length).toBe(3)
    expect(r3(run)).toBeNull()
    const edits: Array<(r: ModelRequest) => ModelRequest> = [
      (r) => ({ ...r, messages: r.messages.slice(0, -1) }),
      (r) => ({ ...r, system: 'other' }),
      (r) => ({ ...r, tools: [] }),
      (r) => ({ ...r, config: { ...r.config, temperature: 0.123 } }),
    ]
    for (let i = 0; i < run.requests.length; i++) {
      for (const edit of edits) {
        const requests = run.requests.map((x, j) => (j === i ? { ...x, request: edit(x.request) } : x))
        expect(r3({ ...run, requests } as Run), `request ${i}`).toBe('R3')
      }
    }
  })

  it('requests out of log order are still each compared with the log at their own seq', async () => {
    const run = await recordedRun()
    const reversed = [...run.requests].reverse()
    expect(r3({ ...run, requests: reversed } as Run)).toBeNull()
    const broken = reversed.map((x, j) => (j === 2 ? { ...x, request: { ...x.request, system: 'x' } } : x))
    expect(r3({ ...run, requests: broken } as Run)).toBe('R3')
  })
})
