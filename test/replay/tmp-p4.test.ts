import fc from 'fast-check'
import { it } from 'vitest'
import { reexecute } from '../../replay/reexecute.js'
import { arbCommandList, arbScenario, recordRun } from './agent-runs.js'
it('repro', async () => {
  await fc.assert(
    fc.asyncProperty(arbScenario({ providerStreams: true }), fc.scheduler(), arbCommandList(10), async (sc, s, cmds) => {
      const run = await recordRun(sc, s, cmds)
      const r = await reexecute(run.events, { ...run.reexec, stallMs: 300 })
      if (!r.ok) {
        console.log(JSON.stringify(sc), JSON.stringify(cmds))
        console.log(run.events.map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 200)}`).join('\n'))
        console.log('---reexec', r.divergence.diff)
        console.log(((r as any).events ?? []).map((e: any) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 200)}`).join('\n'))
      }
      return r.ok
    }),
    { seed: -152215020, path: '8:4:6:9:11:13:14:14:15:15:15:15:15:15:15:18:17:17:27:27:33:35:35:33', endOnFailure: true, numRuns: 1 },
  )
}, 60000)
