/**
 * Models for re-runs: `recordedModel(golden)` answers each step as the golden's step at the same
 * (turn, step) was answered (its recorded chunks, then its end: return, the recorded failure, or a
 * wait for the cancel); `replace` swaps in other responses at chosen steps (the change under test).
 */
import type { LogEvent, StreamChunk } from '../events/index.js'
import { logEventsArg } from '../events/log-arg.js'
import { ModelError } from '../models/errors.js'
import { scriptedModel, type ScriptedResponse } from '../models/scripted.js'
import type { ModelRequest } from '../models/types.js'
import { key2 } from '../replay/reexecute/facts.js'
import { Recording, type StepRecord } from '../replay/reexecute/recording.js'
import type { StepAt, StepModel } from './types.js'

export interface RecordedModelOptions {
  /**
   * A response for a step instead of the recorded one (a `scriptedModel` response: `{ text }`,
   * `{ toolCalls }`, chunks, …), or undefined to keep the recording. Called once per request; a
   * throw fails that step like a model error.
   */
  replace?: (at: StepAt, request: ModelRequest) => ScriptedResponse | undefined
}

/** A `StepModel` serving the golden's recorded responses by (turn, step). A step the golden does not have fails `UNRECORDED_STEP`. */
export function recordedModel(golden: { events: readonly LogEvent[] } | readonly LogEvent[], opts: RecordedModelOptions = {}): StepModel {
  // a path or a bare object is a coded error naming the parameter (issue 38.18), not a TypeError
  const rec = new Recording([...logEventsArg(golden, 'recordedModel', 'golden')])
  return {
    info: { name: 'recorded' },
    streamStep(at, request, signal) {
      if (request.purpose === 'compaction') {
        return failing({ code: 'UNRECORDED_STEP', message: 'recordedModel does not serve compaction summaries: give the plugin its own model' })
      }
      const other = opts.replace?.(at, request)
      if (other !== undefined) return scriptedModel([other]).stream(request, signal)
      const step = rec.steps.get(key2(at.turn, at.step))
      if (!step) return failing({ code: 'UNRECORDED_STEP', message: `the golden has no step ${at.step} in turn ${at.turn}` })
      return recordedStream(step, signal)
    },
  }
}

function failing(f: { code: string; message: string }): AsyncIterable<StreamChunk> {
  return (async function* () {
    throw new ModelError(f)
  })()
}

/**
 * A recorded step's stream. Each chunk waits one macrotask first, so an input recorded between two
 * chunks (a cancel mid-stream) reaches the agent before the next chunk, as it did in the recording.
 */
export function recordedStream(step: StepRecord, signal: AbortSignal): AsyncIterable<StreamChunk> {
  return (async function* () {
    const tick = () => new Promise<void>((r) => setImmediate(r))
    const abort = () => new DOMException('aborted', 'AbortError')
    for (const c of step.chunks) {
      await tick()
      if (signal.aborted) throw abort()
      yield c
    }
    await tick()
    if (step.end.kind === 'hang') {
      await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })))
      throw abort()
    }
    if (signal.aborted) throw abort()
    if (step.end.kind === 'throw') throw new ModelError(step.end.failure.failure)
  })()
}
