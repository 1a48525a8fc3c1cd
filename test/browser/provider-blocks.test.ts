// Issue 23 in the inspector: the blocks the AI SDK bridge logs besides text and calls are shown
// for what they are in the report's transcript (headless Chromium): thinking with its signature
// (signed, the signature itself never shown), redacted thinking (marked, its data never shown),
// provider-executed calls and their results (marked as run by the provider, an error result as an
// error), sources, files, and a refusal with the provider's explanation.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import type { StreamChunk } from '../../events/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { templatePath } from '../../cli/page.js'
import { cli, tempDir } from '../cli/helpers.js'
import { hasChromium, launch, watchedPage, type Launched } from './chromium.js'

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any

const run = hasChromium() ? describe : describe.skip

const SIGNATURE = 'SIGNATURE_NEVER_SHOWN_EqQBCkgIARAB'
const REDACTED = 'REDACTED_NEVER_SHOWN_EmwKAhgBEgy3'

const searched: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'reasoning' },
  { type: 'reasoning-delta', index: 0, text: 'I should search the web.' },
  { type: 'block-end', index: 0, providerData: { anthropic: { signature: SIGNATURE } } },
  { type: 'block-start', index: 1, blockType: 'reasoning' },
  { type: 'block-end', index: 1, providerData: { anthropic: { redactedData: REDACTED } } },
  { type: 'block', index: 2, block: { type: 'tool-call', id: 'srvtoolu_1', name: 'web_search', arguments: '{"query":"paris weather"}', providerExecuted: true } },
  { type: 'block', index: 3, block: { type: 'tool-result', id: 'srvtoolu_1', name: 'web_search', result: [{ url: 'https://example.com/paris', title: 'Paris forecast' }] } },
  { type: 'block', index: 4, block: { type: 'tool-call', id: 'srvtoolu_2', name: 'web_fetch', arguments: '{"url":"https://example.com/x"}', providerExecuted: true } },
  { type: 'block', index: 5, block: { type: 'tool-result', id: 'srvtoolu_2', name: 'web_fetch', result: { errorCode: 'max_uses_exceeded' }, isError: true } },
  { type: 'block', index: 6, block: { type: 'source', sourceType: 'url', id: 'src_1', url: 'https://example.com/paris', title: 'Paris forecast' } },
  { type: 'block-start', index: 7, blockType: 'text' },
  { type: 'text-delta', index: 7, text: 'It is sunny in Paris.' },
  { type: 'block-end', index: 7 },
  { type: 'block', index: 8, block: { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
  { type: 'finish', reason: 'stop' },
]
const refused: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text: 'I cannot help with that.' },
  { type: 'block-end', index: 0 },
  { type: 'finish', reason: 'refusal', explanation: 'The request asks for weapons instructions.' },
]

run('inspector: the blocks of the AI SDK bridge (issue 23) in Chromium', () => {
  let b: Launched
  const tmp = tempDir()
  beforeAll(async () => {
    expect(existsSync(templatePath()), 'run npm run build: the inspector template is missing').toBe(true)
    b = await launch()
  })
  afterAll(async () => {
    await b?.close()
    tmp.cleanup()
  })

  it('signed and redacted thinking, provider-executed calls and results, sources, files and a refusal show as such; no signature or redacted data is shown', async () => {
    const agent = createAgent({ model: scriptedModel([searched, refused]), store: jsonlStore(tmp.dir), sessionId: 'bridge' })
    agent.followup('What is the weather in Paris?')
    await agent.whenIdle()
    agent.followup('Now something you will refuse.')
    await agent.whenIdle()
    await agent.flush()
    await agent.dispose()
    const out = join(tmp.dir, 'bridge.html')
    const r = await cli(['report', join(tmp.dir, 'bridge.jsonl'), '-o', out, '--at', '0'])
    expect(r.code, r.stderr).toBe(0)
    const w = await watchedPage(b.browser)
    await w.page.goto(`file://${out}`)
    await w.page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 })
    await w.page.waitForFunction(() => document.querySelectorAll('.vlist[aria-label="transcript"] .tline').length > 5, null, { timeout: 30_000 })
    const rows: Array<{ kind: string; cls: string; text: string }> = await w.page.evaluate(() =>
      [...document.querySelectorAll('.vlist[aria-label="transcript"] .tline')].map((e: any) => ({
        kind: e.querySelector('.kind').textContent, cls: e.className, text: e.textContent,
      })))
    const row = (kind: string, has: string) => rows.find((x) => x.kind === kind && x.text.includes(has))
    const all = JSON.stringify(rows)
    // thinking: signed (the signature stays in the log), redacted (its data too)
    expect(row('thinking', 'I should search the web.'), all).toBeDefined()
    expect(row('thinking', 'I should search the web.')!.text).toContain('signed')
    expect(row('thinking', 'redacted'), all).toBeDefined()
    expect(row('thinking', 'redacted')!.cls).toContain('k-thinking')
    expect(all).not.toContain(SIGNATURE)
    expect(all).not.toContain(REDACTED)
    // provider-executed calls and results: the provider ran them, never turnlog
    expect(row('provider call', 'web_search({"query":"paris weather"})'), all).toBeDefined()
    expect(row('provider call', 'web_search')!.text).toContain('srvtoolu_1')
    expect(row('provider result', 'Paris forecast'), all).toBeDefined()
    expect(row('provider error', 'max_uses_exceeded'), all).toBeDefined()
    expect(rows.filter((x) => x.kind === 'tool-call' || x.kind === 'tool-result')).toEqual([])
    // sources and files
    expect(row('source', 'https://example.com/paris'), all).toBeDefined()
    expect(row('source', 'https://example.com/paris')!.text).toContain('Paris forecast')
    expect(row('file', 'image/png'), all).toBeDefined()
    // the answer, and the refusal with its explanation
    expect(row('assistant', 'It is sunny in Paris.'), all).toBeDefined()
    expect(row('assistant', 'I cannot help with that.'), all).toBeDefined()
    expect(row('refusal', 'The request asks for weapons instructions.'), all).toBeDefined()
    expect(row('refusal', 'weapons')!.cls).toContain('k-refusal')
    // the refusal is styled apart from an answer
    const color = await w.page.evaluate(() => getComputedStyle(document.querySelector('.tline.k-refusal .kind')).color)
    const answer = await w.page.evaluate(() => getComputedStyle(document.querySelector('.tline.k-assistant .kind')).color)
    expect(color).not.toBe(answer)
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  }, 120_000)
})

declare function getComputedStyle(e: unknown): { color: string }
