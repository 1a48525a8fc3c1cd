/** The benchmark plumbing: the generated logs are valid, the baseline reads every line, targets parse. */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { baselineRead, turnlogReplay } from '../../bench/b1-replay.js'
import { meetsTarget, median } from '../../bench/common.js'
import { generateEvents, generateLogFile } from '../../bench/gen-log.js'
import { REGISTRY } from '../../bench/run.js'
import { PROGRESS_FROM_BYTES } from '../../cli/load.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { cli, tempDir } from './helpers.js'

describe('bench: the B1 log generator', () => {
  const { dir, cleanup } = tempDir()
  afterAll(cleanup)

  it('generates agent-shaped logs that satisfy every invariant', () => {
    const events = generateEvents({ events: 3000, seed: 7 })
    expect(events.length).toBeGreaterThanOrEqual(3000)
    expect(verify(events).violations).toEqual([])
    const types = new Set(events.map((e) => e.type))
    for (const t of ['agent/inbox/spliced', 'turn/start', 'step/start', 'user/message', 'request/header', 'assistant/chunk',
      'assistant/message', 'tool/call', 'tool/result', 'step/end', 'turn/end']) expect(types).toContain(t)
  })

  it('writes the same events with crc32 checksums; readLog and the baseline read them all', async () => {
    const file = join(dir, 'gen.jsonl')
    const gen = await generateLogFile(file, { events: 2000, seed: 7 })
    const log = await readLog(file)
    expect(log.header.checksums).toBe('crc32')
    expect(log.events).toEqual(generateEvents({ events: 2000, seed: 7 }))
    expect(gen.events).toBe(log.events.length)
    expect(gen.bytes).toBe(readFileSync(file).length)
    const parsed = await baselineRead(file, 4096) // small chunks: lines straddle chunk ends
    expect(parsed).toHaveLength(gen.events + 1)
    expect((parsed[1] as { seq: number }).seq).toBe(0)
    const r = await turnlogReplay(file)
    expect(r.events).toBe(gen.events)
    expect(r.surface).toBe(gen.turns * 4)
  })

  it('turnlog verify accepts a generated log; large logs draw a progress bar on a TTY', async () => {
    const file = join(dir, 'big.jsonl')
    const gen = await generateLogFile(file, { events: Math.ceil(PROGRESS_FROM_BYTES / 150) })
    expect(gen.bytes).toBeGreaterThanOrEqual(PROGRESS_FROM_BYTES)
    const tty = Object.assign(new PassThrough(), { isTTY: true, columns: 100, rows: 30 })
    let drawn = ''
    tty.on('data', (b: Buffer) => void (drawn += b.toString()))
    const r = await cli(['verify', file], { progress: true, progressStream: tty as unknown as NodeJS.WritableStream })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`${gen.events} events, ${gen.turns} turns`)
    expect(drawn).toContain('reading')
    const quiet = await cli(['verify', file])
    expect(quiet.code).toBe(0)
  })
})

describe('bench: plumbing', () => {
  it('meetsTarget reads the targets of bench/README.md', () => {
    expect(meetsTarget(1.7, '<= 2.0')).toBe(true)
    expect(meetsTarget(2.01, '<= 2.0')).toBe(false)
    expect(meetsTarget(0.5, '>= 0.5')).toBe(true)
    expect(meetsTarget(0.49, '>= 0.5')).toBe(false)
    expect(meetsTarget(1, 'below the fastest peer')).toBeNull()
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 2, 3])).toBe(2.5)
  })

  it('the registry has B1 and the optional B2/B3 and pool modules', () => {
    expect(REGISTRY.find((e) => e.ids.includes('B1'))).toMatchObject({ module: './b1-replay.js', export: 'benchReplay' })
    expect(REGISTRY.find((e) => e.ids.includes('B2'))).toMatchObject({ module: './b2-step.js', export: 'benchStep', optional: true })
    expect(REGISTRY.find((e) => e.ids.includes('POOL'))).toMatchObject({ module: './pool.js', export: 'benchPool', optional: true })
  })
})
