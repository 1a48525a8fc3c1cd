/**
 * The options of `createAgent` (extended by replay/resume-options.ts for `resumeAgent` and `openAgent`) as a zod schema,
 * checked at the call (issue 27 item 5): an unknown option, a value of the wrong type or a
 * misspelt hook name is `INVALID_OPTION` naming the field (`retry.maxRetries`, `hooks.agent/prestep`),
 * with "did you mean" for a near name. These are runtime checks, so plain JavaScript callers get
 * them too.
 *
 * To add an option: add it to `AgentOptions` (agent/types.ts) AND to `AGENT_OPTION_FIELDS` here
 * (the `satisfies` makes a missing or extra key a compile error, so the two cannot drift). To add
 * a hook: add it to `HookMap` and to `HOOKS` below (same guard). Values the driver checks in more
 * detail (the limits in options.ts, events in `prefix`) are only type-checked here, so their own
 * messages stay.
 */
import { z } from 'zod'
import { TurnlogError } from '../events/errors.js'
import { isToolSchema, type ToolSchema } from '../tools/schema.js'
import { nearest } from './near-names.js'
import type { AgentOptions, HookName } from './types.js'

type Fn = (...args: never[]) => unknown
const fn = z.custom<Fn>((v) => typeof v === 'function', { error: 'must be a function' })
const nonNegInt = z.number().int().min(0)
const nonNegNumber = z.number().min(0)
/** A tool schema (what `defineTool` takes as `parameters`: any Standard Schema, or `jsonSchema(…)`; a bare JSON Schema object is not one). */
const zodSchema = z.custom<ToolSchema>(
  (v) => isToolSchema(v),
  { error: 'must be a schema (zod, valibot, arktype or any Standard Schema, or jsonSchema({...}); define tools with defineTool)' },
)
const obj = <T extends z.core.$ZodLooseShape>(shape: T) => z.looseObject(shape)

/** Every hook `agent.on` and `options.hooks` accept (the `Record` makes it match `HookMap`). */
const HOOKS: Record<HookName, true> = {
  'agent/pre-step': true,
  'system-prompt/assemble': true,
  'agent/request': true,
  'llm/stream': true,
  'agent/request-error': true,
  'agent/turn-stopping': true,
  'tools/pre-execute': true,
  'tools/execute': true,
  'tools/post-execute': true,
  'agent/status': true,
  'agent/inbox/spliced': true,
  'agent/inbox/inserted': true,
  'agent/inbox/discarded': true,
  'agent/inbox/claimed': true,
  'agent/error': true,
  'agent/assistant-stream': true,
  'agent/approval': true,
  'agent/input': true,
  'agent/budget': true,
}
export const HOOK_NAMES = Object.keys(HOOKS) as readonly HookName[]

// one listener or an array of them; a bad item is named by its index (`hooks.agent/status.1`)
const listeners = z.preprocess((v) => (typeof v === 'function' ? [v] : v), z.array(fn, { error: 'must be a listener function or an array of them' }))
const plugin = obj({ name: z.string(), install: fn })

const BUDGET_KEYS = ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd', 'toolCalls', 'scope', 'price', 'warnAt']

/** One budget (agent/budget.ts `BudgetOptions`): strict, so a misspelt limit is refused. */
function budgetSchema() {
  return z.strictObject({
    inputTokens: nonNegNumber.optional(),
    outputTokens: nonNegNumber.optional(),
    totalTokens: nonNegNumber.optional(),
    costUsd: nonNegNumber.optional(),
    toolCalls: nonNegNumber.optional(),
    scope: z.enum(['turn', 'session']),
    price: fn.optional(),
    warnAt: z.number().gt(0).max(1).optional(),
  })
}

/**
 * One schema per option. Objects made only to configure the library (`retry`, `hooks`) are strict
 * (a misspelt member is refused); objects the user or an adapter implements (`model`, tools,
 * stores, plugins, `timers`, `config`) are loose: only the members the agent calls are checked.
 */
