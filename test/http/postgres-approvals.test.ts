/**
 * Approvals through the AI SDK chat protocol on PostgreSQL (docs/spec/lifecycle.md §9, issue 22): the sessions
 * are run by `runWorkers`, the chat goes through two handler instances with their own pools (as two
 * processes would), the stock AI SDK 6 `Chat`. H8: the parked turn's stream ends at the park (the
 * worker hands the lease back); the answers posted through the OTHER instance become
 * `store.decide`; the worker logs them, runs the approved body once, denies the other (DENIED),
 * and the same message goes on to the end; a resend of the same answers is not an error.
 */
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai6'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { LogEvent } from '../../events/envelope.js'
import { sessionHandler } from '../../http/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { postgresStore, runWorkers } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll } from '../stores/postgres/helpers.js'
import { NodeChat } from './chat-client.js'
import { allow, serve, until } from './helpers.js'

afterAll(async () => { await dropAll() })

const FINAL = 'One paid, one denied.'
type ToolPart = { type: string; state: string; input?: { cents: number }; approval?: { id: string; approved?: boolean; reason?: string } }
const tools = (m: UIMessage | undefined): ToolPart[] => (m?.parts ?? []).filter((p) => p.type.startsWith('tool-')) as unknown as ToolPart[]
const texts = (m: UIMessage | undefined): string => (m?.parts ?? []).filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')

describe('approvals through the AI SDK 6 Chat with PostgreSQL workers', () => {
  it('H8 an approval request answered through the chat (store.decide through another instance): the approved body runs once, the denied one gets DENIED', async () => {
    const url = await freshDb('httpapprove')
    const storeW = postgresStore({ connectionString: url })
    await storeW.migrate()
    const storeA = postgresStore({ connectionString: url })
    const storeB = postgresStore({ connectionString: url })
    const paid: number[] = []
    const pay = defineTool({
      name: 'pay', description: 'pay an amount', parameters: z.object({ cents: z.number().int() }),
      needsApproval: true,
      execute: (a) => { paid.push(a.cents); return `paid ${a.cents}` },
    }) as AnyTool
    // one model for the session's agents: the worker hands the parked session back, and the
    // agent that takes it up again continues the script
    const model = scriptedModel([{ toolCalls: [{ name: 'pay', args: { cents: 700 } }, { name: 'pay', args: { cents: 80_000 } }] }, { text: FINAL }])
    const workers = runWorkers({ store: storeW, concurrency: 2, leaseMs: 5_000, pollMs: 50, agent: () => ({ tools: [pay], model }) })
    const a = sessionHandler({ chatIdInBody: true, store: storeA, authorize: allow, workers: true, pollMs: 10 })
    const b = sessionHandler({ chatIdInBody: true, store: storeB, authorize: allow, workers: true, pollMs: 10 })
    const sa = await serve(a)
    const sb = await serve(b)
    try {
      const chat = new NodeChat({ id: 'pg-ap-1', api: `${sa.url}/chat` })
      await chat.sendMessage({ text: 'Pay both invoices' })
      expect(chat.status).toBe('ready')
      const requested = tools(chat.messages[1])
      expect(requested.map((p) => [p.state, p.input?.cents])).toEqual([['approval-requested', 700], ['approval-requested', 80_000]])
      // the worker hands a parked session back
      await until(async () => (await storeW.pool.query("SELECT 1 FROM turnlog_sessions WHERE id = 'pg-ap-1' AND lease_owner IS NULL")).rowCount === 1)

      // the person answers in another tab, served by instance B
      const other = new NodeChat({
        id: 'pg-ap-1', api: `${sb.url}/chat`, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
        messages: (await (await fetch(`${sb.url}/chat/pg-ap-1/messages`)).json()) as UIMessage[],
      })
      expect(tools(other.messages[1]).map((p) => p.state)).toEqual(['approval-requested', 'approval-requested'])
      await other.addToolApprovalResponse({ id: requested[0]!.approval!.id, approved: true })
      await other.addToolApprovalResponse({ id: requested[1]!.approval!.id, approved: false, reason: 'over the limit' })
      await until(() => other.status === 'ready' && texts(other.messages[1]) === FINAL)
      expect(tools(other.messages[1]).map((p) => [p.state, p.approval])).toEqual([
        ['output-available', { id: requested[0]!.approval!.id, approved: true }],
        ['output-denied', { id: requested[1]!.approval!.id, approved: false, reason: 'over the limit' }],
      ])
      expect(paid).toEqual([700])
      const stored: LogEvent[] = await readAll(storeW, 'pg-ap-1')
      expect(stored.filter((e) => e.type === 'user/message').length).toBe(1)
      expect(stored.filter((e) => e.type === 'tool/result').map((e) => (e.data as { error?: { code: string } }).error?.code ?? 'ok')).toEqual(['ok', 'DENIED'])
      expect(stored.at(-1)!.type).toBe('turn/end')
      // both instances give the same history, equal to what the answering client holds
      const ha = await (await fetch(`${sa.url}/chat/pg-ap-1/messages`)).json()
      expect(ha).toEqual(JSON.parse(JSON.stringify(other.messages)))
      // the first tab sends the same answers again (it never saw them applied): not an error
      await chat.addToolApprovalResponse({ id: requested[0]!.approval!.id, approved: true })
      await chat.addToolApprovalResponse({ id: requested[1]!.approval!.id, approved: false, reason: 'over the limit' })
      await chat.sendMessage()
      expect(chat.status).toBe('ready')
      expect(chat.error).toBeUndefined()
      expect(texts(chat.messages[1])).toBe(FINAL)
      expect(paid).toEqual([700])
      expect((await readAll(storeW, 'pg-ap-1')).length).toBe(stored.length)
    } finally {
      await sa.close()
      await sb.close()
      await a.close()
      await b.close()
      await workers.stop()
      await storeA.close()
      await storeB.close()
      await storeW.close()
    }
  }, 30_000)
})
