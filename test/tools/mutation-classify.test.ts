/**
 * Classification reads the tool's classifier inside its guard (docs/spec/lifecycle.md §5: "a throw" is
 * exclusive; PREAMBLE: every value from user code is read inside a guard).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { classify } from '../../tools/classify.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'

describe('classify reads the classifier inside its guard (R4)', () => {
  it('R4: a tool whose isConcurrencySafe getter throws is exclusive, never a thrown error', () => {
    const t = defineTool({ name: 't', description: '', parameters: z.object({}), execute: () => '' }) as unknown as AnyTool
    let reads = 0
    Object.defineProperty(t, 'isConcurrencySafe', {
      get() {
        reads++
        throw new Error('getter broke')
      },
    })
    expect(classify({ name: 't', arguments: '{}' }, new Map([['t', t]]))).toBe('exclusive')
    expect(reads).toBeGreaterThan(0)
  })

  it('R4: a non-function classifier on a tool built without defineTool is exclusive', () => {
    const t = { name: 't', description: '', parameters: z.object({}), execute: () => '', isConcurrencySafe: true } as unknown as AnyTool
    expect(classify({ name: 't', arguments: '{}' }, new Map([['t', t]]))).toBe('exclusive')
  })
})
