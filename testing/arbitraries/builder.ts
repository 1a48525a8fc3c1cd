/**
 * The log builder: follows a `LogPlan` and writes the events the agent would write, in the
 * canonical order of decision record "event-vocabulary" (docs/decisions/ in the repository), tracking the open turn and step, the inbox lists,
 * the surface, the last request header and the retry chain, so the log is valid by construction.
 *
 * Split along its seams (issue 15): builder-core.ts holds the state and the inbox, surface and
 * compaction bookkeeping, builder-step.ts one step, this file the turns and `buildLog`.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { UserMessage } from '../../events/messages.js'
import type { LogPlan, TurnPlan } from './plan.js'
import { DEFAULT_STEP, DEFAULT_TURN, type BuildOptions } from './builder-core.js'
import { StepBuilder } from './builder-step.js'

export { DEFAULT_STEP, SYSTEM_PROMPT, TOOL_SPECS, type BuildOptions } from './builder-core.js'

export class LogBuilder extends StepBuilder {
  // ---- turns -------------------------------------------------------------------------------------

  build(plan: LogPlan): LogEvent[] {
    let retryOf: number | null = null
    let i = 0
    while (i < plan.turns.length || retryOf !== null) {
      const tp = plan.turns[i++] ?? DEFAULT_TURN
      if (retryOf === null) {
        for (const item of tp.idle) this.idle(item)
        const queued = this.inbox['next-turn'].length > 0 && !this.lastTurnAborted
        if (tp.wake === 'steer') this.send('next-step', tp.wakeMessage)
        else if (tp.wake === 'followup' || !queued) this.send('next-turn', tp.wakeMessage)
      }
      retryOf = this.turn(tp, retryOf)
    }
    for (const item of plan.trailing) this.idle(item)
    return this.events
  }
  /** Runs one turn; returns the turn number to retry, or null. */
  protected turn(tp: TurnPlan, retryOf: number | null): number | null {
    const turn = ++this.lastTurn
    this.emit('turn/start', retryOf === null ? { turn } : { turn, cause: { kind: 'retry', of: retryOf } })
    this.turnOpen = true
    this.step = 0
    if (retryOf === null) this.chainAttempt = 0
    let first = true
    let owed = retryOf !== null
    let sticky = false
    let planIndex = 0
    const repeat = retryOf !== null ? this.repeat : null
    this.repeat = null
    for (;;) {
      const sp = (planIndex === 0 && repeat) || (tp.steps[planIndex++] ?? DEFAULT_STEP)
      if (sp === repeat) planIndex++
      if (this.step >= this.opts.maxStepsPerTurn) {
        this.endTurn({ kind: 'step-limit' })
        return null
      }
      if ((sp.kind === 'crash' || sp.kind === 'fork') && sp.cutAt % 5 === 0 && !first) {
        // A crash or a fork between two steps.
        this.endTurn({ kind: sp.kind === 'crash' ? 'interrupted' : 'forked' })
        this.afterCut(sp.kind, sp.seedAfter)
        return null
      }
      const batch = this.claim(first && retryOf === null)
      if (sp.compaction) this.compact(sp.compaction)
      let entered: UserMessage[]
      switch (sp.preStep) {
        case 'reject':
          this.endTurn({ kind: 'blocked' })
          return null
        case 'throw':
          this.endTurn({ kind: 'error', failure: { code: 'HOOK_ERROR', message: 'agent/pre-step listener threw' } })
          return null
        case 'empty':
          if (!owed) {
            this.endTurn(sticky ? { kind: 'max-tokens' } : { kind: 'completed' })
            return null
          }
          entered = []
          break
        case 'enter+hook':
          entered = [...batch, this.fresh(sp.hookMessage, 'h')]
          break
        default:
          entered = batch
      }
      first = false
      const r = this.runStep(sp, entered)
      switch (r) {
        case 'tools':
          owed = true
          continue
        case 'stop':
        case 'concluded':
        case 'max-tokens':
          if (r === 'max-tokens') sticky = true
          owed = false
          if (this.inbox['next-step'].length > 0) continue
          if (sp.afterStop !== 'complete' && planIndex < tp.steps.length) {
            this.send('next-step', sp.afterStop === 'steer' ? { ...sp.stopMessage, source: { kind: 'user' } } : sp.stopMessage)
            continue
          }
          this.endTurn(sticky ? { kind: 'max-tokens' } : { kind: 'completed' })
          return null
        case 'retry':
          return turn
        case 'ended':
          return null
      }
    }
  }

  // ---- steps -----------------------------------------------------------------------------------

}


/** Builds the events of a plan. */
export function buildLog(plan: LogPlan, opts: BuildOptions): LogEvent[] {
  return new LogBuilder(opts, plan.startTime, plan.clockSeed).build(plan)
}
