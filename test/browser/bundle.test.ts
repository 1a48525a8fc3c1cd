// Item 7 of "See a session": the root export (and the machines, reducers and in-memory replay
// functions) bundles for the browser with any Node built-in treated as an error, and a scripted
// agent session runs inside a Chromium page: verify ok, stateAt equal to Node's (P2).
import { builtinModules } from 'node:module'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build, type Plugin, type Rolldown } from 'vite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { stateAt } from '../../replay/replay.js'
import { tempDir } from '../cli/helpers.js'
import { hasChromium, launch, watchedPage, type Launched } from './chromium.js'

declare const window: any // eslint-disable-line @typescript-eslint/no-explicit-any

const NODE = new Set(builtinModules)

/** Fails the build at the first import of a Node built-in, naming the importer. */
function noNodeBuiltins(): Plugin {
  return {
    name: 'no-node-builtins',
    enforce: 'pre',
    resolveId(id, importer) {
      if (id.startsWith('node:') || NODE.has(id) || NODE.has(id.split('/')[0]!)) {
        throw new Error(`Node built-in '${id}' imported by ${importer ?? '?'}`)
      }
      return null
    },
  }
}

export async function bundleForBrowser(entry: string): Promise<string> {
  const out = await build({
    configFile: false,
    logLevel: 'silent',
    plugins: [noNodeBuiltins()],
    // what an app's build does (vite's app mode does it by default; lib mode does not): immer reads it
    define: { 'process.env.NODE_ENV': '"production"' },
    build: {
      write: false,
      minify: true,
      target: 'es2022',
      lib: { entry, formats: ['es'], fileName: 'bundle' },
      rolldownOptions: { output: { codeSplitting: false } },
    },
  })
  const outputs = (Array.isArray(out) ? out : [out]) as Rolldown.RolldownOutput[]
  const chunk = outputs.flatMap((o) => o.output).find((c) => c.type === 'chunk')
  if (!chunk || chunk.type !== 'chunk') throw new Error('no chunk')
  return chunk.code
}

const run = hasChromium() ? describe : describe.skip

describe('item 7: the root export bundles for the browser', () => {
  it('a Node built-in anywhere in the graph fails the build (the check works)', async () => {
    const tmp = tempDir()
    const entry = join(tmp.dir, 'bad.ts')
    writeFileSync(entry, `import { createHash } from 'node:crypto'\nexport const h = createHash\n`)
    await expect(bundleForBrowser(entry)).rejects.toThrow(/Node built-in 'node:crypto'/)
    tmp.cleanup()
  })
})

run('item 7: a scripted agent session inside Chromium', () => {
  let b: Launched
  const tmp = tempDir()
  beforeAll(async () => { b = await launch() })
  afterAll(async () => {
    await b?.close()
    tmp.cleanup()
  })

  it('bundles the root export with no Node built-in, runs createAgent + verify + stateAt in the page; reports the gzipped size', async () => {
    const code = await bundleForBrowser(join(import.meta.dirname, 'fixtures', 'agent-entry.ts'))
    const gz = gzipSync(code).length
    console.log(`browser bundle (root export + verify + stateAt): ${Math.round(code.length / 1024)} kB, ${Math.round(gz / 1024)} kB gzipped`)
    const html = join(tmp.dir, 'agent.html')
    writeFileSync(html, `<!doctype html><meta charset="utf-8"><script type="module">${code.replace(/<\/script/gi, '<\\/script')}</script>`)
    const w = await watchedPage(b.browser)
    await w.page.goto(pathToFileURL(html).href)
    await w.page.waitForFunction(() => typeof window.__turnlogRun === 'function', null, { timeout: 20_000 }).catch((err: unknown) => {
      throw new Error(`the bundle did not start: ${w.errors.join('\n') || String(err)}`)
    })
    const r = await w.page.evaluate(() => window.__turnlogRun()) as {
      verifyOk: boolean; historyLength: number; events: LogEvent[]; stateAtMid: unknown; mid: number; sessionId: string
    }
    expect(r.verifyOk).toBe(true)
    expect(r.historyLength).toBe(4)
    expect(r.sessionId).toMatch(/^[0-9a-f-]{36}$/) // globalThis.crypto.randomUUID
    expect(r.stateAtMid).toEqual(JSON.parse(JSON.stringify(stateAt(r.events, r.mid))))
    expect(w.outside).toEqual([])
    expect(w.errors).toEqual([])
  })
})
