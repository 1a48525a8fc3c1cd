/**
 * `basicCompaction(options)`: the compaction plugin (docs/spec/lifecycle.md §7). Nothing in the spine depends on
 * it; it installs through `createAgent({ plugins: [basicCompaction(…)] })`:
 *
 * - a meter projection, fed by `agent.subscribe` (each committed event once; the prefix at install);
 * - the **pressure** trigger, an `agent/pre-step` listener: when the measure (plus the proposed
 *   batch) is above `thresholdRatio` × window it prunes, measures again and, if still above,
 *   summarises up to `compactionRetries + 1` times. A failure is a warning (`agent/error`, where
 *   `'compaction'`), never a failed turn; it always calls `next()`;
 * - the **overflow** trigger, an `agent/request-error` listener acting only on
 *   `CONTEXT_WINDOW_EXCEEDED`: prunes, measures, summarises with retention 0 (keeping the newest
 *   indivisible unit), and returns `{kind: 'retry'}` only if the replacement generation advanced
 *   during the recovery (a prune alone counts) and the turn's signal is not aborted, within
 *   `maxOverflowRetries` per agent (reset when the agent goes idle and on every non-interrupted
 *   `assistant/message`); otherwise it calls `next()` and the original error stands;
 * - `compactNow(agent)`: a manual compaction from idle, through `agent.runMaintenance`.
 */
import type { Agent, AgentPlugin, PreStepPayload } from '../agent/types.js'
import { TurnlogError, type LogEvent, type ToolErrorInfo } from '../events/index.js'
import type { ModelAdapter } from '../models/index.js'
import type { CompactionHost } from './host.js'
import { ContextMeter, charTokenizer, estimateMessage, type Measurement, type Tokenizer } from './meter.js'
import { MARKER_MAX_CHARS, pruneToolResults } from './prune.js'
import { DEFAULT_SUMMARY_INSTRUCTION, summarise, type SummariseResult } from './summarise.js'

export interface CompactionOptions {
  /**
   * The context window in tokens. Default: the model adapter's `info.contextWindow`. A function
   * gets the configured model name (`request/header.config.model`) and may return undefined to
   * fall back to the adapter's.
   */
  contextWindow?: number | ((model: string) => number | undefined)
  /** Pressure compaction above this share of the window. Default 0.8. */
  thresholdRatio?: number
  /** The recent tail the summariser keeps, as a share of the window. Default 0.16. */
  retainRatio?: number
  /** Tool results with more text characters than this are pruned. Default 8,192. */
  pruneThresholdChars?: number
  /** Characters kept from the start of a pruned result. Default 4,096. */
  pruneHead?: number
  /** Characters kept from the end of a pruned result. Default 1,024. */
  pruneTail?: number
  /** Overflow retries per agent (reset on idle and on a successful response). 0 disables overflow recovery. Default 1. */
  maxOverflowRetries?: number
  /** Extra summary attempts after a failed one, per trigger. Default 1. */
  compactionRetries?: number
  /** Counts the tokens of a text. Default `ceil(chars / 4)` (meter.ts). */
  tokenizer?: Tokenizer
  /** The instruction appended after the range in the summary request. */
  summaryInstruction?: string
  /** The model that writes summaries. Default the agent's model. */
  model?: ModelAdapter
  /**
   * A summary range below this many estimated tokens is declined. Default
   * max(64, 2% of the window), or 64 without a window.
   */
  minRangeTokens?: number
}

/** What one compaction run did. */
export interface CompactionReport {
  trigger: 'pressure' | 'overflow' | 'manual'
  /** The measure before, and after (when anything changed). */
  before: Measurement
  after: Measurement
  window: number | undefined
  /** Seqs of the tool results pruned (now hidden). */
  pruned: number[]
  /** Each summary attempt, in order. */
  summaries: SummariseResult[]
  /** True when the replacement generation advanced. */
  advanced: boolean
}

export interface CompactionPlugin extends AgentPlugin {
  /** Runs a manual compaction (prune everything above the threshold, then summarise keeping the
   * retained tail) from idle, through `agent.runMaintenance`. Throws `AGENT_BUSY` while running. */
  compactNow(agent: Agent): Promise<CompactionReport>
  /** The meter's current measure for an agent this plugin is installed on. */
  measure(agent: Agent): Measurement & { window: number | undefined }
}

/** A warning reported as `agent/error` (where `'compaction'`): compaction failed, the turn goes on. */
export class CompactionWarning extends Error {
  override readonly name = 'CompactionWarning'
  constructor(message: string, readonly trigger: CompactionReport['trigger'], readonly error?: ToolErrorInfo, options?: { cause?: unknown }) {
    super(message, options)
  }
}

