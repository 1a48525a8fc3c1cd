/**
 * Issue 33 item 6: one story for the GenAI conventions switch. Every way spans come out (the live
 * plugin, `exportSpans`, the pure `logToSpans`/`toOtlpJson`/`familyToSpans`, `turnlog export
 * --format otlp-json`) picks the attribute names by the same rule: the `semconv` option (CLI
 * `--semconv`) when given, else `OTEL_SEMCONV_STABILITY_OPT_IN` (`gen_ai/dup` in the list → both
 * names; `gen_ai_latest_experimental`, the conventions' own opt-in value, or nothing → the current
 * names). README, the d.ts JSDoc and `--help` tell that story in the same words.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { exportSpans, familyToSpans, logToSpans, SEMCONV_SWITCH, toOtlpJson, type SemconvMode } from '../../otel/index.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { cli, ROOT } from '../cli/helpers.js'

const saved = process.env.OTEL_SEMCONV_STABILITY_OPT_IN
afterEach(() => {
  if (saved === undefined) delete process.env.OTEL_SEMCONV_STABILITY_OPT_IN
  else process.env.OTEL_SEMCONV_STABILITY_OPT_IN = saved
})

async function runLog(): Promise<readonly LogEvent[]> {
  const agent = createAgent({ model: scriptedModel([{ text: 'hi' }]), system: 's', clock: fakeClock(), ids: counterIds('m'), timers: instantTimers() })
  agent.followup('hello')
  await agent.whenIdle()
  const events = [...agent.events]
  await agent.dispose()
  return events
}

type Names = 'new' | 'both' | 'old'
const NAMES: Record<Names, string[]> = { new: ['gen_ai.provider.name'], both: ['gen_ai.provider.name', 'gen_ai.system'], old: ['gen_ai.system'] }
const names = (attrs: Record<string, unknown>): string[] => ['gen_ai.provider.name', 'gen_ai.system'].filter((k) => k in attrs)

/** The documented rule: the option wins; else the variable's `gen_ai/dup` gives both; else the current names. */
const CASES: Array<[env: string | undefined, option: SemconvMode | undefined, expected: Names]> = [
  [undefined, undefined, 'new'],
  ['gen_ai_latest_experimental', undefined, 'new'],
  ['http, gen_ai/dup', undefined, 'both'],
  ['gen_ai_latest_experimental,gen_ai/dup', undefined, 'both'],
  ['gen_ai/dup', 'latest', 'new'],
  ['gen_ai_latest_experimental', 'dup', 'both'],
  [undefined, 'v1.36', 'old'],
  ['gen_ai/dup', 'v1.36', 'old'],
]

describe('issue 33 item 6: one rule for the GenAI attribute names, in every way spans come out', () => {
  it.each(CASES)('P7 OTEL_SEMCONV_STABILITY_OPT_IN=%s, semconv %s → %s names', async (env, option, expected) => {
    const events = await runLog()
    if (env === undefined) delete process.env.OTEL_SEMCONV_STABILITY_OPT_IN
    else process.env.OTEL_SEMCONV_STABILITY_OPT_IN = env
    const opts = { sessionId: 's', provider: 'openai', ...(option !== undefined ? { semconv: option } : {}) }

    const pure = logToSpans(events, opts)
    expect(names(pure[0]!.attributes), 'logToSpans').toEqual(NAMES[expected])
    const otlp = (toOtlpJson(events, opts).resourceSpans[0] as any).scopeSpans[0].spans[0].attributes.map((a: { key: string }) => a.key)
    expect(names(Object.fromEntries(otlp.map((k: string) => [k, 1]))), 'toOtlpJson').toEqual(NAMES[expected])
    const family = familyToSpans({ sessionId: 's', events }, { provider: 'openai', ...(option !== undefined ? { semconv: option } : {}) })
    expect(names(family[0]!.attributes), 'familyToSpans').toEqual(NAMES[expected])

    const exporter = new InMemorySpanExporter()
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    exportSpans({ header: { id: 's' } as never, events }, provider.getTracer('t'), { provider: 'openai', ...(option !== undefined ? { semconv: option } : {}) })
    expect(names(exporter.getFinishedSpans()[0]!.attributes), 'exportSpans').toEqual(NAMES[expected])
    await provider.shutdown()
  })

  it.each(CASES)('P7 turnlog export --format otlp-json with OTEL_SEMCONV_STABILITY_OPT_IN=%s, --semconv %s → %s names', async (env, option, expected) => {
    const log = join(ROOT, 'examples', 'weather.jsonl')
    {
      if (env === undefined) delete process.env.OTEL_SEMCONV_STABILITY_OPT_IN
      else process.env.OTEL_SEMCONV_STABILITY_OPT_IN = env
      const r = await cli(['export', log, '--format', 'otlp-json', ...(option !== undefined ? ['--semconv', option] : [])])
      expect(r.code, r.stderr).toBe(0)
      const span = JSON.parse(r.stdout).resourceSpans[0].scopeSpans[0].spans[0]
      expect(names(Object.fromEntries(span.attributes.map((a: { key: string }) => [a.key, 1])))).toEqual(NAMES[expected])
    }
  })

  it('README, the d.ts JSDoc of turnlog/otel and `turnlog export --help` tell the switch in the same words', async () => {
    const flat = (s: string): string => s.replace(/^\s*\*\s?/gm, '').replace(/\s+/g, ' ')
    expect(SEMCONV_SWITCH).toMatch(/gen_ai_latest_experimental/)
    expect(flat(readFileSync(join(ROOT, 'README.md'), 'utf8'))).toContain(flat(SEMCONV_SWITCH))
    expect(flat(readFileSync(join(ROOT, 'otel', 'index.ts'), 'utf8'))).toContain(flat(SEMCONV_SWITCH))
    const help = await cli(['export', '--help'])
    expect(flat(help.stdout)).toContain(flat(SEMCONV_SWITCH))
  })
})
