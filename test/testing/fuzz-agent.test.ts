/**
 * The model-based fuzz of the real agent (issue: "a fast-check model-based test (fc.commands)
 * drives the Agent API … with fc.scheduler deciding the interleaving"). Checks L1–L16 on every
 * log and R1, R2, R3, R5, R7, R8 on every run; the fuzzer is the one users get (turnlog/testing).
 */
import { describe, expect, it } from 'vitest'
import { fuzzAgent } from '../../testing/index.js'

const runs = Number(process.env.TURNLOG_FUZZ_RUNS ?? 500)

describe('fuzzAgent', () => {
  it(`L1–L16, R1–R5, R7, R8: ${runs} scheduled model-based runs of the agent (random seed)`, async () => {
    await fuzzAgent({ numRuns: runs })
  })

  it('the scenarios reach every shape the fuzzer claims (fixed seed, so the census is stable)', async () => {
    const seen = new Map<string, number>()
    const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1)
    await fuzzAgent({
      numRuns: 1000,
      seed: 20261129,
      onRun: (events) => {
        for (const e of events) {
          const d = e.data as any
          if (e.type === 'turn/end') count(`turn/end ${d.reason.kind}`)
          else if (e.type === 'step/end') count(`step/end ${d.outcome.kind}`)
          else if (e.type === 'tool/result') count(d.error ? `tool ${d.error.code}` : 'tool ok')
          else if (e.type === 'assistant/message' && d.interrupted) count('interrupted')
          else if (e.type === 'llm/retry') count('llm/retry')
          else if (e.type === 'turn/start' && d.cause) count('retry turn')
        }
      },
    })
    // The generator must reach every shape it claims to fuzz (a fuzzer that never cancels proves nothing).
    for (const k of [
      'turn/end completed', 'turn/end blocked', 'turn/end aborted', 'turn/end error', 'turn/end max-tokens',
      'step/end tools', 'step/end stop', 'step/end failed', 'step/end aborted', 'step/end max-tokens',
      'tool ok', 'tool TOOL_ERROR', 'tool UNKNOWN_TOOL', 'tool INVALID_ARGS', 'llm/retry', 'retry turn', 'interrupted',
      'tool ABORTED_BEFORE_DISPATCH', 'turn/end step-limit',
    ]) expect(seen.get(k) ?? 0, k).toBeGreaterThan(0)
  })

  it('the fuzzer can fail: a tool that breaks the log is caught', async () => {
    // A hook that enters a message twice makes the driver's append refuse (L11): the fuzzer must report it.
    await expect(
      fuzzAgent({
        numRuns: 50,
        hooks: {
          'agent/pre-step': async (p, next) => next({ ...p, messages: [...p.messages, ...p.messages] }),
        },
      }),
    ).rejects.toThrow()
  })
})
