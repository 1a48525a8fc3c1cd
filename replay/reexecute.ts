/**
 * `reexecute(log, { tools, hooks })`: deterministic re-execution (P4). Drives today's agent against
 * the recorded outside world and compares every event it appends with the recorded one.
 *
 * What is served from the log:
 * - **the model**: each request gets the recorded `assistant/chunk`s of its step, then ends as the
 *   step did: normally (a written `assistant/message`), by throwing the recorded failure as a
 *   `ModelError` (a failed step), or by waiting for the cancel (an aborted step);
 * - **tool outcomes**: every tool's body (and the `tools/execute` waterfall around it) is replaced
 *   by one that serves the recorded `tool/result` of its call: the content, a throw for
 *   `TOOL_ERROR`, a throwing `tools/execute` listener for its `HOOK_ERROR`, the firing of the call's
 *   timeout for `TOOL_TIMEOUT`, a rejection on the cancel for `ABORTED`. Classification,
 *   `UNKNOWN_TOOL`, `INVALID_ARGS`, the pre/post hooks and the order are today's code;
 * - **time and ids**: `clock` returns the recorded `time` of the seq being appended; `ids` returns
 *   the recorded ids of the messages being inserted; retry sleeps return at once;
 * - **external inputs**: inbox splices the driver does not make (sends, edits) and cancels (the
 *   cause of a `turn/end {aborted}`) are re-issued at the recorded log positions; a compaction that
 *   starts outside a turn (a manual one) is re-issued with the `compactNow` of the first plugin that
 *   has one;
 * - **compaction summaries**: a plugin's model call with `purpose: 'compaction'` (pass the recorded
 *   session's plugins, e.g. `basicCompaction(sameOptions)`) is served from its bracket: the recorded
 *   `compaction/summary` (text and usage), the recorded model failure of a `compaction/end {error}`,
 *   a wait for the cancel (`ABORTED`), or a response that makes the summariser decide as it did
 *   (`EMPTY_SUMMARY`, `SUMMARY_NOT_SMALLER` with the recorded size).
 *
 * Scheduling: the re-execution owns every point where the agent waits (model chunks, tool bodies,
 * sleeps, and a gate before and after every hook). When the agent has nothing left to do but wait
 * (one macrotask turn: every microtask drained), the next recorded event decides what is released
 * or issued. So the interleaving of the recording is reproduced without timing. See
 * docs/ARCHITECTURE.md "Decisions: replay engine".
 */
import { deepEqual as isDeepStrictEqual } from '../events/deep-equal.js'
import { createAgent, TurnlogAgent } from '../agent/agent.js'
import type { AgentOptions, HookMap, Timers } from '../agent/types.js'
import type {
  CancelCause, EventOf, Failure, LogEvent, RequestConfig, StreamChunk, UserMessage,
} from '../events/index.js'
import type { LogHeader } from '../events/jsonl.js'
import { ModelError } from '../models/errors.js'
import { shorthandChunks } from '../models/scripted.js'
import type { ModelAdapter, ModelRequest } from '../models/types.js'
import { charTokenizer, estimateMessage, type Tokenizer } from '../compaction/meter.js'
import { SUMMARY_PREFIX } from '../compaction/summarise.js'
import type { AnyTool, ExecutePayload, ToolContext } from '../tools/types.js'
import { computeClosers } from './closers.js'
import { diffLines } from './diff.js'
import { readLog } from './read-log.js'

export interface ReexecuteOptions {
  /** Today's tools (names, schemas, classifiers, timeouts; bodies are served from the log). */
  tools?: readonly AnyTool[]
  /**
   * Today's hooks. `tools/execute` listeners are not run: the recorded results stand for them.
   * Hooks that keep state between calls should be given as a factory: a re-execution may run the
   * session more than once (see `maxAttempts`), each time with fresh hooks.
   */
  hooks?: AgentOptions['hooks'] | (() => AgentOptions['hooks'])
  /**
   * The plugins the recorded session used, with the same options (e.g. `basicCompaction({...})`).
   * Their model calls with `purpose: 'compaction'` are served from the log; a compaction plugin
   * given its own summariser model (`basicCompaction({ model })`) calls that model instead, so pass
   * the options without `model`. A plugin instance keeps per-agent state: a fresh one per call
   * is safest, or a factory (`() => [basicCompaction(o)]`), called once per run.
   */
  plugins?: AgentOptions['plugins'] | (() => AgentOptions['plugins'])
  /** The recorded model's `info.contextWindow`, for plugins that read the window from the model
   * (the served model reports only `name`). */
  contextWindow?: number
  /** The compaction tokenizer, to rebuild a summary the recording rejected as not smaller with the
   * same estimate (default: compaction's character heuristic, `charTokenizer`). */
  tokenizer?: Tokenizer
  /** The base system prompt. Default: the system of the first logged `request/header`. */
  system?: string
  /** The base call configuration. Default: the config of the first logged `request/header`. */
  config?: Partial<RequestConfig>
  maxParallelToolCalls?: number
  maxStepsPerTurn?: number
  /** As the recorded agent's (L13). */
  maxResumeRuns?: number
  retry?: AgentOptions['retry']
  checkRequests?: AgentOptions['checkRequests']
  /** Compare `time` too (default true: the clock serves the recorded times). */
  compareTime?: boolean
  /** How long the agent may wait on something the re-execution does not own (a hook doing real
   * I/O) before it is reported as stuck. Default 2000 ms. */
  stallMs?: number
  /**
   * Where the recording leaves the order of two things open (an input that arrived while a hook
   * was about to run), the first run takes one order; on a divergence the session is run again
   * with the other order at the latest such point before the divergence. At most this many runs
   * (default 64); the divergence reported is the one that got furthest.
   */
  maxAttempts?: number
  /** Debugging: called with a line per scheduling decision. */
  trace?: (line: string) => void
}

export interface Divergence {
  /** The first seq where the re-executed log differs from the recorded one. */
  seq: number
  /** The recorded event at `seq`, or null when the agent appended past the recorded end. */
  expected: LogEvent | null
  /** The event the agent appended at `seq`, or null when it appended nothing there. */
  actual: LogEvent | null
  /** `mismatch` (another event), `missing` (the agent stopped or waits), `extra` (past the end). */
  kind: 'mismatch' | 'missing' | 'extra'
  /** What the agent was doing instead, for `missing`. */
  waiting?: string
  /** Readable: a header line and one line per differing path. */
  diff: string
}

export type ReexecuteResult =
  | { ok: true; eventCount: number }
  | { ok: false; divergence: Divergence; events: readonly LogEvent[] }

type Log = { header?: LogHeader; events: readonly LogEvent[] } | readonly LogEvent[]

/** Re-executes a recorded log (events, `{header, events}`, or a JSONL path) against today's code. */
export async function reexecute(log: Log | string, opts: ReexecuteOptions = {}): Promise<ReexecuteResult> {
  const events: readonly LogEvent[] = typeof log === 'string'
    ? (await readLog(log)).events
    : Array.isArray(log) ? (log as readonly LogEvent[]) : (log as { events: readonly LogEvent[] }).events
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 64)
  let choices: boolean[] = []
  let best: Extract<ReexecuteResult, { ok: false }> | null = null
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const run = new Reexecution(events, opts, choices)
    const r = await run.run()
    if (r.ok) return r
    if (best === null || r.divergence.seq > best.divergence.seq) best = r
    // flip the latest open choice at or before the divergence
    const points = run.choicePoints
    let j = -1
    for (let i = points.length - 1; i >= 0; i--) {
      if (!choices[i] && points[i]! <= r.divergence.seq) {
        j = i
        break
      }
    }
    if (j < 0) break
    choices = [...points.map((_, i) => choices[i] ?? false).slice(0, j), true]
  }
  return best!
}

// ---------------------------------------------------------------------------------------------

const WATERFALLS = [
  'agent/pre-step', 'system-prompt/assemble', 'agent/request', 'llm/stream', 'agent/request-error',
  'tools/pre-execute', 'tools/post-execute',
] as const
type GatedHook = (typeof WATERFALLS)[number] | 'agent/turn-stopping'