export const AGENT_OPTION_FIELDS = {
  // assertModel (options.ts) has already checked it with its own message
  model: obj({ stream: fn }),
  // a plain object passed as a tool is checked here, so its error names the field instead of
  // failing inside the JSON Schema conversion (its parameters must be a schema, as defineTool's)
  tools: z.array(obj({ name: z.string().min(1), description: z.string(), execute: fn, parameters: zodSchema })),
  system: z.string(),
  config: obj({ model: z.string().optional(), temperature: z.number().optional(), maxTokens: z.number().int().positive().optional() }),
  sessionId: z.string(),
  store: obj({ create: fn, open: fn }),
  storeWriter: obj({ append: fn, close: fn, length: z.number() }),
  // the events are checked by the Session, with their seq; here only "an array" (O(1))
  prefix: z.custom<readonly unknown[]>((v) => Array.isArray(v), { error: 'expected an array of events' }),
  // the limits keep their messages from checkLimits (options.ts)
  maxParallelToolCalls: z.unknown(),
  maxStepsPerTurn: z.unknown(),
  cancelGraceMs: z.unknown(),
  maxResumeRuns: nonNegInt,
  wakeups: z.strictObject({
    timer: z.boolean().optional(),
    tool: z.union([z.boolean(), z.strictObject({
      name: z.string().min(1).optional(),
      minDelayMs: nonNegNumber.optional(),
      maxDelayMs: nonNegNumber.optional(),
      deliver: z.enum(['followup', 'steer', 'inject']).optional(),
      whenBusy: z.enum(['queue', 'steer', 'drop']).optional(),
    })]).optional(),
  }),
  retry: z.union([
    z.literal(false, { error: 'must be false' }),
    z.strictObject({
      maxRetries: nonNegInt.optional(),
      baseDelayMs: nonNegNumber.optional(),
      maxDelayMs: nonNegNumber.optional(),
      jitter: z.number().min(0).max(1).optional(),
      retryOn: z.array(z.string()).optional(),
    }),
  ], { error: 'must be false or { maxRetries, baseDelayMs, maxDelayMs, jitter, retryOn }' }),
  plugins: z.array(plugin),
  compaction: plugin,
  clock: fn,
  ids: fn,
  // often a fake-timer object with members of its own: loose
  timers: obj({ sleep: fn.optional(), random: fn.optional(), setTimeout: fn.optional(), clearTimeout: fn.optional() }),
  hooks: z.strictObject(Object.fromEntries(HOOK_NAMES.map((h) => [h, listeners.optional()]))),
  checkRequests: z.enum(['log', 'full']),
  // finite, integer and "at least one limit" are checked by normaliseBudgets (agent/budget.ts)
  budget: z.union([budgetSchema(), z.array(budgetSchema())], { error: 'must be a budget { ..., scope } or an array of them' }),
  inspect: fn,
  approvals: z.strictObject({ onSteer: z.enum(['supersede', 'queue']).optional() }),
  inputs: z.strictObject({ onSteer: z.enum(['supersede', 'queue']).optional(), maxStateBytes: z.number().int().positive().optional() }),
} satisfies Record<keyof AgentOptions, z.ZodType>

/**
 * Checks `options` against `fields` (each optional; `undefined` counts as absent). Throws
 * `INVALID_OPTION` for the first problem: `field` is its path (`retry.maxRetries`), the message
 * says what was expected and, for an unknown key, the nearest known name.
 */
export function checkOptionFields(options: unknown, fields: Record<string, z.ZodType>, fnName: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TurnlogError('INVALID_OPTION', `${fnName} needs an options object, got ${typeOf(options)}`, { field: 'options' })
  }
  // field by field, only the options present: a parse of the whole strict object (27 optional
  // members, the output rebuilt) costs far more than these few small parses
  let issue: z.core.$ZodIssue | null = null
  try {
    for (const key of Object.keys(options)) {
      const schema = Object.hasOwn(fields, key) ? fields[key] : undefined
      if (!schema) {
        issue = { code: 'unrecognized_keys', keys: [key], path: [], message: '', input: options } as z.core.$ZodIssue
        break
      }
      const value = (options as Record<string, unknown>)[key]
      if (value === undefined) continue
      const r = schema.safeParse(value, { reportInput: true })
      if (!r.success) {
        const first = r.error.issues[0]!
        issue = { ...first, path: [key, ...first.path] } as z.core.$ZodIssue
        break
      }
    }
  } catch (err) {
    // a getter that throws, a hostile proxy: still a coded error
    throw new TurnlogError('INVALID_OPTION', `${fnName}: the options could not be read: ${(err as Error)?.message ?? String(err)}`, {
      field: 'options',
    }, { cause: err })
  }
  if (issue) throw optionError(innermost(issue), fields, fnName)
}

