/** `turnlog demo`: the scripted session runs, prints its replay, and its log verifies and round-trips. */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DEMO_FORBIDDEN_WORD, runDemoSession } from '../../cli/demo-session.js'
import type { LogEvent } from '../../events/index.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { cli, tempDir } from './helpers.js'

type D = Record<string, any>

describe('the demo session', () => {
  it('writes a valid log with tools, a steer while tools run, a blocked prompt and a retried failure', async () => {
    const { header, events } = await runDemoSession({ searchDelayMs: 5, startTime: 1764450000000, sessionId: 'demo-test' })
    expect(header).toEqual({ type: 'session', format: 1, id: 'demo-test', createdAt: 1764450000000 })
    expect(verify(events).violations).toEqual([])
    const of = (type: string) => events.filter((e) => e.type === type)
    const d = (e: LogEvent) => e.data as D

    // tools: three calls in step 1.1 (weather ×2, the slow search), one weather call in the retry turn
    expect(of('tool/call').map((e) => `${d(e).turn}.${d(e).step} ${d(e).name}`))
      .toEqual(['1.1 weather', '1.1 weather', '1.1 search', '4.1 weather'])
    expect(of('tool/result').every((e) => d(e).error === undefined)).toBe(true)

    // steering: the next-step splice lands after the search call and before step 1.1 ends,
    // and the steer enters step 1.2 as a user message
    const steer = events.find((e) => e.type === 'agent/inbox/spliced' && d(e).target === 'next-step' && d(e).inserted.length === 1)!
    const search = of('tool/call').find((e) => d(e).name === 'search')!
    const end11 = of('step/end').find((e) => d(e).turn === 1 && d(e).step === 1)!
    expect(steer.seq).toBeGreaterThan(search.seq)
    expect(steer.seq).toBeLessThan(end11.seq)
    const steerId = d(steer).inserted[0].id
    const entered = of('user/message').find((e) => d(e).message.id === steerId)!
    const start12 = of('step/start').find((e) => d(e).turn === 1 && d(e).step === 2)!
    expect(entered.seq).toBeGreaterThan(start12.seq)

    // the forbidden prompt: claimed by turn 2, which ends blocked with no step; never on the surface
    const ends = of('turn/end').map((e) => `${d(e).turn} ${d(e).reason.kind}${d(e).reason.failure ? ` ${d(e).reason.failure.code}` : ''}`)
    expect(ends).toEqual(['1 completed', '2 blocked', '3 error RATE_LIMIT', '4 completed'])
    expect(of('step/start').filter((e) => d(e).turn === 2)).toEqual([])
    expect(of('user/message').some((e) => JSON.stringify(d(e).message).includes(DEMO_FORBIDDEN_WORD))).toBe(false)

    // the transient failure: step 3.1 failed, llm/retry attempt 1, turn 4 retries turn 3
    expect(of('step/end').filter((e) => d(e).outcome.kind === 'failed').map((e) => d(e).outcome.failure.code)).toEqual(['RATE_LIMIT'])
    expect(of('llm/retry').map((e) => [d(e).turn, d(e).step, d(e).attempt, d(e).failure.code])).toEqual([[3, 1, 1, 'RATE_LIMIT']])
    expect(of('turn/start').map((e) => d(e).cause ?? null)).toEqual([null, null, null, { kind: 'retry', of: 3 }])
  })

  it('the steer enters while the tools run even with a zero search delay (no race with a timer; L5 order)', async () => {
    // the search waits for the steer before its own delay, so the steer's splice is logged before
    // the search's tool/result on any machine load (a bare timer raced it and lost under load)
    for (let i = 0; i < 3; i++) {
      const { events } = await runDemoSession({ searchDelayMs: 0, startTime: 1764450000000, sessionId: `zero-${i}` })
      const steer = events.find((e) => e.type === 'agent/inbox/spliced' && (e.data as { target: string; inserted: unknown[] }).target === 'next-step' && (e.data as { inserted: unknown[] }).inserted.length === 1)
      const search = events.find((e) => e.type === 'tool/result' && (e.data as { callId: string }).callId === 'call_3')
      expect(steer, 'the steer was logged').toBeDefined()
      expect(steer!.seq).toBeLessThan(search!.seq)
    }
  })

  it('is deterministic: two runs give the same events', async () => {
    const opts = { searchDelayMs: 5, startTime: 1764450000000, sessionId: 'same' }
    const a = await runDemoSession(opts)
    const b = await runDemoSession(opts)
    expect(b.events).toEqual(a.events)
  })
})

