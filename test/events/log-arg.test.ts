/**
 * Issue 38.18: APIs that take a log in memory refuse misuse with a coded INVALID_ARGUMENT naming
 * the parameter (a path, an object without events, a missing session id, a missing tracer),
 * never a TypeError from inside.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/errors.js'
import { recordedModel } from '../../evals/model.js'
import { exportSpans } from '../../otel/tracer.js'
import { readLog } from '../../replay/read-log.js'

function coded(f: () => unknown): TurnlogError {
  try {
    f()
  } catch (err) {
    expect(TurnlogError.is(err, 'INVALID_ARGUMENT'), String(err)).toBe(true)
    return err as TurnlogError
  }
  throw new Error('no error')
}

describe('misuse is a coded error (issue 38.18)', () => {
  it('recordedModel(path) says it takes a log and how to get one', () => {
    const e = coded(() => recordedModel('golden.jsonl' as never))
    expect(e.message).toContain('readLog("golden.jsonl")')
    expect(e.field).toBe('golden')
    expect(coded(() => recordedModel({} as never)).message).toContain('it was given an empty object')
    expect(coded(() => recordedModel({ events: 3 } as never)).message).toContain('an object with events')
  })

  it('exportSpans({ events }, tracer) asks for the session id; a missing tracer is named', async () => {
    const log = await readLog('test/fixtures/valid/assistant-message.jsonl')
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] }).getTracer('t')
    expect(coded(() => exportSpans({ events: log.events } as never, tracer)).message).toContain('{ sessionId, events }')
    expect(coded(() => exportSpans(log, undefined as never)).field).toBe('tracer')
    expect(exportSpans(log, tracer)).toBeGreaterThan(0)
    expect(exportSpans({ sessionId: 's', events: log.events }, tracer)).toBeGreaterThan(0)
  })
})
