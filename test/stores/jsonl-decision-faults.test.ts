/**
 * JSONL decision claims under injected faults (docs/spec/lifecycle.md §9; stores/jsonl/decisions.ts through the
 * store's `StoreFs.claims`; docs/spec/reliability.md "Faults"). A claim is: mkdir, create a temp file,
 * write, fsync, close, link it to its final name (first link wins), fsync the directory, unlink
 * the temp file. A fault at any step gives the decider a coded error and leaves nothing
 * half-written for the owner to read; a retry then succeeds; two deciders keep exactly one winner
 * whatever step one of them is at; the owner's watch survives torn, garbage and special files.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TurnlogError, type EventOf, type LogEvent } from '../../events/index.js'
import { readLog } from '../../replay/read-log.js'
import { resumeAgent } from '../../replay/index.js'
import { verify } from '../../replay/verify.js'
import { claimDecision, decisionFileName, decisionsDir, readDecisions } from '../../stores/jsonl/decisions.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { DecisionRecord } from '../../stores/types.js'
import { countingTool } from '../approvals/helpers.js'
import { faultyFs, type ClaimStep } from './faulty-fs.js'
import { parkedSessions, resumeRuns, rmModel } from './parked-session.js'

const parked = parkedSessions('turnlog-claimfault-')
let approvalId = ''
beforeAll(async () => {
  approvalId = await parked.setup()
})
afterAll(() => parked.cleanup())
const parkedCopy = () => parked.copy()
const model = rmModel

const decidedOf = (ev: readonly LogEvent[]) => ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')
const logged = async (dir: string) => decidedOf((await readLog(join(dir, 's.jsonl'))).events as LogEvent[])
/** What the owner's watch would see: the claims, and every error reading them. */
function ownerView(dir: string): { recs: Map<string, DecisionRecord>; errors: unknown[] } {
  const errors: unknown[] = []
  return { recs: readDecisions(dir, 's', (e) => errors.push(e)), errors }
}
const temps = async (dir: string) => (await readdir(decisionsDir(dir, 's')).catch(() => [] as string[])).filter((n) => n.endsWith('.tmp'))
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5))
}

/** Each step of a claim, the fault injected there and the code the decider must get. */
const STEPS: Array<{ step: ClaimStep; errno: string; code: 'IO_ERROR' | 'FSYNC_FAILED'; partial?: number; linked: boolean }> = [
  { step: 'mkdir', errno: 'EACCES', code: 'IO_ERROR', linked: false },
  { step: 'create', errno: 'EMFILE', code: 'IO_ERROR', linked: false },
  { step: 'write', errno: 'ENOSPC', code: 'IO_ERROR', partial: 17, linked: false },
  { step: 'sync', errno: 'EIO', code: 'FSYNC_FAILED', linked: false },
  { step: 'close', errno: 'EIO', code: 'IO_ERROR', linked: false },
  { step: 'link', errno: 'EIO', code: 'IO_ERROR', linked: false },
  { step: 'syncDir', errno: 'EIO', code: 'FSYNC_FAILED', linked: true },
]

