/**
 * Issue 25 "done when": the README section "Sub-agents, budgets, wakeups" works as written. The
 * packed-app test (readme-app.test.ts) runs every block and checks it exits 0; this one runs the
 * section's three blocks as written (only the package imports pointed at this repository's
 * sources) and checks that what they print is what the README's comments say they print.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT, tempDir } from '../cli/helpers.js'

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const SECTION = README.slice(README.indexOf('## Sub-agents, budgets, wakeups'), README.indexOf('\n## ', README.indexOf('## Sub-agents, budgets, wakeups') + 5))
const BLOCKS = [...SECTION.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)
const tmp = tempDir()
// the blocks' other imports (zod) resolve as in an app that installed them
symlinkSync(join(ROOT, 'node_modules'), join(tmp.dir, 'node_modules'))
afterAll(() => tmp.cleanup())

const IMPORTS: Record<string, string> = {
  turnlog: 'index.ts', 'turnlog/replay': 'replay/index.ts', 'turnlog/stores/jsonl': 'stores/jsonl/index.ts',
}

/**
 * Runs the blocks with tsx in a scratch directory, in README order, in one process (one compile of
 * the sources: each block is its own module, imported in turn); their package imports read this
 * repository's sources. Returns what each printed.
 */
function runAll(): string[] {
  BLOCKS.forEach((b, i) => {
    const code = b.replace(/from '(turnlog[^']*)'/g, (_m, name: string) => {
      const file = IMPORTS[name]
      if (file === undefined) throw new Error(`the README imports ${name}: map it in IMPORTS`)
      return `from '${join(ROOT, file)}'`
    })
    writeFileSync(join(tmp.dir, `block-${i}.mts`), code)
  })
  const runner = join(tmp.dir, 'run.mts')
  writeFileSync(runner, BLOCKS.map((_b, i) => `console.log('@@block ${i}')\nawait import('./block-${i}.mts')\n`).join(''))
  const r = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsx'), [runner], { cwd: tmp.dir, encoding: 'utf8', timeout: 120_000 })
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(0)
  return r.stdout.split(/@@block \d+\n/).slice(1)
}
let outputs: string[] | undefined
const run = (i: number): string => (outputs ??= runAll())[i]!

/** The lines the README says a block prints: each must stand in the block as a `// …` comment. */
function said(i: number, lines: string[]): string[] {
  for (const l of lines) expect(BLOCKS[i], l).toContain(`// ${l}`)
  return lines
}

describe('README "Sub-agents, budgets, wakeups", as written', () => {
  it('has the three blocks (sub-agents, budgets, wakeups)', () => {
    expect(BLOCKS).toHaveLength(3)
    expect(BLOCKS[0]).toContain('defineSubagent')
    expect(BLOCKS[1]).toContain('budget')
    expect(BLOCKS[2]).toContain('agent.schedule(')
  })

  it('L19: the sub-agent block prints the child/spawned and the two sessions it says', () => {
    const out = run(0).trimEnd().split('\n')
    expect(out).toEqual(said(0, [
      "[ { turn: 1, step: 1, callId: 'call_1', child: 'main.c1-1-call_1' } ]",
      "[ 'main', 'main.c1-1-call_1' ]",
    ]))
  }, 150_000)

  it('L20: the budget block prints the warnings, the two budget ends, the budgets and verify\'s true', () => {
    const out = run(1).trimEnd().split('\n')
    expect(out).toEqual([
      ...said(1, [
        'warning: turn toolCalls at 4 of 5',
        'warning: session costUsd at 0.48 of 0.5',
        'turn 1 stopped: turn toolCalls 5 >= 5',
        'turn 2 stopped: session costUsd 0.576 >= 0.5',
        "[ 'turn toolCalls: 1 of 5', 'session costUsd: 0.576 of 0.5' ]",
      ]),
      'true',
    ])
    expect(BLOCKS[1]).toContain('console.log(verify(agent.events, { price }).ok)   // true')
  }, 150_000)

  it('W1: the wakeup block schedules one wakeup, which fires once on resume and is then spent', () => {
    const out = run(2)
    // schedules(): one pending wakeup, as the comment shows its members
    expect(out).toMatch(/scheduleId: '[0-9a-f-]{36}',\s+due: \d+,[\s\S]*deliver: 'followup',\s+whenBusy: 'queue',\s+fired: 0/)
    // the missed wakeup fired once: one schedule/fired with its id and due time
    const fired = out.slice(out.indexOf(']') + 1)
    expect(fired.match(/scheduleId:/g)).toHaveLength(1)
    expect(fired).toMatch(/due: \d+/)
    expect(out.trimEnd().split('\n').at(-1)).toBe('0 false')
    expect(BLOCKS[2]).toContain('// 0 false: it is spent')
  }, 150_000)
})
