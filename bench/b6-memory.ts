/**
 * B6 (bench/README.md): memory of idle agents. A server holds many sessions between
 * messages, so what an agent costs while nobody talks to it decides how many fit in one process.
 *
 * 10,000 agents are created on the default in-memory log and kept alive; none is woken. The figure
 * is the retained heap per agent (after a full GC, heap after minus heap before, ÷ the count).
 * `detail.afterTurnKB` is the extra retained per agent after each of 1,000 agents ran one short
 * turn (a followup answered with text), for the record: that part grows with the log, which is
 * the point of keeping it.
 *
 * The streamed-replay half of B6 (peak heap of a streamed replay ≤ 2× its final state) is reported
 * by B1 beside its time (peak RSS of the reader in a child process).
 */
import { createAgent, type Agent } from '../agent/index.js'
import type { ModelAdapter } from '../models/index.js'
import { collectGarbage, envInt, round, type BenchResult } from './common.js'
import { STOP } from './b2-step.js'

const model: ModelAdapter = {
  info: { name: 'bench' },
  async *stream() {
    yield* STOP
  },
}

function heapUsed(): number {
  collectGarbage()
  collectGarbage()
  return process.memoryUsage().heapUsed
}

export async function benchMemory(log: (l: string) => void = () => {}): Promise<{ B6: BenchResult }> {
  const count = envInt('B6_AGENTS', 10_000)
  const turned = Math.min(count, envInt('B6_TURNED', 1_000))
  // warm up: the first agent loads and compiles the machines, the schemas and the reducers
  const warm = createAgent({ model, system: 'bench', retry: false })
  warm.followup('warm-up')
  await warm.whenIdle()
  await warm.dispose()

  const before = heapUsed()
  const agents: Agent[] = []
  for (let i = 0; i < count; i++) agents.push(createAgent({ model, system: 'bench', retry: false }))
  const idle = heapUsed()
  const idleKB = (idle - before) / count / 1024

  for (let i = 0; i < turned; i++) {
    agents[i]!.followup('hello')
    await agents[i]!.whenIdle()
  }
  const after = heapUsed()
  const afterTurnKB = (after - idle) / turned / 1024
  log(`  B6: ${idleKB.toFixed(2)} KB per idle agent (${count}); +${afterTurnKB.toFixed(2)} KB after one short turn (${turned})`)
  // keep the agents reachable until the last measurement
  if (agents.length !== count) throw new Error('unreachable')
  for (const a of agents) await a.dispose()

  return {
    B6: {
      value: round(idleKB, 2),
      unit: 'KB per idle agent',
      target: '<= 5',
      detail: {
        agents: count,
        heapBeforeMB: round(before / 2 ** 20, 1),
        heapIdleMB: round(idle / 2 ** 20, 1),
        afterTurnKB: round(afterTurnKB, 2),
        turnedAgents: turned,
        node: process.version,
        how: 'createAgent({ model, system }) on the in-memory log, kept in an array; heap after two full GCs',
      },
    },
  }
}
