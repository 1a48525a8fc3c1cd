/**
 * `turnlog verify LOG --price MODULE` (issue 25 item 4, L20), through the compiled CLI: the
 * session's price from a module (a `price(model, usage)` function or a `prices` table in USD per
 * million tokens) re-prices a cost budget's end and prints the session's accounting; a price that
 * disagrees with the recorded end is an L20 violation; a bad module is exit 2 with a coded error
 * naming the file and the field. The compiled CLI runs the two exits that cross the process
 * boundary (0 with the accounting line, 2 on a module that does not import), at once; the other
 * cases run the same `run` in-process (each spawn costs seconds on a loaded CI machine).
 */
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { Usage } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { cliMain } from './cli-child.js'
import { cli, tempDir } from './helpers.js'

const tmp = tempDir()
const LOG = join(tmp.dir, 's1.jsonl')
/** 50 tokens a call at a tenth of a cent per token: $0.05 a call; the budget ($0.10) trips at the third request. */
const price = (_model: string, u: Usage) => (u.inputTokens + u.outputTokens) / 1000

function turnlog(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliMain(), ...args], { cwd: tmp.dir, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr })
    })
  })
}

/** The same CLI in-process, in the fixture's directory. */
const inProcess = (args: string[]) => cli(args, { cwd: tmp.dir })

const module = (name: string, source: string): string => {
  writeFileSync(join(tmp.dir, name), source)
  return name
}

beforeAll(async () => {
  const agent = createAgent({
    model: scriptedModel(Array.from({ length: 3 }, (_, i) => ({ text: `answer ${i}`, usage: { inputTokens: 40, outputTokens: 10 } })), { info: { name: 'm1' } }),
    store: jsonlStore(tmp.dir), sessionId: 's1',
    budget: { costUsd: 0.1, scope: 'session', price },
  })
  for (const q of ['one', 'two', 'three']) {
    agent.followup(q)
    await agent.whenIdle()
  }
  await agent.dispose()
  cliMain()
}, 120_000)
afterAll(() => tmp.cleanup())

describe('turnlog verify --price', () => {
  it('L20: the log ends its third turn on the cost budget (the fixture)', async () => {
    const records = readFileSync(LOG, 'utf8').trimEnd().split('\n').slice(1).map((l) => JSON.parse(l) as { type: string; data: { reason?: unknown } })
    const ends = records.filter((e) => e.type === 'turn/end').map((e) => e.data.reason)
    expect(ends).toHaveLength(3)
    expect(ends.at(-1)).toMatchObject({ kind: 'budget', which: 'costUsd', scope: 'session', limit: 0.1, used: 0.1 })
  })

  it('L20: the session\'s own price function holds, with the accounting line; a module that does not import is exit 2 (compiled CLI)', async () => {
    const fn = module('price.mjs', 'export function price(model, u) { return (u.inputTokens + u.outputTokens) / 1000 }\n')
    const syntax = module('syntax.mjs', 'export const = 1\n')
    const [r, bad] = await Promise.all([turnlog(['verify', 's1.jsonl', '--price', fn]), turnlog(['verify', 's1.jsonl', '--price', syntax])])
    expect(bad.code).toBe(2)
    expect(bad.stdout).toBe('')
    expect(bad.stderr).toMatch(/INVALID_ARGUMENT: the price module syntax\.mjs: cannot import it: .* \(.*syntax\.mjs, field --price\)/)
    expect(bad.stderr).toContain('code INVALID_ARGUMENT')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^OK s1\.jsonl: \d+ events, 3 turns, every invariant holds$/)
    expect(lines[1]).toBe('  usage: 80 input + 20 output tokens in 2 model calls, 0 tool calls; cost $0.100000 at price.mjs')
  })

  it('L20: the same price as a table holds', async () => {
    const table = module('table.mjs', "export const prices = { m1: { input: 1000, output: 1000 } }\n")
    const t = await inProcess(['verify', 's1.jsonl', '--price', table])
    expect(t.code).toBe(0)
    expect(t.stdout).toContain('cost $0.100000 at table.mjs')
  })

  it('L20: a price that does not reach the recorded limit is a violation (exit 1); without --price the end\'s own numbers pass', async () => {
    const cheap = module('cheap.mjs', 'export default (model, u) => (u.inputTokens + u.outputTokens) / 2000\n')
    const r = await inProcess(['verify', 's1.jsonl', '--price', cheap])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/L20 at seq \d+: turn ended budget costUsd \(session\) at 0\.1 of 0\.1, but the cost derived so far is 0\.05, below the limit/)
    const plain = await inProcess(['verify', 's1.jsonl'])
    expect(plain.code).toBe(0)
    expect(plain.stdout).not.toContain('usage:')
  })

  it('a table without the model names it as an unknown price; a bad module is exit 2 naming the file and field', async () => {
    const other = module('other.mjs', "export const prices = { m2: { input: 1, output: 1 } }\n")
    const u = await inProcess(['verify', 's1.jsonl', '--price', other])
    // an unknown price counts as the cost limit reached (as the agent counts it): L20 holds on the end's limit, not on its `used`
    expect(u.code).toBe(1)
    expect(u.stdout).toMatch(/L20 at seq \d+: turn ended budget costUsd \(session\) naming used 0\.1, but the cost derived so far is 0/)
    const cases: Array<[string, string, RegExp]> = [
      ['nothing.mjs', 'export const x = 1\n', /the price module nothing\.mjs: it must export `price\(model, usage\)`.*\(.*nothing\.mjs, field --price\)/],
      ['negative.mjs', "export const prices = { m1: { input: -1, output: 1 } }\n", /prices\['m1'\]\.input must be a finite number >= 0 .*got -1 \(.*negative\.mjs, field prices\.m1\.input\)/],
      ['missing.mjs', null as unknown as string, /cannot import it/],
    ]
    for (const [name, src, want] of cases) {
      if (src !== null) module(name, src)
      const r = await inProcess(['verify', 's1.jsonl', '--price', name])
      expect(r.code, name).toBe(2)
      expect(r.stdout, name).toBe('')
      expect(r.stderr, name).toMatch(want)
      expect(r.stderr, name).toContain('code INVALID_ARGUMENT')
    }
  })
})
