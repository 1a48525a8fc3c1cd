/**
 * R3 for the zero-copy request: a request holds the live history array and its length, and copies
 * on first read. These runs read every request's messages only at the very end, after later
 * appends, prunes and summaries replaced parts of the history: each must still equal the history
 * the log rebuilds at the request's own seq.
 */
import { describe, expect, it } from 'vitest'
import { expectRequestsFromLog, expectValid, make } from '../compaction/helpers.js'
import { endKinds } from './contain-helpers.js'
import { guardAgentErrors } from './error-guard.js'

const long = (c: string, n = 400) => c.repeat(n)
const SMALL = { contextWindow: 1000, pruneThresholdChars: 800, pruneHead: 300, pruneTail: 100 }

describe('zero-copy requests', () => {
  it('R3: requests read after later replacements still show the history as of their seq (checkRequests: log)', async () => {
    const turns = [
      { toolCalls: [{ name: 'big', args: { n: 3200 } }] }, { text: long('a') },
      { text: long('b') }, { text: long('c') }, { text: long('d') }, { text: 'e' },
    ]
    const m = make(turns, [{ text: 'summary of the early turns' }], SMALL, { checkRequests: 'log' })
    guardAgentErrors(m.agent)
    for (const u of ['1', '2', '3', '4', '5']) {
      m.agent.followup(long(u))
      await m.agent.whenIdle()
    }
    const kinds = m.agent.events.map((e) => e.type)
    // the run really replaced history after earlier requests were made
    expect(kinds).toContain('compaction/prune')
    expect(kinds).toContain('compaction/summary')
    expect(m.turnRequests.length).toBeGreaterThan(4)
    expectRequestsFromLog(m)
    // the snapshot is frozen once read, and stable on every read
    const r = m.turnRequests[0]!.request
    expect(Object.isFrozen(r.messages)).toBe(true)
    expect(r.messages).toBe(r.messages)
    expect(endKinds(m.agent.events)).toEqual(['completed', 'completed', 'completed', 'completed', 'completed'])
    expectValid(m.agent.events)
  })
})
