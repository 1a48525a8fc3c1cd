/**
 * The state panel's "open approvals" and "pending wakeups" lists (docs/spec/lifecycle.md §9, §10), from the
 * `approvals` and `schedules` slices the cursor folded at the selected seq, and the selection box of
 * a `child/spawned` event (a link to the child's report when the CLI wrote one, else its log).
 */
import type { ReplayState } from '../../reducers/index.js'
import { openApprovals } from '../../reducers/approvals.js'
import { h, oneLine, replace } from './dom.js'
import { fmtTime } from './format.js'

export function showWaits(approvals: HTMLElement, schedules: HTMLElement, st: ReplayState, select: (seq: number) => void): void {
  const open = openApprovals(st.approvals)
  const w = st.approvals.waiting
  approvals.dataset.count = String(open.length)
  replace(approvals, open.length === 0 ? h('div', { class: 'muted' }, 'none') : [
    w ? h('div', { class: 'muted', data: { testid: 'parked-since' } }, `parked since seq ${w.parkedSeq}`) : null,
    ...open.map((a) => h('div', { class: 'item', data: { approval: a.approvalId }, onclick: () => select(a.seq) },
      h('span', { class: 'seq' }, String(a.seq)), h('b', null, oneLine(a.approvalId, 40)), ` ${oneLine(a.name || '?', 60)}(${oneLine(a.arguments, 120)}) `,
      h('span', { class: 'muted' }, `${oneLine(a.callId, 40)} · asked `, fmtTime(a.time),
        a.expiresAt !== undefined ? ' · expires ' : '', a.expiresAt !== undefined ? fmtTime(a.expiresAt) : '',
        a.question !== undefined ? ` · ${oneLine(a.question, 160)}` : ''))),
  ])
  const pending = st.schedules.pending
  schedules.dataset.count = String(pending.length)
  replace(schedules, pending.length === 0 ? h('div', { class: 'muted' }, 'none') : pending.map((p) =>
    h('div', { class: 'item', data: { schedule: p.scheduleId }, onclick: () => select(p.createdSeq) },
      h('span', { class: 'seq' }, String(p.createdSeq)), h('b', null, oneLine(p.scheduleId, 40)), ' due ', fmtTime(p.due),
      h('span', { class: 'muted' }, ` · ${p.every !== undefined ? `every ${p.every} ms · ` : ''}${p.deliver}, when busy ${p.whenBusy} · fired ${p.fired}×`))))
}

/** The selection box of a `child/spawned`: the child's id and a link to its report or its log. */
export function childBox(child: string, callId: string, link: { href?: string; log?: string } | undefined): HTMLElement {
  return h('div', { class: 'tool', data: { testid: 'child' } },
    h('div', null, 'child session ', h('b', null, oneLine(child, 120)), ` · call ${oneLine(callId, 60)}`),
    link?.href !== undefined ? h('a', { href: link.href, data: { testid: 'child-link' } }, `open its report (${oneLine(link.href, 120)})`)
      : link?.log !== undefined ? h('div', { class: 'muted' }, `its log: ${oneLine(link.log, 200)} (turnlog report it, or report this log with --children)`)
        : h('div', { class: 'muted' }, 'its log is in the same store as this one'))
}
