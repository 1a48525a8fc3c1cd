/** `turnlog export LOG --format otlp-json [-o OUT]`: the spans of turnlog/otel as OTLP/JSON. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readLog } from '../../replay/read-log.js'
import { toOtlpJson } from '../../otel/otlp-json.js'
import { cli, ROOT, tempDir } from './helpers.js'

const WEATHER = 'examples/weather.jsonl'

describe('turnlog export', () => {
  it('P7: --format otlp-json to stdout is the OTLP/JSON request of the log\'s spans', async () => {
    const r = await cli(['export', WEATHER, '--format', 'otlp-json'])
    expect(r.code).toBe(0)
    const doc = JSON.parse(r.stdout)
    const log = await readLog(join(ROOT, WEATHER))
    expect(doc).toEqual(toOtlpJson(log.events, { sessionId: 'example-weather', semconv: 'default', scopeVersion: '0.1.0' }))
    expect(doc.resourceSpans[0].scopeSpans[0].spans.map((s: { name: string }) => s.name)).toEqual([
      'invoke_agent', 'chat scripted', 'execute_tool weather', 'chat scripted',
    ])
  })

  it('-o OUT writes a new file; an existing OUT is refused without --force', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const out = join(dir, 'spans.json')
      const r = await cli(['export', WEATHER, '--format', 'otlp-json', '-o', out])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain('4 spans (OTLP/JSON)')
      expect(JSON.parse(readFileSync(out, 'utf8')).resourceSpans).toHaveLength(1)
      writeFileSync(out, 'keep')
      const again = await cli(['export', WEATHER, '--format', 'otlp-json', '-o', out])
      expect(again.code).toBe(2)
      expect(again.stderr).toContain('FILE_EXISTS')
      expect(readFileSync(out, 'utf8')).toBe('keep')
      expect((await cli(['export', WEATHER, '--format', 'otlp-json', '-o', out, '--force'])).code).toBe(0)
      expect(existsSync(out)).toBe(true)
    } finally {
      cleanup()
    }
  })

  it('P7: --agent-name NAME names the agent on the spans (gen_ai.agent.name, `invoke_agent NAME`) and the chrome-trace process (issue 23)', async () => {
    const r = await cli(['export', WEATHER, '--format', 'otlp-json', '--agent-name', 'weather-bot'])
    expect(r.code, r.stderr).toBe(0)
    const doc = JSON.parse(r.stdout)
    const log = await readLog(join(ROOT, WEATHER))
    expect(doc).toEqual(toOtlpJson(log.events, { sessionId: 'example-weather', semconv: 'default', scopeVersion: '0.1.0', agentName: 'weather-bot' }))
    const spans = doc.resourceSpans[0].scopeSpans[0].spans as Array<{ name: string; attributes: Array<{ key: string; value: { stringValue?: string } }> }>
    expect(spans[0]!.name).toBe('invoke_agent weather-bot')
    expect(spans[0]!.attributes.find((a) => a.key === 'gen_ai.agent.name')?.value).toEqual({ stringValue: 'weather-bot' })
    const chrome = await cli(['export', WEATHER, '--format', 'chrome-trace', '--agent-name', 'weather-bot'])
    expect(chrome.code, chrome.stderr).toBe(0)
    const proc = JSON.parse(chrome.stdout).traceEvents.find((e: { name: string }) => e.name === 'process_name')
    expect(proc.args.name).toBe('weather-bot · turnlog session example-weather')
    // without the flag: no agent name anywhere
    const plain = JSON.parse((await cli(['export', WEATHER, '--format', 'otlp-json'])).stdout)
    expect(JSON.stringify(plain)).not.toContain('gen_ai.agent.name')
  })

  it('an empty --agent-name is a usage error naming the option (exit 2)', async () => {
    const r = await cli(['export', WEATHER, '--format', 'otlp-json', '--agent-name', ' '])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--agent-name')
  })

  it('a missing or unknown --format is a usage error (exit 2)', async () => {
    expect((await cli(['export', WEATHER])).code).toBe(2)
    expect((await cli(['export', WEATHER, '--format', 'zipkin'])).code).toBe(2)
  })
})
