/**
 * B8's round plan (bench/b8-plan.ts; bench/README.md B8, issue 24 item 6): the documented full-size run
 * `TURNLOG_B8_PER_SLOT=0` gives every quality round (1, 2, 4, 8 workers) bench/README.md's 400 sessions
 * (the trimmed default gives 50 per slot), each round's time limit leaves room for its
 * latency-bound length (400 sessions × 4 requests × 200 ms on one slot is 320 s), and bad knobs
 * are refused by name.
 */
import { describe, expect, it } from 'vitest'
import { b8Plan } from '../../bench/b8-plan.js'

const sizes = (env: Record<string, string>) => Object.fromEntries(b8Plan(env).rounds.map(([n, s]) => [n, s.sessions]))

describe('B8 round plan (bench/README.md B8)', () => {
  it('TURNLOG_B8_PER_SLOT=0 runs bench/README.md\'s 400 sessions in every round; the default trims to 50 per slot', () => {
    expect(sizes({ TURNLOG_B8_PER_SLOT: '0' })).toEqual({ 1: 400, 2: 400, 4: 400, 8: 400, takeover: 100 })
    expect(sizes({})).toEqual({ 1: 50, 2: 100, 4: 200, 8: 400, takeover: 100 })
    expect(b8Plan({ TURNLOG_B8_PER_SLOT: '0' }).perSlot).toBe(0)
  })

  it('a round\'s time limit is 600 s or 3× its latency-bound length, unless TURNLOG_B8_ROUND_S sets it', () => {
    const full = Object.fromEntries(b8Plan({ TURNLOG_B8_PER_SLOT: '0' }).rounds.map(([n, s]) => [n, s.limitMs]))
    expect(full['1']).toBe(960_000) // 400 × 4 × 200 ms = 320 s, × 3
    expect(full['8']).toBe(600_000)
    expect(b8Plan({ TURNLOG_B8_PER_SLOT: '0', TURNLOG_B8_ROUND_S: '100' }).rounds[0]![1].limitMs).toBe(100_000)
  })

  it('the scale rounds and a chosen subset keep the size rule', () => {
    expect(sizes({ TURNLOG_B8_PER_SLOT: '0', TURNLOG_B8_SCALE: '1' })).toEqual({ 1: 400, 2: 400, 4: 400, 8: 400, takeover: 100, 16: 400, 32: 400, 64: 400, '8x8': 400 })
    expect(sizes({ TURNLOG_B8_ROUNDS: '1,8x8', TURNLOG_B8_PER_SLOT: '0' })).toEqual({ 1: 400, '8x8': 400 })
  })

  it('bad knobs are refused by name', () => {
    expect(() => b8Plan({ TURNLOG_B8_PER_SLOT: '-1' })).toThrow(/TURNLOG_B8_PER_SLOT must be an integer >= 0, got '-1'/)
    expect(() => b8Plan({ TURNLOG_B8_SESSIONS: '0' })).toThrow(/TURNLOG_B8_SESSIONS must be an integer >= 1, got '0'/)
    expect(() => b8Plan({ TURNLOG_B8_ROUNDS: '1,nine' })).toThrow(/TURNLOG_B8_ROUNDS: unknown round 'nine'/)
  })
})
