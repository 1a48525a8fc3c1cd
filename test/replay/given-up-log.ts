/**
 * Logs for the §8 give-up tests (issue 24): a poison prompt whose turn reaches its request and then
 * never settles (a crash there), resumed until resume gives up. No timing: each crash is taken once
 * the test knows (explicit signal) the agent is stuck.
 */
import { createAgent } from '../../agent/agent.js'
import type { LogEvent, StreamChunk } from '../../events/index.js'
import type { ModelAdapter } from '../../models/index.js'
import { resumeAgent } from '../../replay/resume.js'

/** Streams 'ok' and then hangs (a crash there: the run reached its request) on a request whose last user text includes `poison`. */
export function poisonModel(onHang: () => void): ModelAdapter {
  return {
    info: { name: 'm' },
    async *stream(request): AsyncIterable<StreamChunk> {
      const users = request.messages.filter((m) => m.role === 'user')
      const last = users[users.length - 1]
      const t = last?.content[0]?.type === 'text' ? last.content[0].text : ''
      yield { type: 'block-start', index: 0, blockType: 'text' }
      yield { type: 'text-delta', index: 0, text: 'ok' }
      if (t.includes('poison')) {
        onHang()
        await new Promise(() => {})
      }
      yield { type: 'block-end', index: 0 }
      yield { type: 'finish', reason: 'stop' }
    },
  }
}

export function stuck(): { promise: Promise<void>; signal: () => void } {
  let signal!: () => void
  const promise = new Promise<void>((r) => (signal = r))
  return { promise, signal }
}

let idn = 0
export const ids = () => `lim${++idn}`

/** A session whose first turn entered a poison prompt, reached its request and crashed. Returns the log and the prompt's id. */
export async function crashedPoison(): Promise<{ log: LogEvent[]; id: string }> {
  const hang = stuck()
  const a = createAgent({ model: poisonModel(hang.signal), ids })
  const id = a.followup('poison pill')
  await hang.promise
  return { log: [...a.events], id }
}

/** One resume whose resume turn reaches its request and crashes (the poison model hangs mid-stream). */
export async function reachedRun(log: readonly LogEvent[], maxResumeRuns?: number): Promise<LogEvent[]> {
  const hang = stuck()
  const b = await resumeAgent({ log, model: poisonModel(hang.signal), ids, ...(maxResumeRuns !== undefined ? { maxResumeRuns } : {}) })
  await hang.promise
  return [...b.events]
}

/** A log that ends with resume's give-up: the poison prompt re-run 3 times (the default bound), then given up. */
export async function givenUpLog(): Promise<{ events: LogEvent[]; id: string }> {
  let { log, id } = await crashedPoison()
  for (let round = 1; round <= 3; round++) log = await reachedRun(log)
  const c = await resumeAgent({ log, model: poisonModel(() => { throw new Error('must not be re-run') }), ids })
  await c.whenIdle()
  return { events: [...c.events], id }
}
