/**
 * Tool definitions: `defineTool`, the JSON Schema the model sees (`toolSpec`), argument parsing and
 * validation, and the conversion of a body's output into result blocks. Everything here is pure;
 * the scheduler (`scheduler.ts`) performs the effects.
 */
import { z } from 'zod'
import { Block, TurnlogError, findLossy, isProviderApproval, type ToolErrorInfo, type ToolSpec } from '../events/index.js'
import type { AnyTool, Tool, ToolOutcome } from './types.js'
import { providerApprovalTool } from './provider-approval.js'
import { checkSchema, formatIssues, isToolSchema, notSchemaHint, type ToolSchema } from './schema.js'
import { toJsonSchema } from './schema-json.js'

/** The `tool/result.error.code`s the scheduler writes (docs/spec/lifecycle.md §5, plus the two hook codes). */
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
  /** An approval nobody decided before its `expiresAt` (docs/spec/lifecycle.md §9). */
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
 * A tool name every provider accepts: OpenAI's function names and Anthropic's tool names are both
 * ASCII letters, digits, `_` and `-`, at most 64 characters (the narrower of the two limits).
 */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

/**
 * Checks a tool definition and returns it unchanged, typed: `args` in `execute` and
 * `isConcurrencySafe` are inferred from `parameters`, which may be any Standard Schema v1 — zod 4,
 * zod 3.25+ (classic or `zod/v4`), valibot, arktype — or a plain JSON Schema given through
 * `jsonSchema(schema)`; `output` likewise. The JSON Schema the model sees is computed here once
 * (see `toolSpec`), so a schema that has none (a `z.date()`, a `z.custom()`, a valibot schema
 * without `@valibot/to-json-schema` installed) fails at definition time with `INVALID_ARGUMENT`
 * naming the library and what to do, not in the middle of a turn.
 */
