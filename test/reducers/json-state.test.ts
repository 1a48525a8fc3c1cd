/**
 * The derived state is plain JSON data (P3's neighbour for state: `turnlog report` embeds the
 * replayed state in its page and `inspect` ships it over HTTP, so what a reader sees must be what
 * the live agent holds): every slice survives JSON.stringify → JSON.parse unchanged, and no key
 * holds `undefined` — an optional field (usage, interrupted, error, cause…) is absent, not present
 * and undefined, so `'usage' in message` and `Object.keys` agree between the live state and the
 * page's copy. Issue 15 part 3: this kills the `if (x !== undefined) m.x = x` → `if (true)` mutants
 * of the folds, which a deep `toEqual` cannot see.
 */
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { foldEvents } from '../../reducers/index.js'
import { arbValidLog } from '../../testing/arbitraries/index.js'
import { fcRuns } from '../fc-runs.js'

const EXAMPLE = new URL('../../examples/weather.jsonl', import.meta.url)
function exampleEvents(): LogEvent[] {
  const lines = readFileSync(EXAMPLE, 'utf8').split('\n').filter((l) => l.trim() !== '')
  return lines.slice(1).map((l) => JSON.parse(l) as LogEvent) // line 1 is the header
}

/** The paths of every own key whose value is `undefined`. */
function undefinedKeys(value: unknown, path = '$', out: string[] = []): string[] {
  if (typeof value !== 'object' || value === null) return out
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) out.push(`${path}.${k}`)
    else undefinedKeys(v, `${path}.${k}`, out)
  }
  return out
}

function expectJsonData(events: readonly LogEvent[]): void {
  const state = foldEvents(events)
  expect(undefinedKeys(state)).toEqual([])
  expect(JSON.parse(JSON.stringify(state))).toEqual(state)
}

describe('the derived state is JSON data (P3 for state, report/inspect)', () => {
  it('P3: the reference session\'s state has no undefined-valued key and survives a JSON round trip', () => {
    expectJsonData(exampleEvents())
  })

  it('P3: every valid log\'s state (every slice, transcript included) has no undefined-valued key', () => {
    fc.assert(fc.property(arbValidLog({ minTurns: 2 }), (log) => expectJsonData(log)), { numRuns: fcRuns(200) })
  })

  it('P3: so does the state of every prefix of a valid log (open turns, steps and brackets)', () => {
    fc.assert(
      fc.property(arbValidLog({ minTurns: 1 }).chain((log) => fc.tuple(fc.constant(log), fc.nat({ max: log.length - 1 }))), ([log, n]) =>
        expectJsonData(log.slice(0, n + 1)),
      ),
      { numRuns: fcRuns(200) },
    )
  })
})