interface Gate {
  kind: 'before' | 'after' | 'sleep'
  hook?: GatedHook
  /** For the tool hooks: the call key. */
  callKey?: string
  release: () => void
}

interface StepRecord {
  turn: number
  step: number
  chunks: StreamChunk[]
  /** How the model stream ends after its chunks. */
  end: { kind: 'return' } | { kind: 'throw'; failure: EventOf<'step/end'>['data']['outcome'] & { kind: 'failed' } } | { kind: 'hang' }
  outcome: EventOf<'step/end'>['data']['outcome'] | null
  /** The step's non-interrupted message has tool calls. */
  hasTools: boolean
  /** callKey → recorded result (the appended one). */
  results: Map<string, EventOf<'tool/result'>>
  /** Real (not synthetic ABORTED_BEFORE_DISPATCH) calls, in order. */
  realCalls: string[]
}

interface StreamServe {
  rec: StepRecord | null
  i: number
  waiter: (() => void) | null
  /** A compaction summary call: its recorded bracket (rec is null). */
  compaction?: BracketRecord | null
}

/** A recorded compaction bracket: how its summary call ended. */
interface BracketRecord {
  id: string
  summary: EventOf<'compaction/summary'> | null
  end: EventOf<'compaction/end'> | null
}

/** Summariser decisions of compaction/summarise.ts (not model failures). */
const SUMMARISER_CODES = new Set(['EMPTY_SUMMARY', 'SUMMARY_NOT_SMALLER', 'SURFACE_CHANGED', 'SUMMARISER_ERROR'])

interface BodyServe {
  key: string
  index: number
  result: EventOf<'tool/result'> | undefined
  ctx: ToolContext
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
  timer: FakeTimer | null
  settled: boolean
}

interface FakeTimer { fn: () => void; ms: number; cleared: boolean }

const key3 = (turn: number, step: number, callId: string): string => `${turn}.${step}.${callId}`
const key2 = (turn: number, step: number): string => `${turn}.${step}`

class Reexecution {
  readonly rec: readonly LogEvent[]
  readonly opts: ReexecuteOptions
  readonly start: number
  readonly steps = new Map<string, StepRecord>()
  readonly turnEnds = new Map<number, { seq: number; reason: EventOf<'turn/end'>['data']['reason'] }>()
  readonly brackets = new Map<string, BracketRecord>()
  /** Turns with a trace only a cancel leaves (an aborted step, an ABORTED result or summary). */
  readonly cancelTraced = new Set<number>()
  /** A manual compaction we re-issued is running (`compactNow` through `runMaintenance`). */
  maintaining = false
  agent!: TurnlogAgent
  divergence: Divergence | null = null
  done = false
  #finish!: (r: ReexecuteResult) => void
  #scheduled = false
  #stall: ReturnType<typeof setTimeout> | null = null
  readonly gates: Gate[] = []
  readonly streams: StreamServe[] = []
  readonly bodies = new Map<string, BodyServe>()
  readonly preDone = new Set<string>()
  /** Turns we cancelled. */
  readonly cancelled = new Set<number>()
  #lastTimer: FakeTimer | null = null
  #idSeq = -1
  #idUsed = 0

  /** The log length at each choice point met, in order. */
  readonly choicePoints: number[] = []
  readonly #choices: readonly boolean[]

  constructor(events: readonly LogEvent[], opts: ReexecuteOptions, choices: readonly boolean[] = []) {
    this.rec = events
    this.opts = opts
    this.#choices = choices
    let seed = -1
    for (let i = 0; i < events.length; i++) if (events[i]!.type === 'session/end-seed') seed = i
    this.start = seed + 1
    this.#index()
    this.#findSwitches()
    this.#findCancelTraces()
  }

  /**
   * Fills `cancelTraced`: turns with an event only a cancel makes (an aborted step, an ABORTED
   * result or summary, an interrupted message the process wrote). Repair's closers also write
   * interrupted messages: those inside a process boundary's closers are not traces.
   */
  #findCancelTraces(): void {
    let turn: number | null = null
    let sw = 0
    for (let i = this.start; i < this.rec.length; i++) {
      const e = this.rec[i]!
      while (this.#switches[sw] !== undefined && this.#switches[sw]!.end <= i) sw++
      const inClosers = this.#switches[sw] !== undefined && this.#switches[sw]!.k <= i
      if (e.type === 'turn/start') turn = (e as EventOf<'turn/start'>).data.turn
      else if (e.type === 'turn/end') turn = null
      else if (turn !== null && !inClosers && e.type !== 'tool/call' && isCancelEffect(e, this.rec[i + 1])) this.cancelTraced.add(turn)
    }
  }

  /** Fills `#switches` (see there). */
  #findSwitches(): void {
    const ev = this.rec
    // a process created on a non-empty log logs `request/header {reason: 'resume'}` at its first request
    let resumeHeaderDue = this.start > 0
    let lastTurnEnd = this.start - 1
    let turnStart = -1
    for (let i = this.start; i < ev.length; i++) {
      const e = ev[i]!
      if (e.type === 'turn/start') turnStart = i
      else if (e.type === 'request/header') {
        if ((e as EventOf<'request/header'>).data.reason === 'resume' && !resumeHeaderDue) {
          // a clean restart: the new process took over when the last turn had ended (on a log that
          // is not empty: a process on an empty log logs `initial`)
          const b = Math.max(lastTurnEnd + 1, 1)
          if (b > (this.#switches.at(-1)?.end ?? this.start)) this.#switches.push({ k: b, end: b })
        }
        resumeHeaderDue = false
      } else if (e.type === 'turn/end') {
        lastTurnEnd = i
        if ((e as EventOf<'turn/end'>).data.reason.kind === 'interrupted' && turnStart >= this.start) {
          const k = this.#closersStart(turnStart, i)
          if (k !== null) {
            this.#switches.push({ k, end: i + 1 })
            resumeHeaderDue = true
          }
        } else if (this.#retryLost(turnStart, i)) {
          // the process died between the turn's end and the retry turn it owed: the next process
          // starts on the log as it stood after the end (it does not retry; repair closes nothing)
          this.#switches.push({ k: i + 1, end: i + 1 })
          resumeHeaderDue = true
        }
      }
    }
  }

  /**
   * The turn `turnStart..end` ended `error` after a retry was authorised in the log (the retry
   * policy's `llm/retry`, or an overflow recovery's compaction that succeeded, after the failed
   * step), but no retry turn of it follows (after only splices, the next event is something
   * else): the process that owed the retry turn died right after the `turn/end`. A retry a hook
   * authorised without logging anything cannot be told from a changed rule: not inferred.
   */
  #retryLost(turnStart: number, end: number): boolean {
    const ev = this.rec
    const d = (ev[end] as EventOf<'turn/end'>).data
    if (d.reason.kind !== 'error' || turnStart < this.start) return false
    let evidence = false
    for (let i = end - 1; i > turnStart && ev[i]!.type !== 'step/end'; i--) {
      const x = ev[i]!
      if (x.type === 'llm/retry' || (x.type === 'compaction/end' && (x as EventOf<'compaction/end'>).data.error === undefined)) evidence = true
    }
    if (!evidence) return false
    let j = end + 1
    while (ev[j]?.type === 'agent/inbox/spliced') j++
    const next = ev[j]
    if (next === undefined) return false // the recording's end: see `#endsBetweenTurns`
    const cause = next.type === 'turn/start' ? (next as EventOf<'turn/start'>).data.cause : undefined
    return !(cause?.kind === 'retry' && cause.of === d.turn)
  }

