/**
 * The kill loop's decision accounting (decisions.ts; issue 24 item 8, docs/spec/lifecycle.md §9, L17, R10) can
 * fail: on hand-made logs, each way a decision or a body can go wrong is named (a decision
 * store.decide acknowledged and then dropped, or logged as something else; one decided twice or
 * never; one no one made; a denied body that ran; a body run twice; an ok result with no run),
 * and a clean log passes with its figures.
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { accountDecisions, decisionsLine, type MadeDecision } from './decisions.js'

let seq = 0
const ev = (type: string, data: Record<string, unknown>): LogEvent => ({ seq: ++seq, type, time: 0, data }) as unknown as LogEvent
const at = { turn: 1, step: 1 }
const requested = (a: string, c: string) => ev('tool/approval-requested', { ...at, approvalId: a, callId: c })
const decided = (a: string, c: string, kind: 'approve' | 'deny', by: Record<string, unknown>) =>
  ev('tool/approval-decided', { ...at, approvalId: a, callId: c, decision: { kind }, by })
const call = (c: string, name = 'rm') => ev('tool/call', { ...at, callId: c, name, arguments: '{}' })
const result = (c: string, code?: string) => ev('tool/result', { ...at, callId: c, message: {}, ...(code ? { error: { code, message: code } } : {}) })
const user = (id: string) => ({ kind: 'user', id })
const made = (sessionId: string, approvalId: string, kind: 'approve' | 'deny', byId: string, acknowledged = true): MadeDecision =>
  ({ sessionId, approvalId, kind, byId, acknowledged })

/** A session where everything went right: approved (ran once), denied (never ran), a plain call. */
const clean = (): LogEvent[] => [
  requested('a1', 'c1'), decided('a1', 'c1', 'approve', user('d1')), call('c1'), result('c1'),
  requested('a2', 'c2'), decided('a2', 'c2', 'deny', user('d2')), call('c2'), result('c2', 'DENIED'),
  call('c3', 'echo'), result('c3'),
]
const cleanMade = [made('s', 'a1', 'approve', 'd1'), made('s', 'a2', 'deny', 'd2')]
const cleanRuns = ['s c1 rm', 's c3 echo']

describe('the kill loop accounting of decisions and bodies (L17 R10 §9)', () => {
  it('L17 R10: a clean run passes with its figures', () => {
    const a = accountDecisions(new Map([['s', clean()]]), cleanMade, cleanRuns)
    expect(a.problems).toEqual([])
    expect(decisionsLine(a)).toBe('2 approvals requested, 2 decisions logged (user approve 1, user deny 1); 2 made through store.decide and acknowledged ' +
      '(+0 unacknowledged yet logged); 2 body runs: approved ran 1, approved never started 0, denied ran 0, duplicated 0, ran with the call unlogged 0')
  })

  it('§9: a decision store.decide acknowledged and then dropped (the approval closed by a repair instead) is named', () => {
    const log = clean()
    log[1] = decided('a1', 'c1', 'deny', { kind: 'canceled' })
    log[3] = result('c1', 'ABORTED_BEFORE_DISPATCH')
    const a = accountDecisions(new Map([['s', log]]), cleanMade, ['s c3 echo'])
    expect(a.problems).toEqual(['s approval a1: approve by d1 acknowledged by store.decide, logged deny by canceled'])
  })

  it('§9: a decision never logged at all, one logged as the other kind, and one no one made are named', () => {
    const log = [requested('a1', 'c1'), requested('a2', 'c2'), decided('a2', 'c2', 'approve', user('d2')), call('c2'), result('c2'),
      requested('a3', 'c3'), decided('a3', 'c3', 'approve', user('ghost')), call('c3'), result('c3')]
    const a = accountDecisions(new Map([['s', log]]), cleanMade, ['s c2 rm', 's c3 rm'])
    expect(a.problems).toEqual([
      's approval a1: never decided (open at the end)',
      's approval a2: made deny by d2, logged approve',
      's approval a3: logged a decision by user ghost that no one made',
      's approval a1: approve by d1 acknowledged by store.decide, logged nothing',
    ])
  })

  it('L17: an approval decided twice is named; an unacknowledged decision that got logged is counted, not a problem', () => {
    const log = [requested('a1', 'c1'), decided('a1', 'c1', 'approve', user('d1')), decided('a1', 'c1', 'deny', { kind: 'canceled' }), call('c1'), result('c1')]
    const a = accountDecisions(new Map([['s', log]]), [made('s', 'a1', 'approve', 'd1', false)], ['s c1 rm'])
    expect(a.problems).toEqual([expect.stringMatching(/^s approval a1: decided 2 times \(at seqs \d+, \d+\)$/)])
    expect(a.madeUnacknowledgedLogged).toBe(1)
    expect(a.made).toBe(0)
  })

  it('R10: a body run twice, a denied body that ran, an ok result without a run, and a run without a request are named', () => {
    const log = [...clean(), call('c4', 'echo'), result('c4'), call('c5'), result('c5')]
    const runs = ['s c1 rm', 's c1 rm', 's c2 rm', 's c3 echo', 's c5 rm', 's c9 rm', 's c9 rm']
    const a = accountDecisions(new Map([['s', log]]), cleanMade, runs)
    expect(a.problems).toEqual([
      's call c1 (rm): body ran 2 times',
      's call c1 (rm): result ok, body ran 2 times',
      's call c2 (rm): denied, body ran 1 times',
      's call c2 (rm): the log says DENIED, the body ran 1 times',
      's call c4 (echo): result ok, body ran 0 times',
      's call c5 (rm): body ran without a request',
      's c9: body ran 2 times, its call not in the log',
      's c9 (rm): a body ran, its tool/call not in the log',
    ])
    expect({ dup: a.duplicatedRuns, denied: a.deniedRan, unlogged: a.ranUnlogged }).toEqual({ dup: 1, denied: 1, unlogged: 2 })
  })

  it('R10 §8: a body the log says never started, and any body whose tool/call is not in the log (a body waits for its tool/call to be durable), are named', () => {
    const log = [...clean(), requested('a4', 'c4'), decided('a4', 'c4', 'approve', user('d4')), call('c4'), result('c4', 'TOOL_NOT_STARTED')]
    const runs = [...cleanRuns, 's c4 rm', 's c7 rm', 's c8 echo']
    const a = accountDecisions(new Map([['s', log]]), [...cleanMade, made('s', 'a4', 'approve', 'd4')], runs)
    expect(a.problems).toEqual([
      's call c4 (rm): the log says TOOL_NOT_STARTED, the body ran 1 times',
      's c7 (rm): a body ran, its tool/call not in the log',
      's c8 (echo): a body ran, its tool/call not in the log',
    ])
    expect(a.ranUnlogged).toBe(2)
  })
})
