/**
 * Tool definitions: `defineTool`, the JSON Schema the model sees (`toolSpec`), argument parsing and
 * validation, and the conversion of a body's output into result blocks. Everything here is pure;
 * the scheduler (`scheduler.ts`) performs the effects.
 */
import { z } from 'zod'
import { Block, TurnlogError, findLossy, isProviderApproval, type ToolErrorInfo, type ToolSpec } from '../events/index.js'
import type { AnyTool, Tool, ToolOutcome } from './types.js'
import { providerApprovalTool } from './provider-approval.js'

/** The `tool/result.error.code`s the scheduler writes (lifecycle §5, plus the two hook codes). */
export const TOOL_ERROR_CODES = [
  'UNKNOWN_TOOL',
  'INVALID_ARGS',
  'INVALID_TOOL_OUTPUT',
  'TOOL_TIMEOUT',
  'TOOL_ERROR',
  'DENIED',
  'ABORTED',
  'ABORTED_BEFORE_DISPATCH',
  'TOOL_OUTCOME_UNKNOWN',
  /** A `tools/pre-execute` or `tools/execute` listener threw (or returned a malformed decision). */
  'HOOK_ERROR',
  /** A `tools/post-execute` listener returned `block {feedback}`. */
  'BLOCKED',
  /** An approval nobody decided before its `expiresAt` (lifecycle §9). */
  'APPROVAL_EXPIRED',
  /** A client tool's round nobody answered before its `expiresAt` (docs/spec/lifecycle.md §11). */
  'INPUT_EXPIRED',
  /** A body's `ctx.inputRequired` round that cannot be asked (malformed requests, a form schema that is not one). */
  'INVALID_INPUT_REQUEST',
  /** A round's `state` larger than the cap (default 64 KB). */
  'INPUT_STATE_TOO_LARGE',
] as const
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number]

/**
 * Checks a tool definition and returns it unchanged, typed: `args` in `execute` and
 * `isConcurrencySafe` are inferred from the zod `parameters`. The JSON Schema is computed here
 * once, so a schema that JSON Schema cannot express (a `z.date()`, a `z.custom()`) fails at
 * definition time with `INVALID_ARGUMENT`, not in the middle of a turn.
 */
export function defineTool<P extends z.ZodType, O = unknown>(input: (Tool<P, O> & { client?: false }) | ClientToolDefinition<P, O>): Tool<P, O> {
  let def = input as Tool<P, O>
  if (typeof input === 'object' && input !== null && (input as { client?: unknown }).client === true) {
    if ((input as { execute?: unknown }).execute !== undefined) {
      throw new TurnlogError('INVALID_ARGUMENT', `tool '${String((input as { name?: unknown }).name)}': a client tool has no execute (the client answers it)`, { field: 'execute' })
    }
    def = {
      ...input,
      description: (input as { description?: string }).description ?? '',
      execute: () => {
        throw new TurnlogError('INVALID_ARGUMENT', `tool '${input.name}' is a client tool: the client answers it`)
      },
    } as Tool<P, O>
  }
  const where = typeof def?.name === 'string' && def.name !== '' ? `tool '${def.name}'` : 'tool'
  if (typeof def !== 'object' || def === null) throw new TurnlogError('INVALID_ARGUMENT', 'a tool definition must be an object')
  if (typeof def.name !== 'string' || def.name === '') throw new TurnlogError('INVALID_ARGUMENT', 'a tool needs a non-empty name', { field: 'name' })
  if (typeof def.description !== 'string') throw new TurnlogError('INVALID_ARGUMENT', `${where}: description must be a string`, { field: 'description' })
  if (!isZodSchema(def.parameters)) throw new TurnlogError('INVALID_ARGUMENT', `${where}: parameters must be a zod schema`, { field: 'parameters' })
  if (def.output !== undefined && !isZodSchema(def.output)) throw new TurnlogError('INVALID_ARGUMENT', `${where}: output must be a zod schema`, { field: 'output' })
  if (typeof def.execute !== 'function') throw new TurnlogError('INVALID_ARGUMENT', `${where}: execute must be a function`, { field: 'execute' })
  if (def.isConcurrencySafe !== undefined && typeof def.isConcurrencySafe !== 'function') {
    throw new TurnlogError('INVALID_ARGUMENT', `${where}: isConcurrencySafe must be a function`, { field: 'isConcurrencySafe' })
  }
  if (def.timeoutMs !== undefined && !(typeof def.timeoutMs === 'number' && def.timeoutMs > 0 && Number.isFinite(def.timeoutMs))) {
    throw new TurnlogError('INVALID_ARGUMENT', `${where}: timeoutMs must be a positive finite number`, { field: 'timeoutMs' })
  }
  if (def.needsApproval !== undefined && typeof def.needsApproval !== 'boolean' && typeof def.needsApproval !== 'function') {
    throw new TurnlogError('INVALID_ARGUMENT', `${where}: needsApproval must be a boolean or a function`, { field: 'needsApproval' })
  }
  if (def.approval !== undefined) {
    const ms = typeof def.approval === 'object' && def.approval !== null ? def.approval.timeoutMs : null
    if (ms === null || (ms !== undefined && !(typeof ms === 'number' && ms > 0 && Number.isFinite(ms)))) {
      throw new TurnlogError('INVALID_ARGUMENT', `${where}: approval must be { timeoutMs?: positive finite number }`, { field: 'approval.timeoutMs' })
    }
  }
  toolSpec(def as unknown as AnyTool)
  return def
}

