/**
 * A tool's schemas, whatever library wrote them: recognising one (zod 4, zod 3.25+ classic or
 * `zod/v4`, any Standard Schema v1 library such as valibot or arktype, and `jsonSchema()`),
 * validating a value with it, and the wording of its issues. The JSON Schema the model sees is
 * `schema-json.ts`'s.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec'
import { z } from 'zod'
import { isJsonSchema } from './json-schema.js'

/** What `parameters` and `output` accept: any Standard Schema v1 (zod 3.25+ and 4, valibot, arktype, `jsonSchema()`, …). */
export type ToolSchema<Input = unknown, Output = Input> = StandardSchemaV1<Input, Output>

/** A problem found by a schema: where (property keys and array indices from the root) and what. */
export interface SchemaIssue {
  readonly message: string
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>
}

export type SchemaCheck = { ok: true; value: unknown } | { ok: false; issues: readonly SchemaIssue[] }

type Zodlike = { safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: SchemaIssue[] } } }

/** zod 4 (and zod 3.25's `zod/v4`): `_zod` and `safeParse`. */
export function isZod4(v: unknown): v is z.ZodType {
  return typeof v === 'object' && v !== null && '_zod' in v && typeof (v as { safeParse?: unknown }).safeParse === 'function'
}

/** zod 3 classic (3.25+ implements Standard Schema; older ones are not schemas here). */
export function isZod3(v: unknown): boolean {
  return isStandard(v) && !('_zod' in v) && v['~standard'].vendor === 'zod' && '_def' in v && typeof (v as { safeParse?: unknown }).safeParse === 'function'
}

/** A Standard Schema v1: `~standard` with `version: 1` and a `validate` function. */
export function isStandard(v: unknown): v is StandardSchemaV1 {
  if ((typeof v !== 'object' && typeof v !== 'function') || v === null) return false
  const s = (v as { '~standard'?: unknown })['~standard']
  return typeof s === 'object' && s !== null && (s as { version?: unknown }).version === 1 && typeof (s as { validate?: unknown }).validate === 'function'
}

/** True for every schema a tool may declare. Never throws (a hostile getter or proxy is no schema). */
export function isToolSchema(v: unknown): v is ToolSchema {
  try {
    return isZod4(v) || isStandard(v)
  } catch {
    return false
  }
}

/** What to add to "must be a schema" for a near miss a user may well have: a zod 3 older than 3.24. */
export function notSchemaHint(v: unknown): string {
  try {
    const old = typeof v === 'object' && v !== null && '_def' in v && typeof (v as { safeParse?: unknown }).safeParse === 'function' && !('~standard' in v)
    return old ? ': this looks like a schema of zod 3 before 3.24, which is not a Standard Schema; upgrade zod to 3.25 or later' : ''
  } catch {
    return ''
  }
}

/** The library a schema comes from, as messages name it. Never throws. */
export function schemaLibrary(v: unknown): string {
  try {
    if (isJsonSchema(v)) return 'JSON Schema'
    if (isZod4(v)) return 'zod 4'
    if (isZod3(v)) return 'zod 3'
    if (isStandard(v)) return String(v['~standard'].vendor)
  } catch {
    // a hostile vendor: named as unknown below
  }
  return 'unknown'
}

/**
 * Validates `value`. zod goes through its own `safeParse` (a throwing transform throws here with its
 * own message); every other library through `~standard.validate`. Throws what the schema throws, and
 * an `Error` when the schema answers asynchronously: the call's arguments are validated before
 * anything else of the step happens, synchronously.
 */
export function checkSchema(schema: ToolSchema, value: unknown): SchemaCheck {
  if (isZod4(schema) || isZod3(schema)) {
    const r = (schema as unknown as Zodlike).safeParse(value)
    return r.success ? { ok: true, value: r.data } : { ok: false, issues: r.error?.issues ?? [{ message: 'Invalid value' }] }
  }
  const r = schema['~standard'].validate(value)
  if (typeof (r as { then?: unknown }).then === 'function') {
    // nobody waits for it: its rejection must not be an unhandled one
    ;(r as Promise<unknown>).then(undefined, () => {})
    throw new Error(`the ${schemaLibrary(schema)} schema validates asynchronously (an async check, or a check that threw); a tool's schema must validate synchronously`)
  }
  const res = r as StandardSchemaV1.Result<unknown>
  if (res.issues === undefined) return { ok: true, value: res.value }
  return { ok: false, issues: res.issues.length > 0 ? res.issues : [{ message: 'Invalid value' }] }
}

/**
 * Issues as lines, the same for every library: `✖ message`, then `  → at a.b[0]` when the issue has a
 * path (zod's `prettifyError` layout, which it also accepts Standard Schema issues in: `{key}` path
 * segments included), shallowest first.
 */
export function formatIssues(issues: readonly SchemaIssue[]): string {
  const plain = issues.map((i) => ({ message: String(i.message), path: (i.path ?? []).map((s) => (typeof s === 'object' && s !== null ? s.key : s)) }))
  return z.prettifyError({ issues: plain } as unknown as z.ZodError)
}
