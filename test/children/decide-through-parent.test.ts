/**
 * `store.decide` through a parent (docs/spec/lifecycle.md §9, §10; L19): the parent's `approvals()` lists its
 * running child's open requests, so a decision made with the parent's session id and such an
 * approval id (from another store handle: another process on the machine, no agent of its own)
 * is made in the child — logged in the child's log only, with the child's checks and refusals.
 * An id that neither the parent nor a running child holds stays `UNKNOWN_APPROVAL`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { TurnlogError } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { verify } from '../../replay/verify.js'
import { verifyChild } from '../../replay/verify-child.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { defineTool } from '../../tools/define.js'

const CHILD = 'p.c1-1-c1'
const GRANDCHILD = `${CHILD}.c1-1-g1`
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A parent → child (→ grandchild when `depth` 2) family; the deepest one asks to run `rm`. */
function family(dir: string, ran: string[], depth: 1 | 2) {
  const rm = defineTool({
    name: 'rm', description: 'removes a file', parameters: z.object({ path: z.string() }), needsApproval: true,
    execute: ({ path }) => {
      ran.push(path)
      return 'removed'
    },
  })
  const cleaner = defineSubagent({
    name: 'cleaner', description: 'cleans up', parameters: z.object({ task: z.string() }),
    agent: () => ({ model: scriptedModel([{ toolCalls: [{ name: 'rm', args: { path: 'tmp' }, id: 'k1' }] }, { text: 'cleaned' }]), tools: [rm], system: 'cleaner' }),
  })
  const manager = defineSubagent({
    name: 'manager', description: 'delegates', parameters: z.object({ task: z.string() }),
    agent: () => ({ model: scriptedModel([{ toolCalls: [{ name: 'cleaner', args: { task: 'clean tmp' }, id: 'g1' }] }, { text: 'managed' }]), tools: [cleaner], system: 'manager' }),
  })
  const top = depth === 1 ? cleaner : manager
  return createAgent({
    model: scriptedModel([{ toolCalls: [{ name: top.name, args: { task: 'clean up' }, id: 'c1' }] }, { text: 'parent done' }]),
    tools: [top], store: jsonlStore(dir), sessionId: 'p', system: 'parent',
  })
}

async function readAll(dir: string, id: string): Promise<{ header: unknown; events: LogEvent[] }> {
  const r = await jsonlStore(dir).open(id, 'read')
  const events: LogEvent[] = []
  for await (const e of r.events()) events.push(e)
  await r.close?.()
  return { header: r.header, events }
}

/** Waits (bounded) until each of `parents` logged `child/spawned` and `holder` logged the request. */
async function durable(dir: string, parents: string[], holder: string, approvalId: string): Promise<void> {
  const has = async (id: string, f: (e: LogEvent) => boolean) => (await readAll(dir, id).catch(() => ({ events: [] as LogEvent[] }))).events.some(f)
  for (let i = 0; i < 500; i++) {
    let ok = await has(holder, (e) => e.type === 'tool/approval-requested' && (e as EventOf<'tool/approval-requested'>).data.approvalId === approvalId)
    for (const p of parents) ok = ok && await has(p, (e) => e.type === 'child/spawned')
    if (ok) return
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`the family's events did not become durable (${holder})`)
}

const text = (e: EventOf<'tool/result'>) => e.data.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')

describe('store.decide through a parent (docs/spec/lifecycle.md §10)', () => {
  it.each([
    [1, CHILD, 'cleaned'],
    [2, GRANDCHILD, 'managed'],
  ] as const)('L19: depth %i: jsonlStore.decide(parent, id of a running descendant\'s request) is made in %s; the body runs once; one result; every log verifies', async (depth, holder, answer) => {
    const dir = mkdtempSync(join(tmpdir(), 'subdec-'))
    dirs.push(dir)
    const ran: string[] = []
    const parent = family(dir, ran, depth)
    try {
      parent.followup('clean up')
      expect(await parent.whenSettled()).toBe('parked')
      const [open] = parent.approvals()
      expect(open).toMatchObject({ name: 'rm', session: holder })
      // another handle of the store (another process on the machine) sees what is durable: wait for
      // the family's `child/spawned` events and the request to be written (live state runs ahead)
      await durable(dir, depth === 1 ? ['p'] : ['p', CHILD], holder, open!.approvalId)
      const d = await jsonlStore(dir).decide('p', open!.approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' }, waitMs: 5000 })
      expect([d.sessionId, d.callId, d.decision]).toEqual([holder, 'k1', { kind: 'approve' }])
      await parent.whenIdle()
      await parent.flush()
      expect(ran).toEqual(['tmp'])
      const results = parent.events.filter((e) => e.type === 'tool/result') as EventOf<'tool/result'>[]
      expect(results.map(text)).toEqual([answer])
      expect(parent.events.some((e) => e.type.startsWith('tool/approval'))).toBe(false)
      expect(verify(parent.events).violations).toEqual([])
      const h = await readAll(dir, holder)
      const decided = h.events.filter((e) => e.type === 'tool/approval-decided') as EventOf<'tool/approval-decided'>[]
      expect(decided.map((e) => [e.data.approvalId, e.data.by])).toEqual([[open!.approvalId, { kind: 'user', id: 'ann' }]])
      expect(verify(h.events).violations).toEqual([])
      const c = await readAll(dir, CHILD)
      expect(verifyChild('p', parent.events, c.header as never)).toEqual([])
    } finally {
      await parent.dispose()
    }
  })

  it('an approval id that neither the parent nor a running child holds stays UNKNOWN_APPROVAL (nothing claimed)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'subdec-'))
    dirs.push(dir)
    const parent = family(dir, [], 1)
    try {
      parent.followup('clean up')
      expect(await parent.whenSettled()).toBe('parked')
      const err = await jsonlStore(dir).decide('p', 'no-such-approval', { kind: 'approve' }).catch((e: unknown) => e)
      expect(TurnlogError.is(err, 'UNKNOWN_APPROVAL')).toBe(true)
      expect((err as TurnlogError).message).toContain('session p')
      expect(parent.approvals()).toHaveLength(1)
    } finally {
      await parent.dispose()
    }
  })
})
