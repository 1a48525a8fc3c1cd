/**
 * docs/machines.md cannot rot: its diagrams and "accepts" tables are what scripts/machines-doc.ts
 * renders from the machine definitions now, and each machine's example is extracted, written as a
 * module and run (its `assert`s are the example's claims). Covers issue 15 part 2 and the machine
 * invariants the examples state: L12 (max-tokens ends the turn `max-tokens`), §4.5 (a truncated
 * response never runs its calls), R5 (a cancel routes the step to `aborting`), the inbox's unique
 * pending ids (I2).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { documentedMachines, examplesOf, mermaidOf, regenerate, regionsOf } from '../../scripts/machines-doc.js'
import { stepMachine } from '../../machines/index.js'
import { createMachine } from 'xstate'

const docPath = fileURLToPath(new URL('../../docs/machines.md', import.meta.url))
const doc = readFileSync(docPath, 'utf8')
const exampleDir = fileURLToPath(new URL('./.doc-examples/', import.meta.url))

describe('docs/machines.md', () => {
  it('is regenerated: its diagrams and tables match the machine definitions (`npm run docs:machines`)', () => {
    expect(regenerate(doc)).toBe(doc)
  })

  it('has a diagram, an accepts table and an example for every machine', () => {
    const names = Object.keys(documentedMachines)
    expect(names).toEqual(['inbox', 'turn', 'step', 'toolCall'])
    expect(regionsOf(doc).sort()).toEqual(names.flatMap((n) => [`${n}:accepts`, `${n}:diagram`]).sort())
    expect(Object.keys(examplesOf(doc)).sort()).toEqual([...names].sort())
  })

  it('a changed machine makes the diagram differ (the check above is not vacuous)', () => {
    const states = stepMachine.config.states!
    const added = createMachine({ ...stepMachine.config, states: { ...states, extra: {} } })
    expect(mermaidOf(added)).not.toBe(mermaidOf(stepMachine))
    const retargeted = createMachine({ ...stepMachine.config, states: { ...states, failed: { always: { target: 'idle' } } } })
    expect(mermaidOf(retargeted)).toContain('failed --> idle: always')
    expect(mermaidOf(stepMachine)).toContain('committing --> runningTools: COMMITTED [hasToolCalls]')
    expect(regenerate(doc.replace('committing --> runningTools', 'committing --> nowhere'))).toBe(doc)
  })

  for (const [name, source] of Object.entries(examplesOf(doc))) {
    it(`the ${name} example runs as written`, async () => {
      const lines = source.trimEnd().split('\n')
      expect(lines.length).toBeLessThanOrEqual(30)
      // The example imports the package by name; point it at this checkout's sources.
      const local = source
        .replace(/from 'turnlog\/machines'/g, "from '../../../machines/index.js'")
        .replace(/from 'turnlog'/g, "from '../../../index.js'")
      mkdirSync(exampleDir, { recursive: true })
      const file = `${exampleDir}${name}.ts`
      writeFileSync(file, `// Extracted from docs/machines.md by test/machines/doc.test.ts; do not edit.\n${local}`)
      await import(`${pathToFileURL(file).href}?t=${Date.now()}`)
    })
  }
})
