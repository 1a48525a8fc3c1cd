/**
 * `turnlog fuzz [--runs N] [--seed S] [--hooks MODULE] [--tools MODULE]`: runs `fuzzAgent` (the
 * scheduled model-based fuzzer of turnlog/testing) against your tools and hooks. MODULE is a JS
 * module you name (never code from a log): `--tools` exports `tools` (or a default array of
 * `defineTool` results), `--hooks` exports `hooks` (or a default object, as `createAgent({ hooks })`).
 * Exit 0 when every run holds every invariant; 1 with the shrunk scenario, seed and log otherwise.
 */
import { SingleBar } from 'cli-progress'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { fuzzAgent } from '../../testing/fuzz/fuzz-agent.js'
import type { AgentOptions } from '../../agent/types.js'
import type { AnyTool } from '../../tools/types.js'
import { EXIT_OK, EXIT_VIOLATIONS, UsageError, parseCount } from '../errors.js'
import { colorsFor, type CliIo } from '../io.js'

export interface FuzzCommandOptions {
  runs?: string
  seed?: string
  hooks?: string
  tools?: string
}

async function loadExport<T>(path: string, name: string, io: CliIo, check: (v: unknown) => v is T): Promise<T> {
  const url = pathToFileURL(resolve(io.cwd ?? process.cwd(), path)).href
  let mod: Record<string, unknown>
  try {
    mod = (await import(url)) as Record<string, unknown>
  } catch (err) {
    throw new UsageError(`cannot load ${path}: ${(err as Error).message}`)
  }
  const v = mod[name] ?? mod.default
  if (!check(v)) throw new UsageError(`${path} must export ${name} (or a default export) of the right shape`)
  return v
}

const isTools = (v: unknown): v is AnyTool[] =>
  Array.isArray(v) && v.every((t) => typeof t === 'object' && t !== null && typeof (t as AnyTool).name === 'string' && typeof (t as AnyTool).execute === 'function')
const isHooks = (v: unknown): v is NonNullable<AgentOptions['hooks']> => typeof v === 'object' && v !== null && !Array.isArray(v)

export async function fuzzCommand(opts: FuzzCommandOptions, io: CliIo): Promise<number> {
  const numRuns = opts.runs !== undefined ? parseCount(opts.runs, '--runs', 1) : 200
  const seed = opts.seed !== undefined ? parseCount(opts.seed, '--seed') : Math.floor(Math.random() * 2 ** 31)
  const tools = opts.tools ? await loadExport(opts.tools, 'tools', io, isTools) : undefined
  const hooks = opts.hooks ? await loadExport(opts.hooks, 'hooks', io, isHooks) : undefined
  const c = colorsFor(io)
  const bar = io.progress
    ? new SingleBar({ format: 'fuzz [{bar}] {value}/{total} runs', stream: io.progressStream ?? process.stderr, clearOnComplete: true })
    : null
  bar?.start(numRuns, 0)
  let passed = 0
  const t0 = Date.now()
  try {
    await fuzzAgent({ numRuns, seed, ...(tools ? { tools } : {}), ...(hooks ? { hooks } : {}), onRun: () => bar?.update(++passed) })
  } catch (err) {
    bar?.stop()
    io.stdout(`${c.red('FAIL')} fuzz (seed ${seed}): ${(err as Error).message}\n`)
    return EXIT_VIOLATIONS
  }
  bar?.stop()
  io.stdout(`${c.green('OK')} fuzz: ${numRuns} runs, seed ${seed}, every invariant held (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`)
  return EXIT_OK
}
