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

  it('a missing or unknown --format is a usage error (exit 2)', async () => {
    expect((await cli(['export', WEATHER])).code).toBe(2)
    expect((await cli(['export', WEATHER, '--format', 'zipkin'])).code).toBe(2)
  })
})