describe('a fault at each step of a JSONL decision claim (R10, L18)', () => {
  it('R10 L18: the decider gets a coded error naming the claim; nothing half-written is visible; a retry succeeds, is logged once, and the resumed body runs once', async () => {
    for (const s of STEPS) {
      const dir = await parkedCopy()
      const ffs = faultyFs()
      const store = jsonlStore(dir, { fs: ffs })
      ffs.failClaim(s.step, s.errno, { partial: s.partial ?? 0 })
      const err = await store.decide('s', approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } }).catch((e: unknown) => e)
      expect(TurnlogError.is(err), `${s.step}: ${String(err)}`).toBe(true)
      const e = err as TurnlogError
      expect([s.step, e.code]).toEqual([s.step, s.code])
      expect(e.file, s.step).toContain('s.decisions')
      expect(e.info, s.step).toMatchObject({ errno: s.errno })
      expect(e.sessionId).toBe('s')
      // nothing half-written for the owner: no claim, or the complete one (linked before the fault)
      const view = ownerView(dir)
      expect(view.errors, s.step).toEqual([])
      expect([...view.recs.values()].map((r) => [r.decision, r.by]), s.step).toEqual(s.linked ? [[{ kind: 'approve' }, { kind: 'user', id: 'ann' }]] : [])
      expect(await temps(dir), s.step).toEqual([])
      expect(await logged(dir), s.step).toEqual([]) // the decider stopped before logging
      // the retry succeeds (after the directory fsync fault: its own claim, the same decision)
      const ok = await store.decide('s', approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } })
      expect(ok.seq, s.step).not.toBeNull()
      expect((await logged(dir)).map((d) => [d.data.approvalId, d.data.decision, d.data.by]), s.step)
        .toEqual([[approvalId, { kind: 'approve' }, { kind: 'user', id: 'ann' }]])
      expect(await resumeRuns(dir), s.step).toEqual(['b'])
    }
  }, 60_000)

  it('R10: a temp file that cannot be removed after the claim is harmless: the decision stands and is logged; the leftover is never read as a claim', async () => {
    const dir = await parkedCopy()
    const ffs = faultyFs()
    ffs.failClaim('unlink', 'EIO', { match: '.tmp' })
    const ok = await jsonlStore(dir, { fs: ffs }).decide('s', approvalId, { kind: 'deny', reason: 'no' })
    expect(ok.seq).not.toBeNull()
    expect(await temps(dir)).toHaveLength(1)
    const view = ownerView(dir)
    expect(view.errors).toEqual([])
    expect([...view.recs.keys()]).toEqual([approvalId])
    expect(await resumeRuns(dir)).toEqual([])
  })

  it('R10: a claim that returned survives a crash right after; a claim cut by a crash at any step is absent or complete, never torn', async () => {
    function rec(id: string): DecisionRecord {
      return { approvalId, decision: { kind: 'approve', arguments: '{"path":"b"}' }, by: { kind: 'user', id }, time: 1 }
    }
    // acknowledged, then the machine dies: the directory was fsynced, the file was fsynced
    {
      const dir = await parkedCopy()
      const ffs = faultyFs()
      expect(claimDecision(dir, 's', rec('ann'), ffs)).toBeNull()
      await ffs.crash({ keep: () => 0 })
      const view = ownerView(dir)
      expect(view.errors).toEqual([])
      expect(view.recs.get(approvalId)).toEqual(rec('ann'))
    }
    for (const s of STEPS) {
      for (const keep of [0, 1]) {
        const dir = await parkedCopy()
        const ffs = faultyFs()
        ffs.failClaim(s.step, s.errno, { partial: s.partial ?? 0 })
        expect(() => claimDecision(dir, 's', rec('bob'), ffs), s.step).toThrow(TurnlogError)
        await ffs.crash({ keep: (n) => Math.floor(n * keep) })
        const view = ownerView(dir)
        expect(view.errors, s.step).toEqual([])
        const got = view.recs.get(approvalId)
        if (got !== undefined) expect(got, s.step).toEqual(rec('bob'))
        // and the retry after the restart wins
        expect(claimDecision(dir, 's', rec('bob'), faultyFs()), s.step).toBeNull()
      }
    }
  })

  it('L18 R10: first decision wins under faults: another decider claiming between any two steps of this one leaves exactly one winner; the loser is told APPROVAL_DECIDED; the winner is what runs', async () => {
    // every step, with and without a fault there (all 14 cases: exhaustive, not sampled)
    for (const s of STEPS) {
      for (const fault of [false, true]) {
        const dir = await parkedCopy()
        const ffs = faultyFs()
        const store = jsonlStore(dir, { fs: ffs })
        let other: DecisionRecord | null | undefined
        const bob: DecisionRecord = { approvalId, decision: { kind: 'deny', reason: 'bob says no' }, by: { kind: 'user', id: 'bob' }, time: 2 }
        // the other decider (another process: the plain file system) claims right before this step
        ffs.beforeClaim(s.step, () => {
          other = claimDecision(dir, 's', bob)
        })
        if (fault) ffs.failClaim(s.step, s.errno, { partial: s.partial ?? 0 })
        const ann = () => store.decide('s', approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } })
        let first = await ann().then(() => 'ok', (e: unknown) => (TurnlogError.is(e) ? e.code : String(e)))
        expect(other).not.toBeUndefined() // the other decider did run in between
        // ann's claim was linked before bob's only when bob came at the directory fsync
        const annFirst = s.step === 'syncDir'
        const label = `${s.step}${fault ? ' + fault' : ''}`
        if (fault) {
          expect(first, label).toBe(s.code) // the fault reached the decider, coded
          first = await ann().then(() => 'ok', (e: unknown) => (TurnlogError.is(e) ? e.code : String(e)))
        }
        expect(first, label).toBe(annFirst ? 'ok' : 'APPROVAL_DECIDED')
        expect(other === null).toBe(!annFirst) // bob was told he won exactly when ann was not
        const view = ownerView(dir)
        expect(view.errors).toEqual([])
        expect(view.recs.get(approvalId)?.by).toEqual({ kind: 'user', id: annFirst ? 'ann' : 'bob' })
        // the winner's decision is the one logged and run (bob's is logged by the resumed owner)
        expect(await resumeRuns(dir)).toEqual(annFirst ? ['b'] : [])
        expect((await logged(dir)).map((d) => d.data.by)).toEqual([{ kind: 'user', id: annFirst ? 'ann' : 'bob' }])
      }
    }
  }, 60_000)

  it('R10: a read fault on the winning claim is IO_ERROR naming it, and the winner stands (never moved aside, never overwritten)', async () => {
    const dir = await parkedCopy()
    const bob: DecisionRecord = { approvalId, decision: { kind: 'deny' }, by: { kind: 'user', id: 'bob' }, time: 2 }
    expect(claimDecision(dir, 's', bob)).toBeNull()
    const ffs = faultyFs()
    ffs.failClaim('readFile', 'EIO')
    const err = await jsonlStore(dir, { fs: ffs }).decide('s', approvalId, { kind: 'approve' }).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'IO_ERROR', file: join(decisionsDir(dir, 's'), decisionFileName(approvalId)), info: { errno: 'EIO' } })
    expect(ownerView(dir).recs.get(approvalId)).toEqual(bob)
    const again = await jsonlStore(dir, { fs: ffs }).decide('s', approvalId, { kind: 'approve' }).catch((e: unknown) => e)
    expect(TurnlogError.is(again, 'APPROVAL_DECIDED')).toBe(true)
  })
})