  /**
   * Where repair's closers that end with the `turn/end {interrupted}` at `end` begin: the smallest
   * `k` for which the closers of `rec[0..k)` are exactly `rec[k..end]`, or null when none is (the
   * closers were not repair's: the log diverges there). The smallest: a process cannot write what
   * only repair writes (an interrupted message without a cancel, a TOOL_OUTCOME_UNKNOWN result);
   * where a closer equals what the process would have written (a step's natural `step/end`), the
   * process dies just before it, which changes nothing in the log.
   */
  #closersStart(turnStart: number, end: number): number | null {
    const closerTypes = new Set(['turn/end', 'compaction/end', 'step/end', 'tool/result', 'tool/call', 'assistant/message', 'user/message'])
    let lo = end
    while (lo - 1 > turnStart && closerTypes.has(this.rec[lo - 1]!.type)) lo--
    const recorded = (k: number) => this.rec.slice(k, end + 1)
    for (let k = lo; k <= end; k++) {
      const prefix = this.rec.slice(0, k)
      if (isDeepStrictEqual(computeClosers(prefix, { reason: 'interrupted' }), recorded(k))) return k
    }
    return null
  }

  #index(): void {
    let cur: StepRecord | null = null
    const ev = this.rec
    for (let i = this.start; i < ev.length; i++) {
      const e = ev[i]!
      switch (e.type) {
        case 'step/start': {
          const d = (e as EventOf<'step/start'>).data
          cur = { turn: d.turn, step: d.step, chunks: [], end: { kind: 'hang' }, outcome: null, hasTools: false, results: new Map(), realCalls: [] }
          this.steps.set(key2(d.turn, d.step), cur)
          break
        }
        case 'assistant/chunk':
          cur?.chunks.push((e as EventOf<'assistant/chunk'>).data.chunk)
          break
        case 'assistant/message': {
          const d = (e as EventOf<'assistant/message'>).data
          if (cur && e.surfaceOp === 'append' && !d.interrupted) {
            cur.end = { kind: 'return' }
            cur.hasTools = d.message.content.some((b) => b.type === 'tool-call')
          }
          break
        }
        case 'tool/call': {
          const d = (e as EventOf<'tool/call'>).data
          const next = ev[i + 1]
          const synthetic = next?.type === 'tool/result' && (next as EventOf<'tool/result'>).data.callId === d.callId &&
            (next as EventOf<'tool/result'>).data.error?.code === 'ABORTED_BEFORE_DISPATCH'
          if (cur && !synthetic) cur.realCalls.push(key3(d.turn, d.step, d.callId))
          break
        }
        case 'tool/result': {
          const d = (e as EventOf<'tool/result'>).data
          if (cur && e.surfaceOp === 'append') cur.results.set(key3(d.turn, d.step, d.callId), e as EventOf<'tool/result'>)
          break
        }
        case 'step/end': {
          const d = (e as EventOf<'step/end'>).data
          if (cur) {
            cur.outcome = d.outcome
            if (cur.end.kind !== 'return' && d.outcome.kind === 'failed') cur.end = { kind: 'throw', failure: d.outcome }
          }
          cur = null
          break
        }
        case 'turn/end': {
          const d = (e as EventOf<'turn/end'>).data
          this.turnEnds.set(d.turn, { seq: e.seq, reason: d.reason })
          break
        }
        case 'compaction/start': {
          const id = (e as EventOf<'compaction/start'>).data.compactionId
          this.brackets.set(id, { id, summary: null, end: null })
          break
        }
        case 'compaction/summary': {
          const b = this.brackets.get((e as EventOf<'compaction/summary'>).data.compactionId)
          if (b) b.summary = e as EventOf<'compaction/summary'>
          break
        }
        case 'compaction/end': {
          const b = this.brackets.get((e as EventOf<'compaction/end'>).data.compactionId)
          if (b) b.end = e as EventOf<'compaction/end'>
          break
        }
      }
    }
  }

  get len(): number {
    return this.agent.events.length
  }

  /** The plugins of this run (a factory is called once per run). */
  plugins: NonNullable<AgentOptions['plugins']> = []

  run(): Promise<ReexecuteResult> {
    const p = this.opts.plugins
    this.plugins = (typeof p === 'function' ? p() : p) ?? []
    const result = new Promise<ReexecuteResult>((resolve) => (this.#finish = resolve))
    try {
      this.#createAgent(this.rec.slice(0, this.start))
    } catch (err) {
      return Promise.reject(err)
    }
    this.schedule()
    return result
  }

  /**
   * Creates the agent of one process of the recording on `prefix` (the first at `start`; after a
   * crash or a restart, the next one on the log as it then stood, like `resumeAgent`). Its
   * model, tools, hooks and timers belong to this generation: once the next process takes over,
   * whatever the old agent still waits on never settles (a dead process).
   */
  #createAgent(prefix: readonly LogEvent[]): void {
    const gen = ++this.#gen
    const firstHeader = this.rec.find((e) => e.type === 'request/header') as EventOf<'request/header'> | undefined
    const config = this.opts.config ?? firstHeader?.data.config ?? { model: 'model' }
    const system = this.opts.system ?? firstHeader?.data.system ?? ''
    {
      this.agent = createAgent({
        model: this.#model(config.model ?? 'model', this.opts.contextWindow, gen),
        tools: (this.opts.tools ?? []).map((t) => this.#tool(t, gen)),
        system,
        config,
        ...(prefix.length > 0 ? { prefix } : {}),
        ...(this.opts.maxParallelToolCalls !== undefined ? { maxParallelToolCalls: this.opts.maxParallelToolCalls } : {}),
        ...(this.opts.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: this.opts.maxStepsPerTurn } : {}),
        ...(this.opts.retry !== undefined ? { retry: this.opts.retry } : {}),
        ...(this.opts.checkRequests !== undefined ? { checkRequests: this.opts.checkRequests } : {}),
        ...(this.opts.maxResumeRuns !== undefined ? { maxResumeRuns: this.opts.maxResumeRuns } : {}),
        ...(this.plugins.length ? { plugins: this.plugins } : {}),
        clock: () => this.#time(),
        ids: () => this.#id(),
        timers: this.#timers(gen),
        hooks: this.#hooks(gen),
      }) as TurnlogAgent
    }
    this.agent.subscribe((e) => {
      if (gen === this.#gen) this.#onAppend(e)
    })
    // A resume turn (lifecycle §8) follows the boundary after only splices: armed like resumeAgent does.
    let i = prefix.length
    while (this.rec[i]?.type === 'agent/inbox/spliced') i++
    const t = this.rec[i]
    const cause = t?.type === 'turn/start' ? (t as EventOf<'turn/start'>).data.cause : undefined
    if (i > this.start && cause?.kind === 'resume') this.agent.armResume(cause.of)
  }

  /** The generation of the agent now running (one per process of the recording). */
  #gen = 0

  /**
   * The process boundaries of the recording, in log order: a crash (repair's closers `k..end`,
   * served as recorded, then the next process on `0..end`) or a clean restart (`k == end`: a
   * `request/header {reason: 'resume'}` that the running agent would not log).
   */
  readonly #switches: Array<{ k: number; end: number }> = []
  #switchAt = 0

  /** The agent reached a process boundary: it dies there; the next process resumes the log. */
  #switchProcess(sw: { k: number; end: number }): void {
    this.#switchAt++
    this.opts.trace?.(`process boundary at seq ${sw.k}: closers ${sw.k}..${sw.end - 1}, resumed on ${sw.end} events`)
    this.agent.session.close()
    this.gates.length = 0
    this.streams.length = 0
    this.bodies.clear()
    this.preDone.clear()
    this.cancelled.clear()
    this.#pendingTimers.clear()
    this.#lastTimer = null
    this.#silentEnd = null
    this.maintaining = false
    this.#createAgent(this.rec.slice(0, sw.end))
  }

  // ------------------------------------------------------------------ comparison

  #onAppend(e: LogEvent): void {
    if (this.done) return
    const expected = this.rec[e.seq] ?? null
    if (expected === null) {
      // The recording ends between turns and the agent opens the next one (queued work, a retry):
      // the recorded process stopped there (a crash after the turn's end leaves nothing to close).
      if (e.type === 'turn/start' && e.seq === this.rec.length && this.#endsBetweenTurns()) {
        this.opts.trace?.(`the recording ends at seq ${e.seq - 1} between turns: its process stopped there`)
        this.agent.session.close()
        this.#end()
        return
      }
      this.#diverge({ seq: e.seq, expected: null, actual: e, kind: 'extra' })
      return
    }
    if (!this.#same(expected, e)) {
      this.#diverge({ seq: e.seq, expected, actual: e, kind: 'mismatch' })
      return
    }
    // the last event this process wrote before it died: it appends nothing more
    if (this.#switches[this.#switchAt]?.k === e.seq + 1) this.agent.session.close()
    this.schedule()
  }

  /** The recording's last core event is a `turn/end` (nothing is open at its end). */
  #endsBetweenTurns(): boolean {
    for (let i = this.rec.length - 1; i >= this.start; i--) {
      const t = this.rec[i]!.type
      if (t === 'turn/end') return true
      if (t !== 'agent/inbox/spliced') return false
    }
    return false
  }

  #same(a: LogEvent, b: LogEvent): boolean {
    if (this.opts.compareTime === false) return isDeepStrictEqual({ ...a, time: 0 }, { ...b, time: 0 })
    return isDeepStrictEqual(a, b)
  }

  #diverge(d: Omit<Divergence, 'diff'>): void {
    if (this.done) return
    const head = d.kind === 'extra'
      ? `seq ${d.seq}: the recorded log ends at seq ${this.rec.length - 1}, but the agent appended ${d.actual!.type}`
      : d.kind === 'missing'
        ? `seq ${d.seq}: expected ${d.expected!.type}, but the agent ${d.waiting ?? 'appended nothing'}`
        : `seq ${d.seq}: expected ${d.expected!.type}, got ${d.actual!.type}`
    const lines = d.kind === 'mismatch' ? diffLines(d.expected, d.actual) : []
    this.divergence = { ...d, diff: [head, ...lines].join('\n') }
    this.#end()
  }

  #end(): void {
    if (this.done) return
    this.done = true
    if (this.#stall) clearTimeout(this.#stall)
    const events = this.agent.events.slice()
    // Stop the agent where it stands: further appends are refused, waiting points stay closed.
    if (this.divergence) this.agent.session.close()
    this.#finish(this.divergence ? { ok: false, divergence: this.divergence, events } : { ok: true, eventCount: Math.min(events.length, this.rec.length) })
  }

  // ------------------------------------------------------------------ the pump

  schedule(): void {
    if (this.done) return
    if (this.#stall) {
      clearTimeout(this.#stall)
      this.#stall = null
    }
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      try {
        if (this.#tick()) this.schedule()
      } catch (err) {
        // an issued input was refused: that is a divergence too
        const seq = this.len
        this.#diverge({
          seq, expected: this.rec[seq] ?? null, actual: null, kind: 'missing',
          waiting: `refused the recorded input: ${(err as Error)?.message ?? String(err)}`,
        })
      }
    })
  }

  /** A decision the recording leaves open: false the first time, true when a re-run flips it. */
  #choose(): boolean {
    const i = this.choicePoints.length
    this.choicePoints.push(this.len)
    return this.#choices[i] ?? false
  }

  /** One scheduling decision; true when it did something (then the pump runs again). */
  #tick(): boolean {
    if (this.done) return false
    const sw = this.#switches[this.#switchAt]
    if (sw !== undefined && this.len === sw.k) {
      this.#switchProcess(sw)
      return true
    }
    const before = this.gates.filter((g) => g.kind === 'before' && this.#mayPass(g))
    const next = this.rec[this.len]
    this.opts.trace?.(`tick len=${this.len} next=${next?.type ?? 'END'} status=${this.agent.status} ${this.#describeWaiting()}`)
    // 1. Outside inputs: a cancel that is due, inbox sends and edits; back to back while the
    //    recording has them back to back (the agent does not run in between). When a hook is
    //    about to run, the recording may have had the input first or the hook first: a choice
    //    point (the hook first, unless a re-run flips it).
    if (this.#issueExternal(before.length > 0)) return true
    // 2. Let every hook that is waiting to start run.
    if (before.length) {
      for (const g of before) this.#release(g)
      return true
    }
    if (next === undefined) {
      if (this.agent.status === 'idle' && this.gates.length === 0 && !this.maintaining) {
        this.#end()
        return false
      }
      if (this.#releaseSafe()) return true
      this.#stalled(null)
      return false
    }
    // 3. Hooks that finished, and sleeps.
    if (this.#releaseSafe()) return true
    // 4. The model or a tool body, as the next event asks.
    if (this.#serve(next)) return true
    this.#stalled(next)
    return false
  }

  #issueExternal(hookWaiting: boolean): boolean {
    let did = false
    for (;;) {
      const next = this.rec[this.len]
      if (next === undefined || this.done) return did
      if (this.#switches[this.#switchAt]?.k === this.len) return true // a process boundary comes first
      const plan = this.#cancelPlan(next)
      if ((plan !== null || this.#issuable(next)) && hookWaiting && !this.#choose()) return did
      if (plan !== null) {
        // bodies whose recorded outcome proves they settled before the cancel settle first; the
        // cancel is issued on the next tick, once their settlement has reached the driver
        if (this.#settleBeforeCancel()) return true
        this.cancelled.add(plan.turn)
        this.agent.cancel(plan.cause, { keepInbox: plan.keepInbox })
        did = true
        continue
      }
      if (this.#issuable(next)) {
        const before = this.len
        if (this.#silentMaintenanceDue(next.seq)) this.#openSilentMaintenance()
        this.#issueSplice(next as EventOf<'agent/inbox/spliced'>)
        did = true
        if (this.len === before) return did
        continue
      }
      if (this.#issueManualCompaction(next)) return true
      if (next.type === 'turn/start' && this.#silentEnd !== null) {
        const end = this.#silentEnd
        this.#silentEnd = null
        end()
        return true
      }
      // A turn that opens from idle with no waking send right before it: a wake latched during a
      // maintenance that logged nothing (a declined manual compaction), or an `agent.wake()`.
      if (next.type === 'turn/start' && (next as EventOf<'turn/start'>).data.cause?.kind !== 'retry' && !this.maintaining &&
        this.agent.status === 'idle' && this.gates.length === 0 && this.agent.wake()) return true
      return did
    }
  }

  /** Resolves the task of a silent maintenance we opened (see `#silentMaintenanceDue`). */
  #silentEnd: (() => void) | null = null

  /**
   * From idle, splices that end in a `turn/start` although the last of them cannot have woken the
   * agent (an edit, or not a send at the tail): the wake was latched during a maintenance that
   * logged nothing (a manual compaction with nothing to do). Reproduced by holding a maintenance
   * of our own open from the first of those splices to the `turn/start`.
   */
  #silentMaintenanceDue(seq: number): boolean {
    const a = this.agent
    if (this.maintaining || this.#silentEnd !== null || a.status !== 'idle' || a.lifecycle.openTurn !== null) return false
    let i = seq
    let send = false
    while (this.rec[i]?.type === 'agent/inbox/spliced') {
      const d = (this.rec[i] as EventOf<'agent/inbox/spliced'>).data
      if (d.outcome === undefined && d.inserted.length > 0) send = true
      i++
    }
    const t = this.rec[i]
    if (!send || t?.type !== 'turn/start' || (t as EventOf<'turn/start'>).data.cause !== undefined) return false
    const last = (this.rec[i - 1] as EventOf<'agent/inbox/spliced'>).data
    return !(last.outcome === undefined && (last.removedCount ?? 0) === 0 && last.inserted.length === 1)
  }

  #openSilentMaintenance(): void {
    this.opts.trace?.(`silent maintenance from seq ${this.len}`)
    this.agent.runMaintenance(() => new Promise<void>((resolve) => (this.#silentEnd = resolve))).then(
      () => this.schedule(),
      () => this.schedule(),
    )
  }

  /**
   * A compaction that starts while no turn is open is a manual one (`compactNow` runs through
   * `runMaintenance`; the triggers run inside turns): re-issued through the first plugin with a
   * `compactNow(agent)` method.
   */
  #issueManualCompaction(next: LogEvent): boolean {
    if (next.type !== 'compaction/start' && next.type !== 'compaction/prune') return false
    const a = this.agent
    if (this.maintaining || a.status !== 'idle' || a.lifecycle.openTurn !== null) return false
    const plugin = this.plugins.find((p) => typeof (p as { compactNow?: unknown }).compactNow === 'function') as
      { compactNow(agent: unknown): Promise<unknown> } | undefined
    if (!plugin) return false
    this.maintaining = true
    this.opts.trace?.(`manual compaction at seq ${this.len}`)
    plugin.compactNow(a).then(
      () => {
        this.maintaining = false
        this.schedule()
      },
      (err: unknown) => {
        this.maintaining = false
        if (this.done) return
        const seq = this.len
        this.#diverge({
          seq, expected: this.rec[seq] ?? null, actual: null, kind: 'missing',
          waiting: `refused the manual compaction: ${(err as Error)?.message ?? String(err)}`,
        })
      },
    )
    return true
  }

  #stalled(next: LogEvent | null): void {
    const seq = this.len
    if (this.agent.status === 'idle' && this.gates.length === 0 && !this.maintaining && next !== null) {
      this.#diverge({ seq, expected: next, actual: null, kind: 'missing', waiting: 'is idle' })
      return
    }
    const waiting = this.#describeWaiting()
    this.#stall = setTimeout(() => {
      if (this.done || this.len !== seq) return
      if (next === null) {
        this.#diverge({ seq, expected: null, actual: null, kind: 'extra', waiting })
        this.divergence!.diff = `seq ${seq}: the recorded log ends at seq ${seq - 1}, but the agent ${waiting}`
      } else this.#diverge({ seq, expected: next, actual: null, kind: 'missing', waiting })
    }, this.opts.stallMs ?? 2000)
  }

  #describeWaiting(): string {
    const parts: string[] = []
    for (const s of this.streams) {
      if (!s.waiter) continue
      if (s.compaction !== undefined) parts.push(`waits for the summary of compaction ${s.compaction?.id ?? '?'}`)
      else parts.push(`waits for the model (turn ${s.rec?.turn ?? '?'} step ${s.rec?.step ?? '?'})`)
    }
    for (const b of this.bodies.values()) if (!b.settled) parts.push(`waits for tool call ${b.key}`)
    for (const g of this.gates) parts.push(`waits ${g.kind === 'sleep' ? 'in a retry sleep' : `${g.kind} hook ${g.hook}`}`)
    return parts.length ? parts.join(', ') : 'waits on something outside the re-execution (a hook?)'
  }

  #release(g: Gate): void {
    const i = this.gates.indexOf(g)
    if (i >= 0) this.gates.splice(i, 1)
    g.release()
  }

  /** Releases hook after-gates and sleeps (never blocked by anything but a pending tool cancel). */
  #releaseSafe(): boolean {
    const safe = this.gates.filter((g) => g.kind !== 'before' && this.#mayPass(g))
    for (const g of safe) this.#release(g)
    return safe.length > 0
  }

  /** While a cancel inside the tool phase is pending, calls that the cancel stopped before their body
   * must not get through `tools/pre-execute`. */
  #mayPass(g: Gate): boolean {
    if (g.hook !== 'tools/pre-execute' || g.callKey === undefined) return true
    const turn = this.agent.lifecycle.openTurn
    if (turn === null || this.#aborted()) return true
    const result = this.#stepRec()?.results.get(g.callKey)
    return !(result && isAbortedBeforeBody(result))
  }

  #aborted(): boolean {
    return this.agent.abort?.signal.aborted === true
  }

  #stepRec(): StepRecord | undefined {
    const l = this.agent.lifecycle
    if (l.openTurn === null || l.openStep === null) return undefined
    return this.steps.get(key2(l.openTurn, l.openStep))
  }

  // ------------------------------------------------------------------ cancels

  /** The cancel to issue before `next`, or null. Pure. */
  #cancelPlan(next: LogEvent): { turn: number; cause: CancelCause; keepInbox: boolean } | null {
    const turn = this.agent.lifecycle.openTurn
    if (turn === null || this.#aborted() || this.cancelled.has(turn)) return null
    const end = this.turnEnds.get(turn)
    if (!end) return null
    let cause: CancelCause
    if (end.reason.kind === 'aborted') cause = end.reason.cause as CancelCause
    // a crash lost the turn/end of a cancelled turn (repair closed it): the cancel's traces stand for it
    else if (end.reason.kind === 'interrupted' && this.cancelTraced.has(turn)) cause = { kind: 'user' }
    else return null
    // In a step whose tools the cancel cut, the calls' recorded progress decides when it came.
    if (this.#inToolCancelStep()) {
      // A result the recording committed before the cancel's traces: its body settles first,
      // unless its outcome is one a body also gives after the cancel (an output, a timeout) and
      // nothing in the log pins the cancel later (the clearing splices of a cancel without
      // keepInbox): then the cancel came first (the calls it stopped never started, see
      // `#toolCancelReady`), and the body settles after it, inside the grace period.
      if (next.type === 'tool/result' && !isCancelEffect(next, this.rec[next.seq + 1])) {
        const r = next as EventOf<'tool/result'>
        const b = this.bodies.get(key3(r.data.turn, r.data.step, r.data.callId))
        if (b && !b.settled && !(settlesAfterCancel(r) && !this.#cancelPinned(next.seq, end.seq))) return null
      }
      return this.#toolCancelReady() ? { turn, cause, keepInbox: !this.#isCancelClear(next.seq, end.seq) } : null
    }
    if (isCancelEffect(next, this.rec[next.seq + 1])) return { turn, cause, keepInbox: true }
    if (next.type === 'agent/inbox/spliced') {
      if (this.#isCancelClear(next.seq, end.seq)) return { turn, cause, keepInbox: false }
      if (this.#latchingSendAfterCancel(next as EventOf<'agent/inbox/spliced'>, end.seq)) return { turn, cause, keepInbox: true }
    }
    return null
  }

  /**
   * In a step whose tools the cancel cut: settles every running body whose recorded result only a
   * body that settled before the cancel gives. A body that throws after the abort is `ABORTED`
   * (tools/scheduler.ts), so a recorded `TOOL_ERROR` is a fact of the recording: its body threw
   * before the cancel, even when its result commits after an aborted one (results commit in model
   * order). An output, a timeout or an abort may come after the cancel: those settle as the
   * recording's next event asks. True when it settled something.
   */
  #settleBeforeCancel(): boolean {
    if (!this.#inToolCancelStep()) return false
    let did = false
    for (const b of this.bodies.values()) {
      if (b.settled || b.result?.data.error?.code !== 'TOOL_ERROR') continue
      did = this.#settle(b) || did
    }
    return did
  }

  /** A splice between `from` and the turn's end clears a list as a cancel does: the cancel's
   * position is written in the log. */
  #cancelPinned(from: number, endSeq: number): boolean {
    for (let i = from; i < endSeq; i++) {
      const x = this.rec[i]!
      if (x.type === 'agent/inbox/spliced' && (x as EventOf<'agent/inbox/spliced'>).data.outcome === 'canceled') return true
    }
    return false
  }

  /** The open step's tools were cut by a cancel (recorded), and its message is already appended. */
  #inToolCancelStep(): boolean {
    const st = this.#stepRec()
    if (!st || st.outcome?.kind !== 'aborted' || !st.hasTools) return false
    return this.agent.events.some((e) => e.type === 'assistant/message' && (e.data as { turn: number }).turn === st.turn
      && (e.data as { step: number }).step === st.step && e.surfaceOp === 'append')
  }

  /**
   * A next-turn send whose turn ends aborted and is followed at once by the next turn (a wake
   * latched during the abort), with nothing between it and that end but what a cancel leaves
   * (splices, results, interrupted messages, the aborted step's end): it came after the cancel.
   */
  #latchingSendAfterCancel(e: EventOf<'agent/inbox/spliced'>, endSeq: number): boolean {
    const d = e.data
    if (d.target !== 'next-turn' || d.outcome !== undefined || (d.removedCount ?? 0) > 0 || d.inserted.length === 0) return false
    const after = this.rec[endSeq + 1]
    if (after?.type !== 'turn/start' || (after as EventOf<'turn/start'>).data.cause !== undefined) return false
    return this.#onlyCancelTraces(e.seq + 1, endSeq)
  }

  /** The splices at `seq` clear both lists exactly as `cancel` without `keepInbox` does. */
  #isCancelClear(seq: number, endSeq: number): boolean {
    const lists = { 'next-step': this.agent.inbox.nextStep.length, 'next-turn': this.agent.inbox.nextTurn.length }
    let i = seq
    for (const target of ['next-step', 'next-turn'] as const) {
      if (lists[target] === 0) continue
      const e = this.rec[i]
      if (e?.type !== 'agent/inbox/spliced') return false
      const d = (e as EventOf<'agent/inbox/spliced'>).data
      if (d.target !== target || d.start !== 0 || d.removedCount !== lists[target] || d.inserted.length > 0 || d.outcome !== 'canceled') return false
      i++
    }
    return i > seq && i <= endSeq && this.#onlyCancelTraces(i, endSeq)
  }

  /** Events `from..end-1` are all what a cancel leaves (splices, results, interrupted messages,
   * synthetic pairs, the aborted step's end): the agent did nothing new in between. */
  #onlyCancelTraces(from: number, end: number): boolean {
    for (let i = from; i < end; i++) {
      const x = this.rec[i]!
      if (x.type === 'agent/inbox/spliced' || x.type === 'tool/result' || x.type === 'llm/retry') continue
      if (isCancelEffect(x, this.rec[i + 1])) continue
      return false
    }
    return true
  }

  /** In a step whose tools were cut by the cancel: every call the recording started has started, and
   * every started call got as far as its recorded result says it did. */
  #toolCancelReady(): boolean {
    const st = this.#stepRec()
    if (!st || !this.#inToolCancelStep()) return false
    const called = new Set<string>()
    for (let i = this.len - 1; i >= 0; i--) {
      const e = this.agent.events[i]!
      if (e.type === 'step/start') break
      if (e.type === 'tool/call') {
        const d = (e as EventOf<'tool/call'>).data
        called.add(key3(d.turn, d.step, d.callId))
      }
    }
    for (const k of st.realCalls) {
      if (!called.has(k)) return false
      const r = st.results.get(k)
      if (!r || isAbortedBeforeBody(r)) continue
      const code = r.data.error?.code
      if (code === 'DENIED' || code === 'UNKNOWN_TOOL' || code === 'INVALID_ARGS' || (code === 'HOOK_ERROR' && !isExecuteHookError(r))) {
        if (!this.preDone.has(k)) return false
        continue
      }
      // its body ran (or was running) when the cancel came
      if (!this.bodies.has(k)) return false
    }
    return true
  }

  // ------------------------------------------------------------------ external inbox input

  /** An inbox splice the driver does not make itself: a send or an edit from outside. */
  #issuable(next: LogEvent): boolean {
    if (next.type !== 'agent/inbox/spliced') return false
    const d = (next as EventOf<'agent/inbox/spliced'>).data
    if (d.outcome === undefined && (d.removedCount ?? 0) > 0) return false // a claim: the driver's
    if (d.outcome === undefined && d.inserted.length > 0 && d.inserted.every((m) => m.source.kind === 'tool')) return false // tool contexts
    return true
  }

  #issueSplice(e: EventOf<'agent/inbox/spliced'>): boolean {
    const d = e.data
    const removed = d.removedCount ?? 0
    const a = this.agent
    if (d.outcome === 'canceled') {
      a.splice(d.target, d.start, removed, [...d.inserted], 'canceled')
      return true
    }
    const list = d.target === 'next-turn' ? a.inbox.nextTurn : a.inbox.nextStep
    const wake = this.#wakes(e)
    if (d.inserted.length === 1 && d.start === list.length) {
      a.send(d.inserted[0]! as UserMessage, d.target, wake)
    } else {
      a.splice(d.target, d.start, 0, [...d.inserted])
    }
    return true
  }

  /** Did this send wake the agent? Idle: a `turn/start` follows. Aborting: the next turn opens right
   * after the aborted one ends (a latched wake). Running: it does not matter. */
  #wakes(e: LogEvent): boolean {
    const a = this.agent
    // the last input the dying process got: the next process opens the turn (resumeAgent's wake)
    if (this.#switches[this.#switchAt]?.k === e.seq + 1) return false
    if (this.#silentEnd !== null) return true
    if (this.maintaining) return this.#latchedByMaintenance(e.seq)
    if (a.status === 'idle') return this.rec[e.seq + 1]?.type === 'turn/start'
    if (!this.#aborted()) return true
    // while aborting, a waking send is re-targeted to next-turn: a next-step insertion did not wake
    if ((e as EventOf<'agent/inbox/spliced'>).data.target === 'next-step') return false
    const turn = a.lifecycle.openTurn
    const end = turn === null ? undefined : this.turnEnds.get(turn)
    return end !== undefined && this.rec[end.seq + 1]?.type === 'turn/start'
  }

  /**
   * A send during a manual compaction: a waking one is latched and opens a turn as soon as the
   * maintenance ends, i.e. directly after its last compaction event. Nothing can happen between
   * that event and the end of the maintenance, so a `turn/start` right after a splice there is a
   * later send from idle, and the sends during the maintenance did not wake.
   */
  #latchedByMaintenance(seq: number): boolean {
    let i = seq + 1
    for (; i < this.rec.length; i++) {
      const x = this.rec[i]!
      if (x.type === 'agent/inbox/spliced' || x.type.startsWith('compaction/')) continue
      if (x.type === 'tool/result' && this.rec[i - 1]?.type === 'compaction/prune') continue
      if (x.type === 'user/message' && this.rec[i - 1]?.type === 'compaction/summary') continue
      break
    }
    return this.rec[i]?.type === 'turn/start' && this.rec[i - 1]?.type !== 'agent/inbox/spliced'
  }

  // ------------------------------------------------------------------ the model and the tools

  #serve(next: LogEvent): boolean {
    // a compaction summary call: answered when its bracket's outcome is next
    for (const s of this.streams) {
      if (!s.waiter || s.compaction === undefined) continue
      if ((next.type === 'compaction/summary' || next.type === 'compaction/end') &&
        (next.data as { compactionId: string }).compactionId === s.compaction?.id) {
        const w = s.waiter
        s.waiter = null
        w()
        return true
      }
    }
    // the model stream
    for (const s of this.streams) {
      if (!s.waiter || !s.rec) continue
      const more = s.i < s.rec.chunks.length
      if (next.type === 'assistant/chunk' ? more : !more && s.rec.end.kind !== 'hang') {
        const w = s.waiter
        s.waiter = null
        w()
        return true
      }
    }
    if (next.type === 'tool/result') {
      const d = (next as EventOf<'tool/result'>).data
      const b = this.bodies.get(key3(d.turn, d.step, d.callId))
      if (b && !b.settled && this.#settle(b)) return true
    }
    if (next.type === 'tool/call') {
      // A call waits for a pool slot: one running body must settle first. Settling the body whose
      // result commits next makes that result follow at once (its post-execute gate is released
      // eagerly), so it is the one only when the recording commits it next, after the calls that
      // start now; otherwise a body that cannot commit yet (the last one) settles, which logs nothing.
      const running = [...this.bodies.values()].filter((b) => !b.settled && b.result && !isAbortedWhileRunning(b.result))
      running.sort((x, y) => y.index - x.index)
      const due = this.#resultAfterCalls(next.seq)
      const head = due === null ? undefined : running.find((b) => b.key === due)
      if (head && this.#settle(head)) return true
      for (const b of running) if (this.#settle(b)) return true
    }
    return false
  }

  /** The call key of the first `tool/result` after the run of `tool/call`s starting at `seq`, or null. */
  #resultAfterCalls(seq: number): string | null {
    let i = seq
    while (this.rec[i]?.type === 'tool/call') i++
    const r = this.rec[i]
    if (r?.type !== 'tool/result' || r.surfaceOp !== 'append') return null
    const d = (r as EventOf<'tool/result'>).data
    return key3(d.turn, d.step, d.callId)
  }

  #model(name: string, contextWindow: number | undefined, gen: number): ModelAdapter {
    const self = this
    return {
      info: { name, ...(contextWindow !== undefined ? { contextWindow } : {}) },
      stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamChunk> {
        if (gen !== self.#gen) return (async function* () { await NEVER })()
        if (request.purpose === 'compaction') return self.#summary(signal)
        const l = self.agent.lifecycle
        const rec = l.openTurn !== null && l.openStep !== null ? self.steps.get(key2(l.openTurn, l.openStep)) ?? null : null
        const serve: StreamServe = { rec, i: 0, waiter: null }
        self.streams.push(serve)
        const wait = (): Promise<void> => new Promise<void>((resolve) => {
          serve.waiter = resolve
          self.schedule()
        })
        return (async function* () {
          try {
            if (rec === null) throw new ModelError({ code: 'UNKNOWN', message: 'reexecute: the recording has no such step' })
            while (serve.i < rec.chunks.length) {
              await wait()
              yield rec.chunks[serve.i++]!
            }
            if (rec.end.kind === 'hang') {
              await new Promise<void>((resolve) => {
                if (signal.aborted) resolve()
                else signal.addEventListener('abort', () => resolve(), { once: true })
              })
              throw new DOMException('aborted', 'AbortError')
            }
            await wait()
            if (rec.end.kind === 'throw') {
              const f = rec.end.failure.failure
              const last = rec.chunks[rec.chunks.length - 1]
              if (f.code === 'STREAM_GRAMMAR' && last?.type === 'finish' && f.message.startsWith('chunk after finish: ')) {
                yield afterFinishChunk(f.message.slice('chunk after finish: '.length))
                return
              }
              throw new ModelError(f)
            }
          } finally {
            serve.waiter = null
            const i = self.streams.indexOf(serve)
            if (i >= 0) self.streams.splice(i, 1)
          }
        })()
      },
    }
  }

  /**
   * A summary call, served from the open bracket's record once the pump reaches its outcome:
   * the recorded summary and usage; the recorded model failure; for `ABORTED`, a wait for the cancel
   * (the pump issues it); for the summariser's own decisions, a response that makes it decide the
   * same (whitespace for `EMPTY_SUMMARY`, a text of the recorded estimate for `SUMMARY_NOT_SMALLER`).
   */
  #summary(signal: AbortSignal): AsyncIterable<StreamChunk> {
    const id = this.agent.lifecycle.openCompaction
    const rec = id === null ? null : this.brackets.get(id) ?? null
    const serve: StreamServe = { rec: null, i: 0, waiter: null, compaction: rec }
    this.streams.push(serve)
    const self = this
    return (async function* () {
      try {
        if (rec === null || (rec.summary === null && rec.end === null)) {
          throw new ModelError({ code: 'UNKNOWN', message: 'reexecute: the recording has no such compaction bracket' })
        }
        const error = rec.summary === null ? rec.end?.data.error : undefined
        if (error?.code === 'ABORTED') {
          await new Promise<void>((resolve) => {
            if (signal.aborted) resolve()
            else signal.addEventListener('abort', () => resolve(), { once: true })
          })
          throw new DOMException('aborted', 'AbortError')
        }
        await new Promise<void>((resolve) => {
          serve.waiter = resolve
          self.schedule()
        })
        if (rec.summary !== null) {
          const { summary, usage } = rec.summary.data
          yield* shorthandChunks({ text: summary, ...(usage !== undefined ? { usage } : {}) }, () => 'unused')
          return
        }
        if (error === undefined) throw new ModelError({ code: 'UNKNOWN', message: 'reexecute: the recorded bracket ended without a summary or an error' })
        if (!SUMMARISER_CODES.has(error.code)) throw new ModelError({ code: error.code, message: error.message } as Failure)
        yield* shorthandChunks({ text: self.#decidedSummary(error) }, () => 'unused')
      } finally {
        serve.waiter = null
        const i = self.streams.indexOf(serve)
        if (i >= 0) self.streams.splice(i, 1)
      }
    })()
  }

  /** A summary text for which the summariser decides as recorded. */
  #decidedSummary(error: { code: string; message: string }): string {
    if (error.code === 'EMPTY_SUMMARY') return ' '
    if (error.code === 'SUMMARY_NOT_SMALLER') {
      const m = /^the summary \((\d+) estimated tokens\)/.exec(error.message)
      if (m) return this.#textOfEstimate(Number(m[1]))
    }
    // SURFACE_CHANGED, SUMMARISER_ERROR: the model answered; any short text
    return 'summary'
  }

  /** A text whose summary message the tokenizer estimates at exactly `n` tokens (else the nearest above). */
  #textOfEstimate(n: number): string {
    const tokenizer = this.opts.tokenizer ?? charTokenizer
    const est = (len: number) => estimateMessage({
      id: 'x', role: 'user', content: [{ type: 'text', text: SUMMARY_PREFIX + 'x'.repeat(len) }], source: { kind: 'compaction' },
    }, tokenizer)
    let lo = 1
    let hi = 1
    while (est(hi) < n && hi < 1 << 26) hi *= 2
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (est(mid) < n) lo = mid + 1
      else hi = mid
    }
    return 'x'.repeat(lo)
  }

  #tool(t: AnyTool, gen: number): AnyTool {
    const { output: _output, ...rest } = t
    void _output
    return {
      ...rest,
      execute: (_args: unknown, ctx: ToolContext) => (gen === this.#gen ? this.#body(ctx) : NEVER),
    } as AnyTool
  }

  #body(ctx: ToolContext): Promise<unknown> {
    const k = key3(ctx.turn, ctx.step, ctx.callId)
    const st = this.steps.get(key2(ctx.turn, ctx.step))
    const result = st?.results.get(k)
    return new Promise((resolve, reject) => {
      const b: BodyServe = {
        key: k, index: st?.realCalls.indexOf(k) ?? 0, result, ctx, resolve, reject,
        timer: this.#pendingTimers.get(k) ?? null, settled: false,
      }
      this.bodies.set(k, b)
      if (result && isAbortedWhileRunning(result)) {
        const onAbort = () => {
          b.settled = true
          reject(ctx.signal.reason ?? new DOMException('aborted', 'AbortError'))
        }
        if (ctx.signal.aborted) onAbort()
        else ctx.signal.addEventListener('abort', onAbort, { once: true })
      }
      this.schedule()
    })
  }

  readonly #pendingTimers = new Map<string, FakeTimer>()

  /** Settles a body as recorded. False when its outcome is not the body's to give. */
  #settle(b: BodyServe): boolean {
    const r = b.result
    if (!r) {
      b.settled = true
      b.resolve({ content: [] })
      return true
    }
    if (isAbortedWhileRunning(r)) return false
    const code = r.data.error?.code
    b.settled = true
    if (code === 'TOOL_TIMEOUT') {
      if (b.timer && !b.timer.cleared) {
        b.timer.cleared = true
        b.timer.fn()
      }
      return true
    }
    if (code === 'TOOL_ERROR') {
      const msg = r.data.error!.message
      const m = /^Tool '[^']*' failed: ([\s\S]*)$/.exec(msg)
      b.reject(new Error(m ? m[1]! : msg))
      return true
    }
    if (this.#stepRec()?.outcome?.kind === 'concluded' || this.steps.get(key2(b.ctx.turn, b.ctx.step))?.outcome?.kind === 'concluded') {
      b.ctx.concludeTurn()
    }
    b.resolve(code === undefined ? { content: r.data.message.content } : { content: [] })
    return true
  }

  #timers(gen: number): Timers {
    return {
      sleep: (_ms: number, signal: AbortSignal) => gen !== this.#gen ? NEVER : new Promise<void>((resolve) => {
        if (signal.aborted) return resolve()
        const g: Gate = { kind: 'sleep', release: resolve }
        signal.addEventListener('abort', () => {
          const i = this.gates.indexOf(g)
          if (i >= 0) this.gates.splice(i, 1)
          resolve()
        }, { once: true })
        this.gates.push(g)
        this.schedule()
      }),
      random: () => 0.5,
      setTimeout: (fn: () => void, ms: number) => {
        const t: FakeTimer = { fn, ms, cleared: false }
        this.#lastTimer = t
        return t
      },
      clearTimeout: (h: unknown) => {
        if (h && typeof h === 'object') (h as FakeTimer).cleared = true
      },
    }
  }

  // ------------------------------------------------------------------ hooks

  /** The hooks of one process: a factory is called for each process of the recording (see
   * `#switches`), as a restarted app creates its listeners afresh. */
  #hooks(gen: number): AgentOptions['hooks'] {
    const h = this.opts.hooks
    const user = (typeof h === 'function' ? h() : h) ?? {}
    const out: Record<string, unknown[]> = {}
    const list = (name: string): unknown[] => {
      const v = (user as Record<string, unknown>)[name]
      return v === undefined ? [] : Array.isArray(v) ? [...v] : [v]
    }
    for (const [name, v] of Object.entries(user)) {
      if (name === 'tools/execute') continue // the recorded results stand for this waterfall
      out[name] = Array.isArray(v) ? [...v] : [v]
    }
    for (const name of WATERFALLS) {
      out[name] = [this.#gatedWaterfall(name, gen), ...list(name)]
    }
    const stopping = list('agent/turn-stopping') as Array<(p: unknown) => unknown>
    out['agent/turn-stopping'] = [async (p: unknown) => {
      await this.#gate('before', 'agent/turn-stopping', undefined, gen)
      let error: { e: unknown } | null = null
      try {
        for (const fn of stopping) await fn(p)
      } catch (e) {
        error = { e }
      }
      await this.#gate('after', 'agent/turn-stopping', undefined, gen)
      if (error) throw error.e
    }]
    out['tools/execute'] = [(p: ExecutePayload, next: (p?: ExecutePayload) => Promise<unknown>) => this.#execute(p, next)]
    return out as AgentOptions['hooks']
  }

  #gate(kind: 'before' | 'after', hook: GatedHook, callKey: string | undefined, gen: number): Promise<void> {
    if (gen !== this.#gen) return NEVER // a dead process's hook: it never resumes
    if (this.done && !this.divergence) return Promise.resolve()
    return new Promise<void>((resolve) => {
      this.gates.push({ kind, hook, ...(callKey !== undefined ? { callKey } : {}), release: resolve })
      this.schedule()
    })
  }

  #gatedWaterfall(name: (typeof WATERFALLS)[number], gen: number) {
    return async (p: unknown, next: (p?: unknown) => Promise<unknown>): Promise<unknown> => {
      const call = (p as { call?: { id: string }; turn?: number; step?: number }).call
      const k = call ? key3((p as { turn: number }).turn, (p as { step: number }).step, call.id) : undefined
      await this.#gate('before', name, k, gen)
      let value: unknown
      let error: { e: unknown } | null = null
      try {
        value = await next()
      } catch (e) {
        error = { e }
      }
      await this.#gate('after', name, k, gen)
      if (name === 'tools/pre-execute' && k !== undefined) this.preDone.add(k)
      if (error) throw error.e
      return value
    }
  }

  /** The `tools/execute` waterfall, served: a recorded hook failure throws here, else the body. */
  #execute(p: ExecutePayload, next: (p?: ExecutePayload) => Promise<unknown>): Promise<unknown> {
    const k = key3(p.turn, p.step, p.call.id)
    const timer = this.#lastTimer
    this.#lastTimer = null
    if (timer && p.tool.timeoutMs !== undefined) this.#pendingTimers.set(k, timer)
    const r = this.steps.get(key2(p.turn, p.step))?.results.get(k)
    if (r && isExecuteHookError(r)) {
      const prefix = `Tool '${p.call.name}' failed: the tools/execute hook failed: `
      const msg = r.data.error!.message
      return Promise.reject(new Error(msg.startsWith(prefix) ? msg.slice(prefix.length) : msg))
    }
    return next()
  }

  // ------------------------------------------------------------------ time and ids

  #time(): number {
    const n = this.agent?.events.length ?? 0
    const e = this.rec[n] ?? this.rec[this.rec.length - 1]
    return e?.time ?? 0
  }

  #id(): string {
    const n = this.len
    if (this.#idSeq !== n) {
      this.#idSeq = n
      this.#idUsed = 0
    }
    const e = this.rec[n]
    const k = this.#idUsed++
    if (e?.type === 'agent/inbox/spliced') {
      const m = (e as EventOf<'agent/inbox/spliced'>).data.inserted[k]
      if (m) return m.id
    }
    if (e?.type === 'user/message' && k === 0) return (e as EventOf<'user/message'>).data.message.id
    // compaction: the bracket's id when its start is appended; the summary message's id is drawn
    // just before its `compaction/summary` (the message follows it)
    if (e?.type === 'compaction/start' && k === 0) return (e as EventOf<'compaction/start'>).data.compactionId
    if (e?.type === 'compaction/summary' && k === 0) {
      const m = this.rec[n + 1]
      if (m?.type === 'user/message') return (m as EventOf<'user/message'>).data.message.id
    }
    return `reexec-${n}-${k}`
  }
}

