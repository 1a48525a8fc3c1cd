/**
 * An agent process SIGKILLed while an MCP call runs (docs/spec/lifecycle.md §8, §12): resumed from
 * its JSONL store in another process, an idempotent tool's call is issued again, once, and its
 * result committed in place (one `tool/call`, one `tool/result`); any other tool's call gets
 * `TOOL_OUTCOME_UNKNOWN` and never reaches the server again. The server is a real MCP server on
 * loopback run by this test (test/mcp/fixture-server.ts); the agent is a real child process
 * (test/mcp/children/mcp-call-child.ts).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { resumeAgent, verify } from '../../replay/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { mcpTools } from '../../mcp/index.js'
import { startHttpServer } from './fixture-server.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const CHILD = fileURLToPath(new URL('./children/mcp-call-child.ts', import.meta.url))
const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!()
})

async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (await cond()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`never: ${what}`)
}

/** Runs the child until the server holds its call and the log holds its tool/call, then SIGKILLs it. */
async function killedWhileCalling(tool: string): Promise<{ dir: string; s: Awaited<ReturnType<typeof startHttpServer>> }> {
  const s = await startHttpServer()
  cleanup.push(() => s.close())
  s.state.hold = true
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-mcp-kill-'))
  cleanup.push(() => rm(dir, { recursive: true, force: true }))
  const p = spawn(process.execPath, ['--import', 'tsx', CHILD, s.url, dir, 's', tool], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  p.stdout.on('data', (d: Buffer) => (out += d.toString()))
  p.stderr.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise<string | null>((resolve) => p.on('exit', (_code, signal) => resolve(signal)))
  await until(() => s.state.calls.length === 1, `the server holds the ${tool} call (${out})`)
  await until(async () => (await readFile(join(dir, 's.jsonl'), 'utf8').catch(() => '')).includes('"tool/call"'), 'the log holds the tool/call')
  p.kill('SIGKILL')
  expect(await exited).toBe('SIGKILL')
  s.state.release()
  return { dir, s }
}

async function resumed(dir: string, url: string): Promise<readonly LogEvent[]> {
  const tools = await mcpTools({ servers: { fx: { url } } })
  cleanup.push(() => tools.close())
  const agent = await resumeAgent({
    store: jsonlStore(dir), sessionId: 's', system: 'sys', tools: [...tools],
    model: scriptedModel([{ text: 'done' }], { info: { name: 'scripted' } }),
  })
  await agent.whenIdle()
  await agent.dispose()
  return (await readLog(join(dir, 's.jsonl'))).events as LogEvent[]
}

const of = (events: readonly LogEvent[], type: string) => events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>)

describe('SIGKILL while an MCP call runs', () => {
  it('L5/L6: an idempotent tool (idempotentHint) is issued again on resume, once: one tool/call, one tool/result with the new answer', async () => {
    const { dir, s } = await killedWhileCalling('slow_count')
    const events = await resumed(dir, s.url)
    expect(s.state.calls).toEqual(['slow_count', 'slow_count'])
    expect(of(events, 'tool/call').map((c) => c.callId)).toEqual(['c1'])
    const results = of(events, 'tool/result')
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ callId: 'c1', message: { content: [{ type: 'text', text: 'counted 2' }] } })
    expect(results[0]!.error).toBeUndefined()
    expect(of(events, 'turn/end').map((t) => t.reason.kind)).toEqual(['completed'])
    expect(verify(events).violations).toEqual([])
  }, 60_000)

  it('L5/L6: any other tool gets TOOL_OUTCOME_UNKNOWN on resume and never reaches the server again', async () => {
    const { dir, s } = await killedWhileCalling('slow_write')
    const events = await resumed(dir, s.url)
    expect(s.state.calls).toEqual(['slow_write'])
    const results = of(events, 'tool/result')
    expect(results).toHaveLength(1)
    expect(results[0]!.error.code).toBe('TOOL_OUTCOME_UNKNOWN')
    expect(verify(events).violations).toEqual([])
  }, 60_000)
})
