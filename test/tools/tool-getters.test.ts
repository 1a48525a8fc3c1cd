/**
 * A tool definition is user data read at call time, so a getter on it may throw long after
 * `defineTool` accepted it (Standards: "every value that comes from a user is read inside a
 * guard"). A `timeoutMs` getter that throws makes that call's result a TOOL_ERROR — the body does
 * not run, the other calls of the step run and commit in model order (L5), and the scheduler does
 * not fail the step. (Found by the mutation round's tools/ helper; isConcurrencySafe had the same
 * hole, see test/tools/mutation-classify.test.ts.)
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../tools/define.js'
import { runToolCalls } from '../../tools/scheduler.js'
import type { AnyTool } from '../../tools/types.js'
import { call, recordingEnv } from './helpers.js'

describe('tool definition getters read at call time (L5, R7)', () => {
  it('L5: a timeoutMs getter that throws at call time is that call\'s TOOL_ERROR; the body does not run; the next call runs', async () => {
    let ran = 0
    const flaky = defineTool({ name: 'flaky', description: '', parameters: z.object({}), timeoutMs: 1000, execute: () => ((ran++), 'done') }) as unknown as AnyTool
    Object.defineProperty(flaky, 'timeoutMs', {
      get() {
        throw new Error('getter broke')
      },
    })
    const fine = defineTool({ name: 'fine', description: '', parameters: z.object({}), execute: () => 'ok' }) as unknown as AnyTool
    const rec = recordingEnv({ tools: [flaky, fine] })
    const out = await runToolCalls([call('a', 'flaky'), call('b', 'fine')], rec.env)
    expect(out).toEqual({ concluded: false, aborted: false })
    expect(rec.results()).toEqual([
      { id: 'a', code: 'TOOL_ERROR', text: "Tool 'flaky' was not run: reading its timeoutMs threw: getter broke" },
      { id: 'b', code: undefined, text: 'ok' },
    ])
    expect(ran).toBe(0)
  })
})
