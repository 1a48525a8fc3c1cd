/**
 * Driving the span fold into an OpenTelemetry `Tracer`: after the fact (`exportSpans`) and live
 * (`otelPlugin`). Both feed the same fold (fold.ts), so they give the same spans: same names,
 * kinds, parents, start and end times (from the log) and attributes. Span and trace ids are the
 * tracer's own (random with the SDK's default generator).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Link, type Span, type SpanContext, type Tracer } from '@opentelemetry/api'
import type { AgentPlugin } from '../agent/types.js'
import { TurnlogError, type LogEvent } from '../events/index.js'
import { logEventsArg, logSessionIdArg } from '../events/log-arg.js'
import { semconvFromEnv } from './attributes.js'
import { SpanFold, type SpanAction, type SpanFoldOptions } from './fold.js'
import { ChildSpans, takeSpawnContext } from './live-family.js'

/** Options of `exportSpans` and `otelPlugin`: the fold's options plus the root context. */
export interface OtelOptions extends Omit<SpanFoldOptions, 'sessionId'> {
  /** The context turn spans are children of. Default: a root context (each turn its own trace). */
  parentContext?: Context
  /**
   * `gen_ai.conversation.id`; default: the session id (the agent's, or the log's). Set it when
   * re-executing a recorded session (the re-execution runs under a fresh session id) to get the
   * recorded session's spans.
   */
  conversationId?: string
}

/** How many span contexts the sink keeps per kind for links (a retry links to the turn just
 * before it and to that turn's last chat span): turn spans, and chat spans. */
const LINKABLE = 4

/** Applies fold actions to a tracer, holding the open OpenTelemetry spans by key. */
class TracerSink {
  readonly #spans = new Map<string, Span>()
  /** contexts of the last turn spans and the last chat spans (the fold's link targets), oldest evicted first */
  readonly #turns = new Map<string, SpanContext>()
  readonly #chats = new Map<string, SpanContext>()
  constructor(readonly tracer: Tracer, readonly root: Context) {}

  /** The open span of `key` (a tool span is `tool-<callId>`), if any. */
  open(key: string): Span | undefined {
    return this.#spans.get(key)
  }

  apply(actions: readonly SpanAction[]): void {
    for (const a of actions) {
      if (a.op === 'start') {
        const parent = a.parentKey !== undefined ? this.#spans.get(a.parentKey) : undefined
        const ctx = parent !== undefined ? trace.setSpan(this.root, parent) : this.root
        const links: Link[] = []
        for (const l of a.links ?? []) {
          const context = this.#turns.get(l.key) ?? this.#chats.get(l.key)
          if (context !== undefined) links.push({ context, ...(l.attributes !== undefined ? { attributes: l.attributes } : {}) })
        }
        const span = this.tracer.startSpan(
          a.name,
          { kind: a.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, startTime: a.startTime, attributes: a.attributes, ...(links.length > 0 ? { links } : {}) },
          ctx,
        )
        this.#spans.set(a.key, span)
        // turn spans are `turn-N`, their chat spans `turn-N.step-M` (fold.ts)
        const kept = a.key.startsWith('turn-') ? (a.key.includes('.') ? this.#chats : this.#turns) : undefined
        if (kept !== undefined) {
          kept.set(a.key, span.spanContext())
          if (kept.size > LINKABLE) kept.delete(kept.keys().next().value!)
        }
      } else {
        const span = this.#spans.get(a.key)
        if (span === undefined) continue
        this.#spans.delete(a.key)
        span.setAttributes(a.attributes)
        if (a.status.code === 'error') span.setStatus({ code: SpanStatusCode.ERROR, ...(a.status.message !== undefined ? { message: a.status.message } : {}) })
        span.end(a.endTime)
      }
    }
  }
}

function foldOptions(sessionId: string, opts: OtelOptions): SpanFoldOptions {
  const { parentContext: _p, conversationId, ...rest } = opts
  return { ...rest, sessionId: conversationId ?? sessionId, semconv: opts.semconv ?? semconvFromEnv() }
}

/**
 * Exports a recorded session's spans through `tracer` (after the fact; times from the log).
 * `log` is the session's events with its id (`readLog` gives `{ header: { id }, events }`), or
 * `{ sessionId, events }`. Spans still open at the end of the log (a live or torn log) are not
 * ended, so a span processor never exports them. Returns the number of spans started.
 */
export function exportSpans(
  log: { sessionId: string; events: Iterable<LogEvent> } | { header: { id: string }; events: Iterable<LogEvent> },
  tracer: Tracer,
  opts: OtelOptions = {},
): number {
  // misuse is a coded error naming the parameter (issue 38.18), not a TypeError from inside
  const sessionId = logSessionIdArg(log, 'exportSpans', 'log')
  const events = logEventsArg(log, 'exportSpans', 'log')
  if (typeof (tracer as { startSpan?: unknown } | null)?.startSpan !== 'function') {
    throw new TurnlogError('INVALID_ARGUMENT', 'exportSpans needs an OpenTelemetry Tracer (provider.getTracer(name)) as its second argument', { field: 'tracer' })
  }
  const fold = new SpanFold(foldOptions(sessionId, opts))
  const sink = new TracerSink(tracer, opts.parentContext ?? ROOT_CONTEXT)
  let started = 0
  for (const e of events) {
    const actions = fold.push(e)
    started += actions.filter((a) => a.op === 'start').length
    sink.apply(actions)
  }
  return started
}

/**
 * A plugin that emits the spans live, as the agent appends events: a span starts when its first
 * event is committed and ends with its last, with the log's times, so the live spans equal what
 * `exportSpans` later gives for the same log. Events already in the log when the plugin is
 * installed (a resumed or forked prefix) are folded silently (their spans were the earlier run's).
 * A tracer that throws is reported as `agent/error` (where `otel`) and never stops the agent.
 *
 * Child sessions (docs/spec/lifecycle.md §10): when a `defineSubagent` call's child agent also has an
 * `otelPlugin`, the child's turn spans start under this agent's `execute_tool` span of that call
 * (in its trace), as `exportFamilySpans` nests them after the fact; that parent wins over the
 * child's own `parentContext` (otel/live-family.ts).
 */
export function otelPlugin(tracer: Tracer, opts: OtelOptions = {}): AgentPlugin {
  return {
    name: 'otel',
    install(agent) {
      const fold = new SpanFold(foldOptions(agent.sessionId, opts))
      for (const e of agent.events) fold.push(e)
      const root = opts.parentContext ?? ROOT_CONTEXT
      const sink = new TracerSink(tracer, takeSpawnContext(agent.sessionId) ?? root)
      const children = new ChildSpans()
      const off = agent.subscribe((event) => {
        try {
          sink.apply(fold.push(event))
          if (event.type === 'child/spawned') {
            const d = event.data as { callId: string; child: string }
            children.spawned(d.callId, d.child, sink.open(`tool-${d.callId}`), sink.root)
          } else if (event.type === 'tool/result') children.ended((event.data as { callId: string }).callId)
        } catch (e) {
          agent.reportError(e, 'otel')
        }
      })
      return () => {
        off()
        children.clear()
      }
    },
  }
}