/** Checks a hook name and its listener (`agent.on`). */
export function checkHook(name: unknown, listener: unknown): void {
  if (typeof name !== 'string' || !Object.hasOwn(HOOKS, name)) {
    const near = typeof name === 'string' ? nearest(name, HOOK_NAMES) : undefined
    throw new TurnlogError('INVALID_OPTION', `agent.on: unknown hook '${String(name)}'${near ? ` (did you mean '${near}'?)` : ''}`, {
      field: 'name', info: { hook: String(name), ...(near ? { didYouMean: near } : {}) },
    })
  }
  if (typeof listener !== 'function') {
    throw new TurnlogError('INVALID_OPTION', `agent.on('${name}'): the listener must be a function, got ${typeOf(listener)}`, { field: 'listener' })
  }
}

/**
 * A union's issue, narrowed to the branch the value was meant for: the branch whose first issue
 * lies inside the value (`retry.maxRetries`) or names an unknown member. Else the union's own.
 */
function innermost(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue
  for (const branch of issue.errors) {
    const first = branch[0]
    if (first && (first.path.length > 0 || first.code === 'unrecognized_keys')) {
      return innermost({ ...first, path: [...issue.path, ...first.path] } as z.core.$ZodIssue)
    }
  }
  return issue
}

function optionError(issue: z.core.$ZodIssue, fields: Record<string, z.ZodType>, fnName: string): TurnlogError {
  const path = issue.path.map(String)
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!
    const known = knownKeys(fields, path)
    const near = nearest(key, known)
    const field = [...path, key].join('.')
    const what = path.length === 1 && path[0] === 'hooks' ? `hook '${key}' in options.hooks` : `option '${field}'`
    return new TurnlogError('INVALID_OPTION', `${fnName}: unknown ${what}${near ? ` (did you mean '${near}'?)` : ''}`, {
      field, info: { unknown: key, ...(near ? { didYouMean: near } : {}) },
    })
  }
  const field = path.join('.') || 'options'
  return new TurnlogError('INVALID_OPTION', `${fnName}: options.${field} ${describeIssue(issue)}`, { field, info: { issue: issue.code } })
}

/** The member names allowed at `path` (top level, `retry`, `timers`, `hooks`): for "did you mean". */
function knownKeys(fields: Record<string, z.ZodType>, path: readonly string[]): readonly string[] {
  if (path.length === 0) return Object.keys(fields)
  if (path.length === 1 && path[0] === 'hooks') return HOOK_NAMES
  if (path.length === 1 && path[0] === 'retry') return ['maxRetries', 'baseDelayMs', 'maxDelayMs', 'jitter', 'retryOn']
  if (path[0] === 'budget' && path.length <= 2) return BUDGET_KEYS
  return []
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const got = `, got ${typeOfInput(issue)}`
  if (issue.message.startsWith('must ')) return `${issue.message}${got}`
  if (issue.code === 'too_small') return `must be ${issue.inclusive === false ? '>' : '>='} ${String(issue.minimum)}${got}`
  if (issue.code === 'too_big') return `must be ${issue.inclusive === false ? '<' : '<='} ${String(issue.maximum)}${got}`
  if (issue.code === 'invalid_type') return `must be ${article(issue.expected)}${got}`
  if (issue.code === 'invalid_value') return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}${got}`
  return `${issue.message.replace(/^Invalid input: /, '')}${got}`
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`
}

function typeOfInput(issue: z.core.$ZodIssue): string {
  return 'input' in issue ? typeOf(issue.input) : 'another type'
}

function typeOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`
  if (typeof v === 'number' || typeof v === 'boolean') return `${typeof v} ${String(v)}`
  return typeof v
}
