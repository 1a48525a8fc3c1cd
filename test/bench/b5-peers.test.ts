/**
 * B5 (bench/README.md) runs AI SDK 7's `generateText` beside v5 and v6 (issue 33 item 5) and
 * records the Node version of each figure. A tiny run (2 turns, a 1-turn warm-up, the AI SDK peers
 * only): the loop of each system ran through (its call counts are checked inside the benchmark),
 * so each gets a figure. No timing is asserted.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { benchPeers } from '../../bench/b5-peers.js'

const saved = { ...process.env }
afterEach(() => {
  for (const k of ['B5_TURNS', 'B5_WARMUP_TURNS', 'B5_SYSTEMS']) {
    if (saved[k] === undefined) delete process.env[k]
    else process.env[k] = saved[k]
  }
})

describe('B5 peers on today\'s versions', () => {
  it('B5 measures ai@7 generateText beside ai@5 and ai@6, each figure with its Node version', async () => {
    process.env.B5_TURNS = '2'
    process.env.B5_WARMUP_TURNS = '1'
    process.env.B5_SYSTEMS = 'aiSdk,aiSdk6,aiSdk7'
    const { B5 } = await benchPeers()
    const detail = B5.detail as { usPerStep: Record<string, number | null>; nodeOf: Record<string, string>; versions: Record<string, string>; skipped: Record<string, string> }
    expect(detail.skipped).toEqual({ openaiAgents: 'not selected (B5_SYSTEMS)', langgraph: 'not selected (B5_SYSTEMS)' })
    for (const name of ['turnlog', 'aiSdk', 'aiSdk6', 'aiSdk7']) {
      expect(detail.usPerStep[name], name).toBeGreaterThan(0)
      expect(detail.nodeOf[name], name).toBe(process.version)
    }
    expect(detail.versions.ai7).toMatch(/^7\./)
  }, 120_000)
})
