/**
 * B1's peak-memory probe: one mode run alone in a fresh process, so its peak RSS
 * (`process.resourceUsage().maxRSS`) is its own. `node dist/bench/b1-child.js MODE FILE` prints
 * `{"mode","ms","maxRssKb","events"}`. Modes: `baseline` (read + split + JSON.parse, objects
 * kept), `replay` (turnlog's streamed replay: read, check, decode, validate, fold; the events
 * are not kept), `at10` (the state as of seq 10: reads only what it needs), `verify` (streamed).
 */
import { streamedReplay } from './b1-replay.js'
import { baselineRead } from './b1-baseline.js'
import { scanLog } from '../replay/read-log.js'
import { Verifier } from '../replay/verify.js'

async function main(mode: string, file: string): Promise<void> {
  const t = performance.now()
  let events = 0
  if (mode === 'baseline') events = (await baselineRead(file)).length - 1
  else if (mode === 'replay') events = (await streamedReplay(file)).events
  else if (mode === 'at10') events = (await streamedReplay(file, 10)).events
  else if (mode === 'verify') {
    const v = new Verifier({ maxViolations: 20 })
    await scanLog(file, { validate: false }, (batch) => {
      for (let i = 0; i < batch.length; i++) v.push(batch[i])
    })
    events = v.eventCount
  } else throw new Error(`unknown mode ${mode}`)
  const ms = performance.now() - t
  process.stdout.write(JSON.stringify({ mode, ms: Math.round(ms), maxRssKb: process.resourceUsage().maxRSS, events }) + '\n')
}

await main(process.argv[2] ?? '', process.argv[3] ?? '')
