/**
 * `--price MODULE` (`turnlog verify`): the price a session's cost budget was given (docs/spec/lifecycle.md §10,
 * `budget.price`), from a user's ES module. The module exports one of
 * - `price(model, usage)` (or a default export function): USD for one model call, the very function
 *   given to `createAgent({ budget: { price } })`;
 * - `prices` (or a default export object): a table of USD per million tokens by model name,
 *   `{ 'gpt-x': { input, output, cacheRead?, cacheWrite?, reasoning? } }`, with `'*'` for every
 *   model not named; a missing rate falls back as in `turnlog/evals` (cache read and write to
 *   `input`, reasoning to `output`). A model the table does not name and no `'*'` is an unknown
 *   price (counted as such, as the agent counts a price that throws).
 * A module that cannot be imported, exports neither, or has a rate that is not a finite number
 * >= 0 is a `TurnlogError` `INVALID_ARGUMENT` naming the file and the field (exit 2), as `reexec --tools` does.
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { TurnlogError } from '../events/errors.js'
import type { Usage } from '../events/index.js'
import type { CliIo } from './io.js'

/** One model call's price, as the checker calls it (may throw: an unknown price). */
export type PriceFunction = (model: string, usage: Usage) => number

interface Rates { input: number; output: number; cacheRead?: number; cacheWrite?: number; reasoning?: number }

const RATE_KEYS = ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning'] as const

/** Imports MODULE (resolved against the CLI's cwd) and returns its price, checked. */
export async function loadPriceModule(path: string, io: CliIo): Promise<{ price: PriceFunction; file: string; kind: 'function' | 'table' }> {
  const file = resolve(io.cwd ?? process.cwd(), path)
  const bad = (message: string, field = '--price', cause?: unknown): TurnlogError =>
    new TurnlogError('INVALID_ARGUMENT', `the price module ${path}: ${message}`, { file, field }, cause !== undefined ? { cause } : undefined)
  let mod: Record<string, unknown>
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>
  } catch (err) {
    throw bad(`cannot import it: ${(err as Error)?.message ?? String(err)}`, '--price', err)
  }
  let fn: unknown
  let table: unknown
  try {
    fn = typeof mod.price === 'function' ? mod.price : typeof mod.default === 'function' ? mod.default : undefined
    table = mod.prices ?? (typeof mod.default === 'object' && mod.default !== null ? (mod.default as Record<string, unknown>).prices ?? mod.default : undefined)
  } catch (err) {
    throw bad(`reading its exports threw: ${(err as Error)?.message ?? String(err)}`, '--price', err)
  }
  if (typeof fn === 'function') {
    const f = fn as (model: string, usage: Usage) => unknown
    // the checker counts anything but a finite number >= 0 as an unknown price, as the agent does
    return { price: (model, usage) => f(model, usage) as number, file, kind: 'function' }
  }
  if (typeof table !== 'object' || table === null || Array.isArray(table)) {
    throw bad('it must export `price(model, usage)` (USD per call) or `prices` (USD per million tokens by model)')
  }
  const rates = new Map<string, Rates>()
  for (const [model, raw] of Object.entries(table as Record<string, unknown>)) {
    if (typeof raw !== 'object' || raw === null) throw bad(`prices['${model}'] must be an object of rates`, `prices.${model}`)
    const r = raw as Record<string, unknown>
    for (const k of RATE_KEYS) {
      const v = r[k]
      if (v === undefined && (k !== 'input' && k !== 'output')) continue
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
        throw bad(`prices['${model}'].${k} must be a finite number >= 0 (USD per million tokens), got ${JSON.stringify(v) ?? String(v)}`, `prices.${model}.${k}`)
      }
    }
    rates.set(model, r as unknown as Rates)
  }
  if (rates.size === 0) throw bad('its `prices` table names no model', 'prices')
  return {
    file, kind: 'table',
    price: (model, u) => {
      const p = rates.get(model) ?? rates.get('*')
      if (p === undefined) throw new Error(`no price for model '${model}' (and no '*')`)
      return (u.inputTokens * p.input + u.outputTokens * p.output + (u.cacheReadTokens ?? 0) * (p.cacheRead ?? p.input)
        + (u.cacheWriteTokens ?? 0) * (p.cacheWrite ?? p.input) + (u.reasoningTokens ?? 0) * (p.reasoning ?? p.output)) / 1_000_000
    },
  }
}

/**
 * The price's outcomes shared by two readers that call it in the same order (the checker's L20 and
 * the CLI's accounting line): the user's function runs once per model call, so a stateful price
 * (or a slow one) is not called twice per call.
 */
export function sharedPrice(price: PriceFunction): [PriceFunction, PriceFunction] {
  const outcomes: Array<{ ok: true; v: number } | { ok: false; e: unknown }> = []
  const reader = (): PriceFunction => {
    let i = 0
    return (model, usage) => {
      const k = i++
      if (k === outcomes.length) {
        try {
          outcomes.push({ ok: true, v: price(model, usage) })
        } catch (e) {
          outcomes.push({ ok: false, e })
        }
      }
      const o = outcomes[k]!
      if (o.ok) return o.v
      throw o.e
    }
  }
  return [reader(), reader()]
}
