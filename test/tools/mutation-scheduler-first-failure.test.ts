/**
 * Two scheduler failures in one run: the first is the one reported and written (issue 15 part 3).
 */
import { describe, expect, it } from 'vitest'
import { runToolCalls } from '../../tools/scheduler.js'
import { call, deferred, flush, gatedTool, recordingEnv } from './helpers.js'

describe('two scheduler failures at once (TOOL_OUTCOME_UNKNOWN, L5)', () => {
  it('L5: the first failure wins: it is reported, named in the closing results, and nothing else is', async () => {
    const gate = deferred<void>()
    const rec = recordingEnv({
      tools: [],
      pre: async (p, next) => {
        if (p.call.id === 'b') {
          await gate.promise
          throw new Error('pre broke')
        }
        return next()
      },
      post: async (_p, next) => {
        await gate.promise
        return next()
      },
    })
    rec.env.isAbandoned = () => {
      throw new Error('guard broke')
    }
    rec.env.appendResult = ((base) => (c, s, o) => {
      if (c.id === 'a' && o.error === undefined) throw new Error('disk full')
      return base(c, s, o)
    })(rec.env.appendResult)
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const done = runToolCalls([call('a', 'p'), call('b', 'p')], rec.env)
    await flush()
    p.release('a') // a settles; its commit waits for post-execute, b's pre-execute waits too
    await flush()
    gate.resolve() // both fail now
    await done
    const errors = rec.errors().filter((e) => e.where === 'tools/scheduler')
    expect(errors).toHaveLength(1)
    // b's pre stage waited on the gate first, so its failure comes first
    const first = errors[0]!.message
    expect(first).toBe('guard broke')
    expect(rec.results().map((r) => [r.id, r.text])).toEqual([
      ['a', `The outcome of tool 'p' is unknown: the tool scheduler failed (${first}).`],
      ['b', `The outcome of tool 'p' is unknown: the tool scheduler failed (${first}).`],
    ])
  })
})