interface Resolved {
  contextWindow: CompactionOptions['contextWindow']
  thresholdRatio: number
  retainRatio: number
  pruneThresholdChars: number
  pruneHead: number
  pruneTail: number
  maxOverflowRetries: number
  compactionRetries: number
  tokenizer: Tokenizer
  summaryInstruction: string
  model: ModelAdapter | undefined
  minRangeTokens: number | undefined
}

function resolve(o: CompactionOptions): Resolved {
  const r: Resolved = {
    contextWindow: o.contextWindow,
    thresholdRatio: o.thresholdRatio ?? 0.8,
    retainRatio: o.retainRatio ?? 0.16,
    pruneThresholdChars: o.pruneThresholdChars ?? 8192,
    pruneHead: o.pruneHead ?? 4096,
    pruneTail: o.pruneTail ?? 1024,
    maxOverflowRetries: o.maxOverflowRetries ?? 1,
    compactionRetries: o.compactionRetries ?? 1,
    tokenizer: o.tokenizer ?? charTokenizer,
    summaryInstruction: o.summaryInstruction ?? DEFAULT_SUMMARY_INSTRUCTION,
    model: o.model,
    minRangeTokens: o.minRangeTokens,
  }
  const bad = (field: string, why: string) => new TurnlogError('INVALID_OPTION', `basicCompaction: ${field} ${why}`, { field })
  if (typeof r.contextWindow === 'number' && !(Number.isFinite(r.contextWindow) && r.contextWindow > 0)) throw bad('contextWindow', 'must be a positive number')
  if (!(r.thresholdRatio > 0 && r.thresholdRatio <= 1)) throw bad('thresholdRatio', 'must be in (0, 1]')
  if (!(r.retainRatio >= 0 && r.retainRatio < 1)) throw bad('retainRatio', 'must be in [0, 1)')
  for (const k of ['pruneThresholdChars', 'pruneHead', 'pruneTail', 'maxOverflowRetries', 'compactionRetries'] as const) {
    if (!Number.isInteger(r[k]) || r[k] < 0) throw bad(k, 'must be a non-negative integer')
  }
  if (r.pruneHead + r.pruneTail + MARKER_MAX_CHARS > r.pruneThresholdChars) {
    throw bad('pruneHead', `+ pruneTail + ${MARKER_MAX_CHARS} (the marker) must not exceed pruneThresholdChars, or pruning would not be idempotent`)
  }
  if (r.minRangeTokens !== undefined && !(r.minRangeTokens >= 0)) throw bad('minRangeTokens', 'must be non-negative')
  return r
}

/** Per-agent state of an installed plugin. */
class Controller {
  readonly meter: ContextMeter
  overflowRetries = 0
  busy = false
  readonly #offs: Array<() => void> = []

