import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { TurnlogAgent } from '../../agent/agent.js'
import { stateAt } from '../../replay/replay.js'
import { arbCommandList, arbScenario, recordRun } from './agent-runs.js'

const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown

describe('P2: stateAt(log, n) equals the live state right after seq n', () => {
  it('P2: the live agent\'s history and lifecycle position after each append equal stateAt at that seq; the inbox at the end (300 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(arbScenario(), fc.scheduler(), arbCommandList(10), async (sc, s, cmds) => {
        const live: Array<{ history: unknown; lifecycle: unknown }> = []
        const run = await recordRun(sc, s, cmds, {
          onAgent: (a: TurnlogAgent) => {
            // observers run after the agent's own folds: this is the live state right after seq n
            a.subscribe((e) => {
              live[e.seq] = { history: plain(a.history()), lifecycle: plain(a.lifecycle) }
            })
          },
        })
        expect(live.length).toBe(run.events.length)
        for (let n = 0; n < run.events.length; n++) {
          const st = stateAt(run.events, n)
          if (!isDeepStrictEqual(plain(st.history.messages), live[n]!.history)) throw new Error(`history differs at seq ${n}`)
          if (!isDeepStrictEqual(plain(st.lifecycle), live[n]!.lifecycle)) throw new Error(`lifecycle differs at seq ${n}`)
        }
        const end = stateAt(run.events, run.events.length - 1)
        expect(plain(end.inbox)).toEqual(plain({ nextTurn: run.agent.inbox.nextTurn, nextStep: run.agent.inbox.nextStep }))
      }),
      { numRuns: 300 },
    )
  }, 300_000)
})
