/**
 * The "State at seq" column (statecharts with the lit states, lifecycle, usage so far, pending tool
 * calls, the two inbox lists, the model-visible history) and the "Selected" panel (a tool call's
 * arguments and result, verify violations at the seq, the raw event as JSON). Every number comes
 * from the `ReplayState` the cursor folded with the project's reducers; nothing is computed here.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { Violation } from '../../events/invariants/types.js'
import type { ReplayState } from '../../reducers/index.js'
import { str } from '../../replay/timeline.js'
import { fmtInt, fmtMs, h, oneLine, replace } from './dom.js'
import { cls, fmtTime, kv, pretty, relTime } from './format.js'
import { drawMachines, machineStates } from './machines.js'
import { contentLines } from './transcript.js'
import { VirtualList } from './vlist.js'
import { childBox, showWaits } from './waits-view.js'

export interface StateViewDeps {
  select(seq: number): void
  events: readonly LogEvent[]
  /** tool call id → the seqs of its call and result */
  calls: Map<string, { call?: number; result?: number }>
  violationsAt(seq: number): Violation[] | undefined
  /** Where a child session's report or log is (page data `family`), if known. */
  childLink?(childId: string): { href?: string; log?: string } | undefined
}

export class StateView {
  readonly column: HTMLElement
  readonly selectionEls: HTMLElement[]
  readonly #head = h('div', { class: 'state-head', data: { testid: 'state-head' } })
  readonly #machines = h('div', { class: 'machines', data: { testid: 'machines' } })
  readonly #lifecycle = h('div', { class: 'kv', data: { testid: 'lifecycle' } })
  readonly #usage = h('div', { class: 'kv', data: { testid: 'usage' } })
  readonly #pending = h('div', { class: 'list', data: { testid: 'pending' } })
  readonly #inbox = h('div', { class: 'list', data: { testid: 'inbox' } })
  readonly #approvals = h('div', { class: 'list', data: { testid: 'approvals' } })
  readonly #schedules = h('div', { class: 'list', data: { testid: 'schedules' } })
  readonly #historyTitle = h('h3', { data: { testid: 'history-count' } }, 'history')
  readonly #selection = h('div', { class: 'selection', data: { testid: 'selection' } })
  readonly #raw = h('pre', { class: 'raw', data: { testid: 'raw' } })
  readonly #history: VirtualList
  #current: ReplayState | null = null

