/**
 * Schemas the project cannot turn into JSON Schema, or cannot validate with synchronously: a coded
 * error naming the library and what to do (at definition time: `INVALID_ARGUMENT`, field
 * `parameters`), or the call's `INVALID_ARGS` result (docs/spec/lifecycle.md §5), never a crash.
 */
import * as v from 'valibot'
import { afterEach, describe, expect, it } from 'vitest'
import { z as z3 } from 'zod3'
import { TurnlogError } from '../../events/index.js'
import { defineTool, validateArguments } from '../../tools/define.js'
import { peers } from '../../tools/schema-json.js'
import type { AnyTool, ToolSchema } from '../../tools/index.js'

const load = peers.load
afterEach(() => {
  peers.load = load
})

function refusal(parameters: unknown): TurnlogError {
  try {
    defineTool({ name: 't', description: '', parameters: parameters as ToolSchema, execute: () => 'ok' })
  } catch (e) {
    expect(TurnlogError.is(e)).toBe(true)
    expect((e as TurnlogError).code).toBe('INVALID_ARGUMENT')
    expect((e as TurnlogError).field).toBe('parameters')
    return e as TurnlogError
  }
  throw new Error('defineTool accepted it')
}

/** A Standard Schema v1 of a made-up library. */
function acme(validate: (v: unknown) => unknown, jsonSchema?: unknown): ToolSchema {
  return { '~standard': { version: 1, vendor: 'acme', validate, ...(jsonSchema ? { jsonSchema } : {}) } } as ToolSchema
}

describe('a schema without JSON Schema: the error says which library and what to do', () => {
  it('zod 3 classic without zod-to-json-schema installed', () => {
    peers.load = (name) => {
      throw new Error(`Cannot find module '${name}'`)
    }
    const e = refusal(z3.object({ q: z3.string() }))
    expect(e.message).toBe("INVALID_ARGUMENT: tool 't': its parameters (zod 3) have no JSON Schema (zod 3 has no converter of its own): install zod-to-json-schema (an optional peer of turnlog), or write the schema with zod 4 (`import { z } from 'zod/v4'`) (field parameters)")
  })

  it('valibot without @valibot/to-json-schema installed', () => {
    peers.load = () => ({})
    const e = refusal(v.object({ q: v.string() }))
    expect(e.message).toBe("INVALID_ARGUMENT: tool 't': its parameters (valibot) have no JSON Schema (valibot has no converter of its own): install @valibot/to-json-schema (an optional peer of turnlog) (field parameters)")
  })

  it('valibot with a schema its converter refuses: the converter\'s reason, the cause kept', () => {
    const e = refusal(v.object({ when: v.date() }))
    expect(e.message).toMatch(/^INVALID_ARGUMENT: tool 't': its parameters \(valibot\) have no JSON Schema \(.*date.*\): use only schemas and actions @valibot\/to-json-schema converts, or give the JSON Schema with jsonSchema\(\) \(field parameters\)$/)
    expect(e.cause).toBeInstanceOf(Error)
  })

  it('a zod 3 older than 3.24 (no ~standard): the refusal says to upgrade', () => {
    // what such a schema looks like: `_def` and `safeParse`, no `~standard`
    const old = { _def: { typeName: 'ZodObject' }, safeParse: () => ({ success: true, data: {} }) }
    const e = refusal(old)
    expect(e.message).toBe("INVALID_ARGUMENT: tool 't': parameters must be a schema (a Standard Schema such as zod, valibot or arktype, or jsonSchema({...})): this looks like a schema of zod 3 before 3.24, which is not a Standard Schema; upgrade zod to 3.25 or later (field parameters)")
  })

  it('a hostile value (a getter that throws, a throwing proxy) is no schema: the coded refusal, not its throw', () => {
    const getter = Object.defineProperty({}, '~standard', { get: () => { throw new Error('gotcha') } })
    const proxy = new Proxy({}, { has: () => { throw new Error('trap') }, get: () => { throw new Error('trap') } })
    for (const v of [getter, proxy]) expect(refusal(v).message).toMatch(/^INVALID_ARGUMENT: tool 't': parameters must be a schema \(/)
    // a schema on the first reads, a throw on a later one (while its JSON Schema is being read)
    let reads = 0
    const fickle = Object.defineProperty({}, '~standard', {
      get: () => {
        if (++reads > 2) throw new Error('changed its mind')
        return { version: 1, vendor: 'acme', validate: () => ({ value: {} }) }
      },
    })
    expect(refusal(fickle).message).toMatch(/^INVALID_ARGUMENT: tool 't': its parameters \(.+\) have no JSON Schema \(reading the schema threw: changed its mind\) \(field parameters\)$/)
  })

  it('a library without Standard JSON Schema', () => {
    const e = refusal(acme(() => ({ value: {} })))
    expect(e.message).toBe("INVALID_ARGUMENT: tool 't': its parameters (acme) have no JSON Schema (the library does not implement Standard JSON Schema, `~standard.jsonSchema`): use a version of the library that does, or give the JSON Schema with jsonSchema() (field parameters)")
  })

  it('a Standard JSON Schema converter that throws', () => {
    const e = refusal(acme(() => ({ value: {} }), { input: () => { throw new Error('no draft-2020-12 here') }, output: () => ({}) }))
    expect(e.message).toBe("INVALID_ARGUMENT: tool 't': its parameters (acme) have no JSON Schema (no draft-2020-12 here): use only types JSON Schema can express, or give the JSON Schema with jsonSchema() (field parameters)")
  })
})

describe('a schema that cannot validate synchronously: the call\'s INVALID_ARGS, no unhandled rejection', () => {
  const OBJ = { input: () => ({ type: 'object' }), output: () => ({ type: 'object' }) }

  it('an async validation (a rejected one too)', async () => {
    for (const p of [() => Promise.resolve({ value: {} }), () => Promise.reject(new Error('late'))]) {
      const t = defineTool({ name: 'a', description: '', parameters: acme(p, OBJ), execute: () => 'ok' }) as AnyTool
      const r = validateArguments(t, {})
      expect(r).toEqual({ ok: false, error: { code: 'INVALID_ARGS', message: "Invalid arguments for tool 'a': validation threw: the acme schema validates asynchronously (an async check, or a check that threw); a tool's schema must validate synchronously" } })
    }
    // a rejection nobody handled would fail the run here
    await new Promise((r) => setImmediate(r))
  })

  it('a validate that throws, and issues without a path', () => {
    const throws = defineTool({ name: 'b', description: '', parameters: acme(() => { throw new Error('boom') }, OBJ), execute: () => 'ok' }) as AnyTool
    expect(validateArguments(throws, {})).toEqual({ ok: false, error: { code: 'INVALID_ARGS', message: "Invalid arguments for tool 'b': validation threw: boom" } })
    const flat = defineTool({ name: 'c', description: '', parameters: acme(() => ({ issues: [{ message: 'nope' }, { message: 'deep', path: [{ key: 'a' }, 0, 'b c'] }] }), OBJ), execute: () => 'ok' }) as AnyTool
    expect(validateArguments(flat, {})).toEqual({ ok: false, error: { code: 'INVALID_ARGS', message: "Invalid arguments for tool 'c':\n✖ nope\n✖ deep\n  → at a[0][\"b c\"]" } })
  })
})