describe('the owner reading claims survives what it finds (R9, L18)', () => {
  it('R9 L18: torn, garbage, oversized and special claim files: a coded error naming each, once; nothing applied; the agent stays parked; a real decision then goes through beside the torn file, which is left as it is', async () => {
    const dir = await parkedCopy()
    const d = decisionsDir(dir, 's')
    await mkdir(d, { recursive: true })
    const ffs = faultyFs()
    const { tool, runs } = countingTool('rm', { needsApproval: true })
    const agent = await resumeAgent({ store: jsonlStore(dir, { fs: ffs }), sessionId: 's', model: model(), tools: [tool], system: 'sys' })
    expect(agent.status).toBe('parked')
    const errors: unknown[] = []
    agent.on('agent/error', (e) => errors.push(e.error))
    const full = `${JSON.stringify({ approvalId, decision: { kind: 'approve' }, by: { kind: 'user', id: 'eve' }, time: 3 })}\n`
    const torn = full.slice(0, 40)
    const files: Record<string, string> = {
      [decisionFileName(approvalId)]: torn, // a half-written approve of the open approval
      'a-garbage.json': '\u0000\u0001 not json at all',
      'a-shape.json': '{"approvalId":"shape","decision":{"kind":"maybe"}}\n',
      'a-other.json': full, // a valid record under another approval's name
    }
    // each placed whole (written beside, then renamed in), so the watch sees one content per file
    const place = async (n: string, data: string | Buffer) => {
      await writeFile(join(dir, n), data)
      await rename(join(dir, n), join(d, n))
    }
    for (const [n, text] of Object.entries(files)) await place(n, text)
    await place('a-huge.json', Buffer.alloc(17 * 1024 * 1024, 0x20))
    await mkdir(join(d, 'a-dir.json'))
    execFileSync('mkfifo', [join(d, 'a-fifo.json')])
    const names = [...Object.keys(files), 'a-huge.json', 'a-dir.json', 'a-fifo.json']
    await until(() => errors.length >= names.length)
    // two more full scans: nothing is reported twice
    const scans = () => ffs.claimCalls.filter((c) => c.startsWith('readdir')).length
    const after = scans()
    await until(() => scans() >= after + 2)
    expect(errors).toHaveLength(names.length)
    for (const err of errors) {
      expect(TurnlogError.is(err), String(err)).toBe(true)
      expect(['INVALID_EVENT', 'IO_ERROR']).toContain((err as TurnlogError).code)
    }
    expect(errors.map((e) => (e as TurnlogError).file).sort()).toEqual(names.map((n) => join(d, n)).sort())
    // nothing applied: the approval is still open, nothing logged, the agent parked
    expect(agent.status).toBe('parked')
    expect(agent.approvals().map((a) => a.approvalId)).toEqual([approvalId])
    expect(decidedOf(agent.events as LogEvent[])).toEqual([])
    expect(runs).toEqual([])
    // a person decides: the unreadable file is left as it is (bytes untouched), the claim takes the next name and wins
    await agent.decide(approvalId, { kind: 'deny', reason: 'no' })
    await agent.whenIdle()
    await agent.dispose()
    expect(runs).toEqual([])
    expect(decidedOf(agent.events as LogEvent[]).map((e) => e.data.decision)).toEqual([{ kind: 'deny', reason: 'no' }])
    expect(await readFile(join(d, decisionFileName(approvalId)), 'utf8')).toBe(torn)
    expect(JSON.parse(await readFile(join(d, decisionFileName(approvalId, 1)), 'utf8'))).toMatchObject({ decision: { kind: 'deny', reason: 'no' } })
    expect(ownerView(dir).recs.get(approvalId)?.decision).toEqual({ kind: 'deny', reason: 'no' })
    expect(verify((await readLog(join(dir, 's.jsonl'))).events as LogEvent[]).violations).toEqual([])
  }, 60_000)

  it('R9: a read fault on a claim the owner watches is IO_ERROR naming the file; the next scan applies the decision once', async () => {
    const dir = await parkedCopy()
    const ffs = faultyFs()
    const { tool, runs } = countingTool('rm', { needsApproval: true })
    const agent = await resumeAgent({ store: jsonlStore(dir, { fs: ffs }), sessionId: 's', model: model(), tools: [tool], system: 'sys' })
    const errors: unknown[] = []
    agent.on('agent/error', (e) => errors.push(e.error))
    ffs.failClaim('readFile', 'EIO', { match: decisionFileName(approvalId) })
    expect(claimDecision(dir, 's', { approvalId, decision: { kind: 'approve' }, by: { kind: 'user', id: 'ann' }, time: 5 })).toBeNull()
    await agent.whenIdle()
    await agent.dispose()
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ code: 'IO_ERROR', file: join(decisionsDir(dir, 's'), decisionFileName(approvalId)), info: { errno: 'EIO' } })
    expect(runs).toEqual(['b'])
    expect(decidedOf(agent.events as LogEvent[]).map((e) => e.data.by)).toEqual([{ kind: 'user', id: 'ann' }])
  }, 30_000)

  it('L18 R10: an unreadable file in the way of two deciders with no owner running: left as it is, exactly one wins the next name, it is logged and run once', async () => {
    const dir = await parkedCopy()
    const d = decisionsDir(dir, 's')
    await mkdir(d, { recursive: true })
    await writeFile(join(d, decisionFileName(approvalId)), '{"approvalId":')
    const ffs = faultyFs()
    // bob (another process) steps over the same file and claims right before ann links
    let bob: DecisionRecord | null | undefined
    ffs.beforeClaim('link', () => {
      bob = claimDecision(dir, 's', { approvalId, decision: { kind: 'deny' }, by: { kind: 'user', id: 'bob' }, time: 2 })
    })
    const err = await jsonlStore(dir, { fs: ffs }).decide('s', approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } }).catch((e: unknown) => e)
    expect(bob).toBeNull()
    expect(TurnlogError.is(err, 'APPROVAL_DECIDED')).toBe(true)
    expect(await readFile(join(d, decisionFileName(approvalId)), 'utf8')).toBe('{"approvalId":')
    expect(ownerView(dir).recs.get(approvalId)?.by).toEqual({ kind: 'user', id: 'bob' })
    // a later decider finds bob's claim over the unreadable one
    const late = await jsonlStore(dir).decide('s', approvalId, { kind: 'approve' }).catch((e: unknown) => e)
    expect(TurnlogError.is(late, 'APPROVAL_DECIDED')).toBe(true)
    expect(await resumeRuns(dir)).toEqual([])
    expect((await logged(dir)).map((x) => x.data.by)).toEqual([{ kind: 'user', id: 'bob' }])
  })

  it('R10: an unreadable file in the way of a decider with no owner running: the decision takes the next name, is logged and run once', async () => {
    const dir = await parkedCopy()
    const d = decisionsDir(dir, 's')
    await mkdir(d, { recursive: true })
    await writeFile(join(d, decisionFileName(approvalId)), '{"approvalId":')
    const ok = await jsonlStore(dir, { fs: faultyFs() }).decide('s', approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } })
    expect(ok.seq).not.toBeNull()
    expect(await readFile(join(d, decisionFileName(approvalId)), 'utf8')).toBe('{"approvalId":')
    expect(await resumeRuns(dir)).toEqual(['b'])
  })
})
