/**
 * Benchmark B6 (bench/README.md) as a bound: an idle agent holds nothing for the features it has
 * not used (children, approvals' held decisions, wakeups' hosts, the inbox handle, observers), and
 * its ids are flat strings. Memory, not time: the figure does not depend on the machine's load.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { createAgent, type Agent } from '../../agent/index.js'
import { randomId } from '../../agent/ids.js'
import type { ModelAdapter } from '../../models/index.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

function heapUsed(): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

const model: ModelAdapter = {
  info: { name: 'idle' },
  async *stream() {
    yield { type: 'finish', reason: 'stop' }
  },
}

describe('an idle agent costs little (B6)', () => {
  it('2,000 idle agents retain at most 5 KB each', () => {
    createAgent({ model, system: 'warm', retry: false })
    const count = 2_000
    const before = heapUsed()
    const agents: Agent[] = []
    for (let i = 0; i < count; i++) agents.push(createAgent({ model, system: 'idle', retry: false }))
    const perAgent = (heapUsed() - before) / count
    expect(agents).toHaveLength(count)
    expect(perAgent).toBeLessThanOrEqual(5 * 1024)
  })

  it('default ids are UUIDs held as flat strings (about 70 bytes, not a 14-node concatenation)', () => {
    const count = 5_000
    const before = heapUsed()
    const ids: string[] = []
    for (let i = 0; i < count; i++) ids.push(randomId())
    const perId = (heapUsed() - before) / count
    expect(new Set(ids).size).toBe(count)
    for (const id of ids.slice(0, 10)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(perId).toBeLessThan(200)
  })
})
