/**
 * Issue 38.24: every credential form of a connection URL is masked by the one function the CLI
 * prints URLs and error messages through (cli/mask.ts), and nothing else of the URL changes.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { maskCredentials, maskUrl } from '../../cli/mask.js'

describe('maskUrl / maskCredentials (issue 38.24)', () => {
  it.each([
    ['postgres://u:pw1@h:5432/db#s', 'postgres://u:***@h:5432/db#s'],
    ['postgres://u@h/db?password=pw1#s', 'postgres://u@h/db?password=***#s'],
    ['postgresql://u@h/db?sslmode=require&sslpassword=pw1', 'postgresql://u@h/db?sslmode=require&sslpassword=***'],
    ['postgres://u@h/db?PASSWORD=pw1&application_name=a%20b', 'postgres://u@h/db?PASSWORD=***&application_name=a%20b'],
    ['https://h/x?api_key=pw1&q=1', 'https://h/x?api_key=***&q=1'],
    ['postgres://u@h/db?application_name=x', 'postgres://u@h/db?application_name=x'],
  ])('%s → %s', (given, shown) => {
    expect(maskUrl(given)).toBe(shown)
    expect(maskUrl(given)).not.toContain('pw1')
  })

  it('an unparseable URL is masked by pattern', () => {
    expect(maskUrl('postgres://u:pw1@[bad/db?password=pw2')).not.toMatch(/pw1|pw2/)
  })

  it('masks every URL inside a message, keeping the sentence around it', () => {
    const m = maskCredentials("connect to postgres://u:pw1@h/db failed; also 'postgres://h/d?password=pw2'. password=pw3 too")
    expect(m).not.toMatch(/pw1|pw2|pw3/)
    expect(m).toContain('connect to postgres://u:***@h/db failed;')
    expect(m).toContain("'postgres://h/d?password=***'.")
  })

  it('property: a password put in any form never comes out', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9]{6,16}$/).map((s) => `S3C${s}`)
    fc.assert(
      fc.property(secret, fc.constantFrom('userinfo', 'password', 'sslpassword', 'token'), fc.constantFrom('', '?a=1', '?a=1&b=2'), (pw, form, extra) => {
        const base = form === 'userinfo' ? `postgres://user:${pw}@host:5/db${extra}` : `postgres://user@host:5/db${extra}${extra ? '&' : '?'}${form}=${pw}`
        expect(maskUrl(base)).not.toContain(pw)
        expect(maskCredentials(`error at ${base}#sess: boom`)).not.toContain(pw)
      }),
    )
  })
})