/** What a dead process waits on. */
const NEVER: Promise<never> = new Promise<never>(() => {})

function isAbortedBeforeBody(r: EventOf<'tool/result'>): boolean {
  return r.data.error?.code === 'ABORTED' && r.data.error.message.includes('before its body started')
}

function isAbortedWhileRunning(r: EventOf<'tool/result'>): boolean {
  return r.data.error?.code === 'ABORTED' && !isAbortedBeforeBody(r)
}

/** An outcome a body gives as well when it settles after the cancel (within the grace period):
 * an output (also an invalid one) or a timeout. A throw after the cancel is `ABORTED`. */
function settlesAfterCancel(r: EventOf<'tool/result'>): boolean {
  const code = r.data.error?.code
  return code === undefined || code === 'TOOL_TIMEOUT' || code === 'INVALID_TOOL_OUTPUT'
}

function isExecuteHookError(r: EventOf<'tool/result'>): boolean {
  return r.data.error?.code === 'HOOK_ERROR' && r.data.error.message.includes('the tools/execute hook failed')
}

/** Events only a cancel produces (with the event after `e`, for a synthetic pair). */
function isCancelEffect(e: LogEvent, after: LogEvent | undefined): boolean {
  switch (e.type) {
    case 'turn/end':
      return (e as EventOf<'turn/end'>).data.reason.kind === 'aborted'
    case 'step/end':
      return (e as EventOf<'step/end'>).data.outcome.kind === 'aborted'
    case 'compaction/end':
      return (e as EventOf<'compaction/end'>).data.error?.code === 'ABORTED'
    case 'assistant/message':
      return (e as EventOf<'assistant/message'>).data.interrupted === true
    case 'tool/result': {
      const code = (e as EventOf<'tool/result'>).data.error?.code
      return code === 'ABORTED' || (code === 'ABORTED_BEFORE_DISPATCH' && (e as EventOf<'tool/result'>).data.error!.message.includes('cancelled'))
    }
    case 'tool/call': {
      if (after?.type !== 'tool/result') return false
      const r = (after as EventOf<'tool/result'>).data
      return r.callId === (e as EventOf<'tool/call'>).data.callId && r.error?.code === 'ABORTED_BEFORE_DISPATCH' && r.error.message.includes('cancelled')
    }
    default:
      return false
  }
}

/** The chunk a "chunk after finish" grammar failure names (parsed back from its message). */
function afterFinishChunk(text: string): StreamChunk {
  try {
    return JSON.parse(text) as StreamChunk
  } catch {
    return { type: 'text-delta', index: 0, text: '' } as StreamChunk
  }
}

export type { HookMap }
