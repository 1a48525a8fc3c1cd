/** `turnlog fuzz`: runs fuzzAgent; exit 0 when every invariant holds, 1 with the scenario when one breaks. */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { run } from '../../cli/main.js'

function io() {
  const out: string[] = []
  const err: string[] = []
  return { io: { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), cwd: process.cwd() }, out, err }
}

describe('turnlog fuzz', () => {
  it('L1–L16, R1–R8: passes on the agent alone and prints the seed', async () => {
    const { io: i, out } = io()
    expect(await run(['fuzz', '--runs', '20', '--seed', '7'], i)).toBe(0)
    expect(out.join('')).toMatch(/OK fuzz: 20 runs, seed 7/)
  })

  it('L11: a hooks module that enters every message twice is caught (exit 1, seed in the report)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnlog-fuzz-'))
    const mod = join(dir, 'hooks.mjs')
    writeFileSync(mod, `export const hooks = { 'agent/pre-step': async (p, next) => next({ ...p, messages: [...p.messages, ...p.messages] }) }\n`)
    const { io: i, out } = io()
    expect(await run(['fuzz', '--runs', '30', '--seed', '3', '--hooks', mod], i)).toBe(1)
    expect(out.join('')).toMatch(/FAIL fuzz \(seed 3\)/)
  })

  it('a module that does not export tools is a usage error (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnlog-fuzz-'))
    const mod = join(dir, 'tools.mjs')
    writeFileSync(mod, `export const nothing = 1\n`)
    const { io: i, err } = io()
    expect(await run(['fuzz', '--tools', mod], i)).toBe(2)
    expect(err.join('')).toMatch(/must export tools/)
  })
})