  constructor(readonly host: CompactionHost, readonly o: Resolved) {
    this.meter = new ContextMeter({ tokenizer: o.tokenizer, pruneThresholdChars: o.pruneThresholdChars })
    for (const e of host.events) this.meter.apply(e)
    this.#offs.push(host.subscribe((e) => this.#onEvent(e)))
    this.#offs.push(host.on('agent/status', ({ status }) => {
      if (status === 'idle') this.overflowRetries = 0
    }))
    this.#offs.push(host.on('agent/pre-step', async (p, next) => {
      await this.#pressure(p)
      return next()
    }))
    this.#offs.push(host.on('agent/request-error', async (p, next) => {
      if (p.failure.code !== 'CONTEXT_WINDOW_EXCEEDED' || p.signal.aborted) return next()
      if (this.overflowRetries >= this.o.maxOverflowRetries) return next()
      const generation = this.meter.generation
      await this.#run('overflow', p.signal)
      if (this.meter.generation > generation && !p.signal.aborted) {
        this.overflowRetries++
        return { kind: 'retry' }
      }
      return next()
    }))
  }

  dispose(): void {
    for (const off of this.#offs) off()
  }

  #onEvent(e: LogEvent): void {
    this.meter.apply(e)
    if (e.type === 'assistant/message' && e.surfaceOp === 'append' && (e.data as { interrupted?: true }).interrupted !== true) {
      this.overflowRetries = 0
    }
  }

  window(): number | undefined {
    const cw = this.o.contextWindow
    if (typeof cw === 'number') return cw
    const info = (this.o.model ?? this.host.options.model).info?.contextWindow
    if (typeof cw === 'function') {
      const name = this.host.lifecycle.header?.config.model ?? this.host.baseConfig.model
      const w = cw(name)
      if (w !== undefined) return w
    }
    return info
  }

  async #pressure(p: PreStepPayload): Promise<void> {
    const window = this.window()
    if (window === undefined || p.signal.aborted || this.busy) return
    let proposed = 0
    for (const m of p.messages) proposed += estimateMessage(m, this.o.tokenizer)
    if (this.meter.measure().tokens + proposed <= this.o.thresholdRatio * window) return
    await this.#run('pressure', p.signal, proposed)
  }

  /**
   * One compaction run: prune, measure, summarise (up to compactionRetries + 1 attempts while the
   * measure stays above the threshold; on overflow and manual runs, at least one attempt). Never
   * throws: failures are reported as warnings, and an open bracket is closed with an error.
   */
  async #run(trigger: CompactionReport['trigger'], signal: AbortSignal, proposed = 0): Promise<CompactionReport> {
    const window = this.window()
    const before = this.meter.measure()
    const generation = this.meter.generation
    const report: CompactionReport = { trigger, before, after: before, window, pruned: [], summaries: [], advanced: false }
    if (this.busy) return report
    this.busy = true
    try {
      report.pruned = pruneToolResults(this.host, this.meter, {
        thresholdChars: this.o.pruneThresholdChars, head: this.o.pruneHead, tail: this.o.pruneTail,
      })
      const threshold = window === undefined ? 0 : this.o.thresholdRatio * window
      const over = () => this.meter.measure().tokens + proposed > threshold
      // Overflow: the provider said the request does not fit, whatever the estimate says; only a
      // prune that brought the measure under the threshold makes a summary unnecessary.
      // Manual runs always try one summary (the range choice declines when there is nothing to do).
      let due = trigger === 'pressure' ? over() : trigger === 'manual' || report.pruned.length === 0 || over()
      const retainTokens = trigger === 'overflow' || window === undefined ? 0 : Math.floor(this.o.retainRatio * window)
      const minRangeTokens = this.o.minRangeTokens ?? (window === undefined ? 64 : Math.max(64, Math.ceil(window * 0.02)))
      for (let attempt = 0; due && attempt <= this.o.compactionRetries && !signal.aborted; attempt++) {
        const r = await summarise(this.host, this.meter, {
          retainTokens, minRangeTokens, model: this.o.model ?? this.host.options.model,
          instruction: this.o.summaryInstruction, tokenizer: this.o.tokenizer, signal,
        })
        report.summaries.push(r)
        if (r.kind === 'declined') break
        if (r.kind === 'failed') {
          this.host.reportError(new CompactionWarning(`compaction ${r.compactionId} failed: ${r.error.code}: ${r.error.message}`, trigger, r.error), 'compaction')
          continue
        }
        due = trigger === 'pressure' && over()
      }
    } catch (err) {
      this.#closeBracket(err)
      this.host.reportError(new CompactionWarning(`compaction (${trigger}) failed: ${err instanceof Error ? err.message : String(err)}`, trigger, undefined, { cause: err }), 'compaction')
    } finally {
      this.busy = false
    }
    report.after = this.meter.measure()
    report.advanced = this.meter.generation > generation
    return report
  }

  /** After an unexpected throw (a refused append): close our bracket if it is still open. */
  #closeBracket(err: unknown): void {
    const id = this.host.lifecycle.openCompaction
    if (id === null) return
    try {
      this.host.append({ type: 'compaction/end', data: { compactionId: id, error: { code: 'SUMMARISER_ERROR', message: err instanceof Error ? err.message : String(err) } } })
    } catch (e) {
      this.host.reportError(e, 'compaction')
    }
  }

  manual(signal: AbortSignal): Promise<CompactionReport> {
    return this.#run('manual', signal)
  }
}

/** The compaction plugin. See the file comment and `CompactionOptions`. */
export function basicCompaction(options: CompactionOptions = {}): CompactionPlugin {
  const o = resolve(options)
  const controllers = new WeakMap<Agent, Controller>()
  const controllerOf = (agent: Agent): Controller => {
    const c = controllers.get(agent)
    if (!c) throw new TurnlogError('INVALID_ARGUMENT', 'basicCompaction: this plugin is not installed on that agent')
    return c
  }
  return {
    name: 'compaction',
    install(agent: CompactionHost) {
      if (controllers.has(agent)) throw new TurnlogError('INVALID_OPTION', 'basicCompaction: installed twice on one agent', { field: 'plugins' })
      const c = new Controller(agent, o)
      controllers.set(agent, c)
      return () => {
        c.dispose()
        controllers.delete(agent)
      }
    },
    compactNow(agent: Agent) {
      const c = controllerOf(agent)
      return agent.runMaintenance((signal) => c.manual(signal))
    },
    measure(agent: Agent) {
      const c = controllerOf(agent)
      return { ...c.meter.measure(), window: c.window() }
    },
  }
}
