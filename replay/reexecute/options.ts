/**
 * The public types of `reexecute` (replay/reexecute/index.ts): its options and its result.
 */
import type { AgentOptions } from '../../agent/types.js'
import type { LogEvent, RequestConfig } from '../../events/index.js'
import type { Tokenizer } from '../../compaction/meter.js'
import type { AnyTool } from '../../tools/types.js'

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
  /** As the recorded agent's (docs/spec/lifecycle.md §10): the log records budget ends, not the budget, so give
   * the same one (with the same `price`) to reproduce them. */
  budget?: AgentOptions['budget']
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

