/**
 * The state one run of a re-execution shares between its parts (`Host`, implemented by
 * `Reexecution` in run.ts), and the waiting points it owns. Each part (serving the model, the
 * tools, the hooks, the clock; issuing inputs and cancels; comparing) is a set of functions over
 * a `Host`, so the parts import this file and never each other's run.
 */
import type { TurnlogAgent } from '../../agent/agent.js'
import type { AgentOptions } from '../../agent/types.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import type { ToolContext } from '../../tools/types.js'
import type { Divergence, ReexecuteOptions } from './options.js'
import type { BracketRecord, StepRecord, Switch } from './recording.js'

/** The waterfall hooks the re-execution gates (before and after each). */
export const WATERFALLS = [
  'agent/pre-step', 'system-prompt/assemble', 'agent/request', 'llm/stream', 'agent/request-error',
  'tools/pre-execute', 'tools/post-execute',
] as const
export type GatedHook = (typeof WATERFALLS)[number] | 'agent/turn-stopping'

/** A point where the agent waits for the re-execution: around a hook, or in a retry sleep. */
export interface Gate {
  kind: 'before' | 'after' | 'sleep'
  hook?: GatedHook
  /** For the tool hooks: the call key. */
  callKey?: string
  release: () => void
}

/** A model stream being served: the step's record and the next chunk. */
export interface StreamServe {
  rec: StepRecord | null
  i: number
  waiter: (() => void) | null
  /** A compaction summary call: its recorded bracket (rec is null). */
  compaction?: BracketRecord | null
}

/** A tool body being served: settles as its recorded result says, when the pump decides. */
export interface BodyServe {
  key: string
  index: number
  result: EventOf<'tool/result'> | undefined
  ctx: ToolContext
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
  timer: FakeTimer | null
  settled: boolean
  /** The round this run of the body asks, as recorded (docs/spec/lifecycle.md §11): it ends
   * with `ctx.inputRequired` when that `tool/input-requested` is next, not with the result. */
  round?: EventOf<'tool/input-requested'>
}

/** A timer of the agent's `timers.setTimeout`: fired only by the re-execution (a tool timeout). */
export interface FakeTimer { fn: () => void; ms: number; cleared: boolean }

/** One run of a re-execution, as its parts see it. */
export interface Host {
  readonly rec: readonly LogEvent[]
  readonly opts: ReexecuteOptions
  readonly start: number
  readonly steps: ReadonlyMap<string, StepRecord>
  readonly turnEnds: ReadonlyMap<number, { seq: number; reason: EventOf<'turn/end'>['data']['reason'] }>
  readonly brackets: ReadonlyMap<string, BracketRecord>
  /** Turns with a trace only a cancel leaves. */
  readonly cancelTraced: ReadonlySet<number>
  /** The process boundaries of the recording (see recording.ts). */
  readonly switches: readonly Switch[]
  /** The next boundary not yet reached. */
  switchAt: number
  /** The generation of the agent now running (one per process of the recording). */
  gen: number
  agent: TurnlogAgent
  plugins: NonNullable<AgentOptions['plugins']>
  /** A manual compaction we re-issued is running. */
  maintaining: boolean
  divergence: Divergence | null
  done: boolean
  stall: ReturnType<typeof setTimeout> | null
  readonly gates: Gate[]
  readonly streams: StreamServe[]
  readonly bodies: Map<string, BodyServe>
  /** Seqs of the recorded answers issued (docs/spec/lifecycle.md §11). */
  readonly answered: Set<number>
  /** Calls whose `tools/pre-execute` finished. */
  readonly preDone: Set<string>
  /** Turns we cancelled. */
  readonly cancelled: Set<number>
  /** The last timer the agent created (a tool's timeout is created just before its execute hook). */
  lastTimer: FakeTimer | null
  readonly pendingTimers: Map<string, FakeTimer>
  /** The approval gate's expiry timers (fired when the recording has a `by: expired` decision next). */
  readonly expiryTimers: Set<FakeTimer>
  /** Resolves the task of a silent maintenance we opened (inputs.ts). */
  silentEnd: (() => void) | null
  idSeq: number
  idUsed: number
  /** The agent's log length. */
  readonly len: number
  schedule(): void
  end(): void
  /** A decision the recording leaves open: false the first time, true when a re-run flips it. */
  choose(): boolean
  aborted(): boolean
  stepRec(): StepRecord | undefined
}