  constructor(private readonly deps: StateViewDeps) {
    this.#history = new VirtualList(22, (i) => {
      const m = this.#current!.history.messages[i]!
      const s = this.#current!.history.seqs[i]!
      return h('div', { class: `hline r-${cls(m.role)}` }, h('span', { class: 'seq' }, String(s)), h('span', { class: 'kind' }, m.role), ' ', oneLine(contentLines(m).join(' '), 300))
    }, (i) => deps.select(this.#current!.history.seqs[i]!), 'history')
    this.column = h('section', { class: 'col state' }, h('h2', null, 'State at seq'), this.#head, this.#machines,
      h('div', { class: 'grid2' },
        h('div', null, h('h3', null, 'lifecycle'), this.#lifecycle),
        h('div', null, h('h3', null, 'usage so far'), this.#usage)),
      h('h3', null, 'pending tool calls'), this.#pending,
      h('h3', null, 'inbox'), this.#inbox,
      h('h3', null, 'open approvals'), this.#approvals,
      h('h3', null, 'pending wakeups'), this.#schedules,
      this.#historyTitle, this.#history.el)
    this.selectionEls = [h('h2', null, 'Selected'), this.#selection, this.#raw]
  }

  /** While the fold has not reached `seq` yet: says so (the panels keep their last state). */
  folding(seq: number, covered: number, total: number): void {
    replace(this.#head, h('b', null, `seq ${seq}`), ` · folding the log: ${fmtInt(covered)} of ${fmtInt(total)} events…`)
  }

  show(seq: number, st: ReplayState, t0: number | null): void {
    const e = this.deps.events[seq]!
    this.#current = st
    replace(this.#head, h('b', null, `seq ${seq}`), ` · ${oneLine(str(e.type), 40)} · `, fmtTime(e.time), relTime(e.time, t0))
    drawMachines(this.#machines, machineStates(st, e))
    const lc = st.lifecycle
    replace(this.#lifecycle,
      kv('open turn', lc.openTurn ?? '—', 'openTurn'), kv('open step', lc.openStep ?? '—', 'openStep'),
      kv('streaming', lc.streaming ? 'yes' : 'no', 'streaming'),
      kv('last step outcome', lc.lastStepOutcome?.kind ?? '—', 'lastStepOutcome'),
      kv('last turn end', lc.lastTurnEndReason?.kind ?? '—', 'lastTurnEndReason'),
      kv('compaction open', lc.openCompaction ?? '—', 'openCompaction'))
    const u = st.usage.total
    replace(this.#usage,
      kv('requests', fmtInt(u.requests), 'usage.requests'), kv('input tokens', fmtInt(u.inputTokens), 'usage.inputTokens'),
      kv('output tokens', fmtInt(u.outputTokens), 'usage.outputTokens'), kv('cache read', fmtInt(u.cacheReadTokens), 'usage.cacheReadTokens'),
      kv('reasoning', fmtInt(u.reasoningTokens), 'usage.reasoningTokens'),
      kv('failed requests', fmtInt(st.usage.failed.requests), 'usage.failed.requests'),
      kv('compaction requests', fmtInt(st.usage.compaction.requests), 'usage.compaction.requests'))
    replace(this.#pending, lc.pendingToolCalls.length === 0 ? h('div', { class: 'muted' }, 'none') : lc.pendingToolCalls.map((c) =>
      h('div', { class: 'item', data: { callid: c.callId }, onclick: () => this.deps.select(c.seq) }, h('span', { class: 'seq' }, String(c.seq)), h('b', null, oneLine(c.name, 60)), ` ${oneLine(c.callId, 60)} `, h('span', { class: 'muted' }, oneLine(c.arguments, 160)))))
    replace(this.#inbox,
      inboxList('next-turn', st.inbox.nextTurn),
      inboxList('next-step', st.inbox.nextStep))
    showWaits(this.#approvals, this.#schedules, st, this.deps.select)
    this.#historyTitle.textContent = `history (model-visible): ${st.history.messages.length} messages`
    this.#historyTitle.dataset.count = String(st.history.messages.length)
    this.#history.setCount(st.history.messages.length)
    this.#showSelection(e)
    this.#raw.textContent = JSON.stringify(e, null, 2)
  }

  #showSelection(e: LogEvent): void {
    const dd = (e.data ?? {}) as Record<string, unknown>
    const vs = this.deps.violationsAt(e.seq)
    const parts: HTMLElement[] = []
    if (vs) parts.push(h('div', { class: 'vio-box' }, vs.map((v) => h('div', null, h('b', null, v.invariant), ` ${v.message}`))))
    if (e.type === 'tool/call' || e.type === 'tool/result') {
      const id = str(dd.callId)
      const pair = this.deps.calls.get(id) ?? {}
      const call = pair.call !== undefined ? this.deps.events[pair.call] : undefined
      const res = pair.result !== undefined ? this.deps.events[pair.result] : undefined
      const cd = (call?.data ?? {}) as Record<string, unknown>
      const rd = (res?.data ?? {}) as Record<string, unknown>
      const dur = call && res ? ` · ${fmtMs(Number(res.time) - Number(call.time))}` : ''
      parts.push(h('div', { class: 'tool', data: { testid: 'tool-detail' } },
        h('div', null, 'tool call ', h('b', { data: { testid: 'tool-name' } }, str(cd.name ?? dd.name)), ` ${id}${dur}`),
        h('h3', null, 'arguments'), h('pre', { data: { testid: 'tool-args' } }, pretty(str(cd.arguments ?? ''))),
        h('h3', null, 'result'), h('pre', { data: { testid: 'tool-result' } }, res ? contentLines(rd.message).join('\n') : '(no result yet)'),
        rd.error ? h('div', { class: 'vio-box' }, `error: ${str((rd.error as { message?: unknown }).message)}`) : null))
    }
    const child = e.type === 'child/spawned' ? childBox(str(dd.child), str(dd.callId), this.deps.childLink?.(str(dd.child))) : null
    if (child) parts.push(child)
    replace(this.#selection, parts.length ? parts : h('div', { class: 'muted' }, `${oneLine(str(e.type), 40)} at seq ${e.seq}`))
  }
}

function inboxList(name: 'next-turn' | 'next-step', items: ReadonlyArray<{ id: string }>): HTMLElement {
  return h('div', { class: 'inbox-list', data: { testid: name, count: String(items.length) } }, h('span', { class: 'label' }, `${name} (${items.length})`),
    items.map((m) => h('div', { class: 'item' }, h('b', null, oneLine(m.id, 40)), ' ', oneLine(contentLines(m).join(' '), 160))))
}