export function defineTool<P extends ToolSchema, O = unknown>(input: (Tool<P, O> & { client?: false }) | ClientToolDefinition<P, O>): Tool<P, O> {
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
  if (!TOOL_NAME.test(def.name)) {
    throw new TurnlogError('INVALID_ARGUMENT', `tool name ${JSON.stringify(def.name)} is refused by the providers: use 1 to 64 ASCII letters, digits, '_' or '-'`, { field: 'name' })
  }
  if (typeof def.description !== 'string') throw new TurnlogError('INVALID_ARGUMENT', `${where}: description must be a string`, { field: 'description' })
  if (!isToolSchema(def.parameters)) throw new TurnlogError('INVALID_ARGUMENT', `${where}: parameters must be a schema (${SCHEMA_KINDS})${notSchemaHint(def.parameters)}`, { field: 'parameters' })
  if (def.output !== undefined && !isToolSchema(def.output)) throw new TurnlogError('INVALID_ARGUMENT', `${where}: output must be a schema (${SCHEMA_KINDS})${notSchemaHint(def.output)}`, { field: 'output' })
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
export type ClientToolDefinition<P extends ToolSchema, O = unknown> = Omit<Tool<P, O>, 'execute' | 'description' | 'client'> & {
  client: true
  description?: string
}

const SCHEMA_KINDS = 'a Standard Schema such as zod, valibot or arktype, or jsonSchema({...})'

const specCache = new WeakMap<object, ToolSpec>()

/**
 * What the model sees of a tool: `{name, description, parameters}`, the parameters' JSON Schema of
 * the **input** side (what the model must send: a field with a default is optional) whatever library
 * wrote them: zod 4's `z.toJSONSchema`, the library's Standard JSON Schema, `zod-to-json-schema` for
 * zod 3, `@valibot/to-json-schema` for valibot, or the `jsonSchema()` document as given. Every
 * object that does not accept unknown keys has `additionalProperties: false` (a `z.looseObject`
 * stays open), and there is no `$schema` member — the shape of `example.jsonl`. Cached per tool object.
 */
export function toolSpec(tool: AnyTool): ToolSpec {
  const cached = specCache.get(tool)
  if (cached && cached.name === tool.name && cached.description === tool.description && cached.source?.hash === tool.source?.hash) return cached
  // The JSON text of a parameters schema is cached per schema object (schemas are immutable):
  // a tool set rebuilt per agent over shared schemas (the fuzzer, B7) converts each schema once.
  let json = jsonSchemaCache.get(tool.parameters)
  if (json === undefined) {
    json = JSON.stringify(toJsonSchema(tool.parameters, `tool '${tool.name}': its parameters`, 'parameters'))
    jsonSchemaCache.set(tool.parameters, json)
  }
  // A JSON round trip: the spec goes into `request/header`, which must be lossless JSON; each spec
  // gets its own copy of the parameters.
  const spec: ToolSpec = { name: tool.name, description: tool.description, parameters: JSON.parse(json) as Record<string, unknown> }
  if (tool.source !== undefined) spec.source = { mcp: tool.source.mcp, tool: tool.source.tool, hash: tool.source.hash }
  specCache.set(tool, spec)
  return spec
}

const jsonSchemaCache = new WeakMap<object, string>()

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
  /** The validated arguments (the schema's output) when valid, else the parsed raw value. */
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

/**
 * Validation of parsed arguments by the tool's own schema; failure is `INVALID_ARGS` with one
 * `✖ problem` line per issue, each followed by `→ at path.of[0].field` when it has a path, the
 * same layout whatever library wrote the schema.
 */
export function validateArguments(tool: AnyTool, parsed: unknown): { ok: true; args: unknown } | { ok: false; error: ToolErrorInfo } {
  try {
    const r = checkSchema(tool.parameters, parsed)
    if (r.ok) return { ok: true, args: r.value }
    return { ok: false, error: { code: 'INVALID_ARGS', message: `Invalid arguments for tool '${tool.name}':\n${formatIssues(r.issues)}` } }
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
 * (`INVALID_TOOL_OUTPUT` with the schema's issues), then converted — a string is one text block,
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
      const r = checkSchema(tool.output, value)
      if (!r.ok) return errorOutcome('INVALID_TOOL_OUTPUT', `Tool '${tool.name}' returned an invalid output:\n${formatIssues(r.issues)}`)
      out = r.value
    } catch (err) {
      return errorOutcome('INVALID_TOOL_OUTPUT', `Tool '${tool.name}': output validation threw: ${errorText(err)}`)
    }
  }
  const c = outputToContent(out)
  if ('error' in c) return errorOutcome('INVALID_TOOL_OUTPUT', `Tool '${tool.name}' returned an output that cannot be a result: ${c.error}`)
  const lossy = findLossy(c.content, 'content')
  if (lossy) return errorOutcome('INVALID_TOOL_OUTPUT', `Tool '${tool.name}' returned an output that cannot be stored: ${lossy.why} at ${lossy.path}`)
  // `{content, isError: true}`: an error result the model sees with all its blocks (an MCP tool's
  // `isError`), coded TOOL_ERROR like a throwing body
  if (isErrorOutput(out)) return { content: c.content, error: { code: 'TOOL_ERROR', message: errorMessageOf(tool.name, c.content) } }
  // a value that is neither text nor blocks is logged as its JSON, marked so a UI can show the value
  return isJsonValue(out) ? { content: c.content, json: true } : { content: c.content }
}

/** `{content: [...], isError: true}`. */
function isErrorOutput(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Array.isArray((value as { content?: unknown }).content) && (value as { isError?: unknown }).isError === true
}

/** The error message of an `isError` output: its text blocks, or a line saying there was none. */
function errorMessageOf(name: string, content: readonly Block[]): string {
  const text = content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')
  return text !== '' ? text : `Tool '${name}' reported an error.`
}

/** True for the outputs `outputToContent` writes as JSON text (not a string, `undefined` or `{content}` blocks). */
function isJsonValue(value: unknown): boolean {
  if (typeof value === 'string' || value === undefined) return false
  return !(typeof value === 'object' && value !== null && !Array.isArray(value) && Array.isArray((value as { content?: unknown }).content))
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