/**
 * What `defineTool({ client: true, … })` takes: a client tool (docs/spec/lifecycle.md §11), with no
 * body here and no description needed. Each call logs one `client` round; the client's accepted
 * response (validated against `output` when given) is the call's result. Answer it with
 * `agent.answer(requestId, { action: 'accept', responses: { output } })` (or `turnlog/http`'s
 * client-side tool flow).
 */
export type ClientToolDefinition<P extends z.ZodType, O = unknown> = Omit<Tool<P, O>, 'execute' | 'description' | 'client'> & {
  client: true
  description?: string
}

function isZodSchema(v: unknown): v is z.ZodType {
  return typeof v === 'object' && v !== null && '_zod' in v && typeof (v as { safeParse?: unknown }).safeParse === 'function'
}

const specCache = new WeakMap<object, ToolSpec>()

/**
 * What the model sees of a tool: `{name, description, parameters}`, the parameters converted by
 * zod 4's `z.toJSONSchema` from the **input** side of the schema (what the model must send: a
 * field with a default is optional), with `additionalProperties: false` on every object that does
 * not accept unknown keys (`z.object`, `z.strictObject`; a `z.looseObject` stays open) and without
 * the `$schema` member — the shape of `example.jsonl`. Cached per tool object.
 */
export function toolSpec(tool: AnyTool): ToolSpec {
  const cached = specCache.get(tool)
  if (cached && cached.name === tool.name && cached.description === tool.description) return cached
  // The JSON text of a parameters schema is cached per schema object (zod schemas are immutable):
  // a tool set rebuilt per agent over shared schemas (the fuzzer, B7) converts each schema once.
  let json = jsonSchemaCache.get(tool.parameters)
  if (json === undefined) {
    json = jsonSchemaText(tool)
    jsonSchemaCache.set(tool.parameters, json)
  }
  // A JSON round trip: the spec goes into `request/header`, which must be lossless JSON; each spec
  // gets its own copy of the parameters.
  const spec: ToolSpec = { name: tool.name, description: tool.description, parameters: JSON.parse(json) as Record<string, unknown> }
  specCache.set(tool, spec)
  return spec
}

const jsonSchemaCache = new WeakMap<object, string>()

function jsonSchemaText(tool: AnyTool): string {
  let schema: Record<string, unknown>
  try {
    schema = z.toJSONSchema(tool.parameters, {
      io: 'input',
      override: ({ zodSchema, jsonSchema }) => {
        const def = (zodSchema as { _zod: { def: { type: string; catchall?: unknown } } })._zod.def
        if (def.type === 'object' && def.catchall === undefined && jsonSchema.additionalProperties === undefined) {
          jsonSchema.additionalProperties = false
        }
      },
    }) as Record<string, unknown>
  } catch (err) {
    throw new TurnlogError(
      'INVALID_ARGUMENT',
      `tool '${tool.name}': its parameters have no JSON Schema (${err instanceof Error ? err.message : String(err)})`,
      { field: 'parameters' },
      { cause: err },
    )
  }
  const { $schema: _drop, ...rest } = schema
  return JSON.stringify(rest)
}

/**
 * The model's raw argument string as a value: empty (or only whitespace) is `{}`; text that is not
 * JSON is returned as the raw string itself, which then fails validation as `INVALID_ARGS` (unless
 * the tool's schema accepts a string).
 */
export function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {}
  try {
    return JSON.parse(raw) as unknown
  } catch {
    return raw
  }
}

/** A call resolved against the registry: its tool, its arguments, and what is wrong with it. */
export interface PreparedCall {
  tool: AnyTool | undefined
  /** The validated arguments (zod's output) when valid, else the parsed raw value. */
  args: unknown
  /** `UNKNOWN_TOOL` or `INVALID_ARGS`; absent when the call can run. */
  problem?: ToolErrorInfo
}