describe('turnlog demo', () => {
  const { dir, cleanup } = tempDir()
  afterAll(cleanup)

  it('prints the replay of the session, its summary and a verify OK line', async () => {
    const r = await cli(['demo'])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    const out = r.stdout
    expect(out).toMatch(/→ weather\(\{"city":"Paris"\}\) {2}call_1/)
    expect(out).toMatch(/→ search\(\{"query":"[^"]+"\}\) {2}call_3/)
    expect(out).toMatch(/thinking: Two cities/)
    expect(out).toMatch(/tool {7}search call_3 ← \{"query"/)
    expect(out).toMatch(/user {7}Keep it to one sentence, please\. m2/)
    expect(out).toMatch(new RegExp(`prompt {5}By the way, my ${DEMO_FORBIDDEN_WORD} is`))
    expect(out).toContain('■ turn 2 ended: blocked (agent/pre-step rejected the prompt)')
    expect(out).toMatch(/└ step 1: failed RATE_LIMIT: /)
    expect(out).toMatch(/↻ retry 1 of step 3\.1 after 250 ms \(RATE_LIMIT\)/)
    expect(out).toContain('Turn 4 (retry of turn 3)')
    expect(out).toContain('  turns        4 (2 completed, 1 blocked, 1 error)')
    expect(out).toContain('  tool calls   4')
    expect(out).toContain('  failures     1')
    expect(out).toContain('  retries      1')
    expect(out).toMatch(/verify OK: \d+ events, every invariant holds/)
  })

  it('--store writes a JSONL log that verifies and replays to the same transcript', async () => {
    const path = join(dir, 'demo.jsonl')
    const r = await cli(['demo', '--store', path])
    expect(r.code).toBe(0)
    expect(existsSync(path)).toBe(true)
    const m = /wrote (\d+) events \(\d+ bytes\) to /.exec(r.stdout)
    expect(m).not.toBeNull()
    const log = await readLog(path)
    expect(log.header.checksums).toBe('crc32')
    expect(log.events).toHaveLength(Number(m![1]))
    expect(readFileSync(path, 'utf8').split('\n').slice(1, -1).every((l) => /,"crc":"[0-9a-f]{8}"\}$/.test(l))).toBe(true)

    const v = await cli(['verify', path])
    expect(v.code).toBe(0)
    expect(v.stdout).toContain(`: ${log.events.length} events, 4 turns, every invariant holds`)

    // the same printer: the demo's transcript and summary equal `turnlog replay` of the stored log
    const rep = await cli(['replay', path])
    expect(rep.code).toBe(0)
    const section = (s: string) => s.slice(s.indexOf('\nTurn 1 '), s.indexOf('  events  '))
    expect(section(rep.stdout).length).toBeGreaterThan(500)
    expect(section(rep.stdout)).toBe(section(r.stdout))
  })

  it('refuses to overwrite an existing --store file unless --force', async () => {
    const path = join(dir, 'twice.jsonl')
    expect((await cli(['demo', '--store', path])).code).toBe(0)
    const before = readFileSync(path, 'utf8')
    const again = await cli(['demo', '--store', path])
    expect(again.code).toBe(2)
    expect(again.stderr).toContain('FILE_EXISTS')
    expect(again.stderr).toContain('--force')
    expect(readFileSync(path, 'utf8')).toBe(before)
    const forced = await cli(['demo', '--store', path, '--force'])
    expect(forced.code).toBe(0)
    expect((await cli(['verify', path])).code).toBe(0)
  })
})
