/**
 * B8's rounds from its knobs (bench/b8-workers.ts runs them; bench/README.md B8). Pure: the env is an
 * argument, so the plan is unit-tested (test/bench/b8-plan.test.ts) without a server.
 *
 * Knobs: TURNLOG_B8_SESSIONS (400), TURNLOG_B8_PER_SLOT (50: a round runs min(SESSIONS, 50 × its
 * slots) sessions, so every round measures ~40 s of steady state and the 1-worker round does not
 * take 6 minutes; 0: SESSIONS in every round, as bench/README.md words it), TURNLOG_B8_LATENCY_MS (200),
 * TURNLOG_B8_CONCURRENCY (1), TURNLOG_B8_SCALE=1 (also 16, 32, 64 and 8x8), TURNLOG_B8_ROUNDS=1,8,…
 * (only these; 64-pool2 and 64-poll100 run only when named), TURNLOG_B8_BUILDS=LABEL=DIR,… (each
 * round also on other builds, as NAME@LABEL, just before this build's), TURNLOG_B8_PROFILE=DIR,
 * TURNLOG_B8_ROUND_S (a round's time limit; default 600 s or 3× the round's latency-bound length,
 * whichever is longer: 400 sessions on one slot take 320 s of model latency alone).
 */
import { join } from 'node:path'
import type { RoundSpec } from './b8-round.js'

export interface B8Plan {
  sessions: number
  latencyMs: number
  conc: number
  /** 0: every round runs `sessions` (bench/README.md's size). */
  perSlot: number
  /** The rounds in run order, without the server's data dir (the runner adds it). */
  rounds: Array<[string, RoundSpec]>
  builds: Array<[string, string]>
}

type Env = Readonly<Record<string, string | undefined>>

function int(env: Env, name: string, dflt: number, min: number): number {
  const v = env[name]
  if (v === undefined || v.trim() === '') return dflt
  const n = Number(v.replace(/_/g, ''))
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got '${v}'`)
  return n
}

export function b8Plan(env: Env): B8Plan {
  const sessions = int(env, 'TURNLOG_B8_SESSIONS', 400, 1)
  const latencyMs = int(env, 'TURNLOG_B8_LATENCY_MS', 200, 1)
  const conc = int(env, 'TURNLOG_B8_CONCURRENCY', 1, 1)
  const limitS = env.TURNLOG_B8_ROUND_S?.trim() ? int(env, 'TURNLOG_B8_ROUND_S', 600, 1) : undefined
  const perSlot = int(env, 'TURNLOG_B8_PER_SLOT', 50, 0)
  // the 16/32/64/8x8 rounds take minutes more (64 processes boot): opt-in, their rows are kept
  const scale = env.TURNLOG_B8_SCALE === '1'
  const spec = (procs: number, over: Partial<RoundSpec> = {}): RoundSpec => {
    const c = over.conc ?? conc
    const n = over.sessions ?? (perSlot > 0 ? Math.min(sessions, perSlot * procs * c) : sessions)
    // 4 requests per session at `latencyMs` each, `procs × c` sessions at once
    const boundMs = Math.ceil(n / (procs * c)) * 4 * latencyMs
    const limitMs = limitS !== undefined ? limitS * 1000 : Math.max(600_000, 3 * boundMs)
    return { procs, conc: c, poolMax: 10, sessions: n, latencyMs, leaseMs: 10_000, pollMs: 1000, limitMs, ...over }
  }
  const rounds: Array<[string, RoundSpec]> = [
    ['1', spec(1)], ['2', spec(2)], ['4', spec(4)], ['8', spec(8)],
    ['takeover', spec(4, { conc: 4, sessions: Math.min(100, sessions), leaseMs: 2_000, killAt: 0.3 })],
  ]
  const scaleRounds: Array<[string, RoundSpec]> = [...[16, 32, 64].map((p): [string, RoundSpec] => [String(p), spec(p)]), ['8x8', spec(8, { conc: 8 })]]
  if (scale) rounds.push(...scaleRounds)
  const extra: Array<[string, RoundSpec]> = [...(scale ? [] : scaleRounds), ['64-pool2', spec(64, { poolMax: 2 })], ['64-poll100', spec(64, { pollMs: 100 })]]
  // TURNLOG_B8_ROUNDS=1,8,takeover: only these rounds (names as in results.json)
  const only = env.TURNLOG_B8_ROUNDS?.split(',').map((x) => x.trim()).filter(Boolean)
  if (only) {
    const all = [...rounds, ...extra]
    for (const n of only) if (!all.some(([m]) => m === n)) throw new Error(`TURNLOG_B8_ROUNDS: unknown round '${n}' (known: ${all.map(([m]) => m).join(', ')})`)
    rounds.splice(0, rounds.length, ...all.filter(([n]) => only.includes(n)))
  }
  // TURNLOG_B8_BUILDS=LABEL=DIR,… (builds of other commits): each round is also run on each of
  // them, just before this build's, as "NAME@LABEL" (the before/after of each change in one run,
  // under the same load)
  const builds = (env.TURNLOG_B8_BUILDS ?? '').split(',').filter((x) => x.includes('=')).map((x) => x.split('=') as [string, string])
  if (builds.length) {
    rounds.splice(0, rounds.length, ...rounds.flatMap(([n, s]): Array<[string, RoundSpec]> =>
      [...builds.map(([label, lib]): [string, RoundSpec] => [`${n}@${label}`, { ...s, lib }]), [n, s]]))
  }
  const profile = env.TURNLOG_B8_PROFILE
  if (profile) for (const [n, s] of rounds) s.profileDir = join(profile, n)
  return { sessions, latencyMs, conc, perSlot, rounds, builds }
}