/** Looks the tool up and validates the arguments. Never throws. */
export function prepareCall(call: { name: string; arguments: string; providerExecuted?: true; approvalId?: string }, tools: ReadonlyMap<string, AnyTool>): PreparedCall {
  const parsed = parseArguments(call.arguments)
  // a provider call a person must approve: never the user's tool of the same name (issue 23)
  if (isProviderApproval(call)) return { tool: providerApprovalTool(call.name), args: parsed }
  const tool = tools.get(call.name)
  if (tool === undefined) {
    return { tool, args: parsed, problem: { code: 'UNKNOWN_TOOL', message: `Unknown tool '${call.name}'.` } }
  }
  const v = validateArguments(tool, parsed)
  return v.ok ? { tool, args: v.args } : { tool, args: parsed, problem: v.error }
}

/** zod validation of parsed arguments; failure is `INVALID_ARGS` with zod's issues in the message. */
export function validateArguments(tool: AnyTool, parsed: unknown): { ok: true; args: unknown } | { ok: false; error: ToolErrorInfo } {
  try {
    const r = tool.parameters.safeParse(parsed)
    if (r.success) return { ok: true, args: r.data }
    return { ok: false, error: { code: 'INVALID_ARGS', message: `Invalid arguments for tool '${tool.name}':\n${z.prettifyError(r.error)}` } }
  } catch (err) {
    // An async refinement or a throwing transform: the schema cannot validate synchronously.
    return { ok: false, error: { code: 'INVALID_ARGS', message: `Invalid arguments for tool '${tool.name}': validation threw: ${errorText(err)}` } }
  }
}

/** An error outcome: the result text is the message. */
export function errorOutcome(code: string, message: string): ToolOutcome {
  return { content: [{ type: 'text', text: message }], error: { code, message } }
}

const RichOutput = z.array(Block)

/**
 * A body's output as a result: validated against `tool.output` when declared
 * (`INVALID_TOOL_OUTPUT` with zod's issues), then converted — a string is one text block,
 * `undefined` is no block, `{content: Block[]}` is taken as is, anything else is its JSON text.
 * Output that cannot be stored (not JSON-serialisable, a lone surrogate, malformed blocks) is
 * `INVALID_TOOL_OUTPUT` too.
 */
export function outputToOutcome(tool: AnyTool, value: unknown): ToolOutcome {
  // The output is user data: a getter (`get content()`, a block's `get text()`) or a proxy trap
  // may throw anywhere in the conversion. That is the tool's invalid output, never a crash.
  try {
    return convertOutput(tool, value)
  } catch (err) {
    return errorOutcome('INVALID_TOOL_OUTPUT', `Tool '${tool.name}' returned an output that cannot be read: ${errorText(err)}`)
  }
}

function convertOutput(tool: AnyTool, value: unknown): ToolOutcome {
  let out = value
  if (tool.output !== undefined) {
    try {
      const r = tool.output.safeParse(value)
      if (!r.success) return errorOutcome('INVALID_TOOL_OUTPUT', `Tool '${tool.name}' returned an invalid output:\n${z.prettifyError(r.error)}`)
      out = r.data
    } catch (err) {
      return errorOutcome('INVALID_TOOL_OUTPUT', `Tool '${tool.name}': output validation threw: ${errorText(err)}`)
    }
  }
  const c = outputToContent(out)
  if ('error' in c) return errorOutcome('INVALID_TOOL_OUTPUT', `Tool '${tool.name}' returned an output that cannot be a result: ${c.error}`)
  const lossy = findLossy(c.content, 'content')
  if (lossy) return errorOutcome('INVALID_TOOL_OUTPUT', `Tool '${tool.name}' returned an output that cannot be stored: ${lossy.why} at ${lossy.path}`)
  return { content: c.content }
}

/** The conversion rule of `outputToOutcome`, without validation. */
export function outputToContent(value: unknown): { content: Block[] } | { error: string } {
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] }
  if (value === undefined) return { content: [] }
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && Array.isArray((value as { content?: unknown }).content)) {
    const r = RichOutput.safeParse((value as { content: unknown }).content)
    if (!r.success) return { error: `{content} is not a list of blocks:\n${z.prettifyError(r.error)}` }
    return { content: r.data }
  }
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch (err) {
    return { error: `not JSON-serialisable (${errorText(err)})` }
  }
  if (text === undefined) return { error: `a ${typeof value} is not JSON` }
  return { content: [{ type: 'text', text }] }
}

/** The message of anything thrown, without ever throwing itself. */
export function errorText(err: unknown): string {
  try {
    if (err instanceof Error) return err.message || err.name
    return String(err)
  } catch {
    return 'unprintable error'
  }
}
