/**
 * Issue 38.14: `turnlog report --children` checks every page it will write before it writes any:
 * a child page that already exists (without --force) refuses the command and leaves no parent
 * page behind (it used to write the parent's page, then refuse the child's with exit 2).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHILD_ID, familySession } from '../fixtures/view-logs.js'
import { cli, tempDir } from './helpers.js'

describe('report --children (issue 38.14, L19 family pages)', () => {
  const tmp = tempDir()
  beforeAll(async () => {
    await familySession(join(tmp.dir, 'fam'))
  })
  afterAll(() => tmp.cleanup())

  it('an existing child page refuses the command before the parent page is written', async () => {
    const dir = join(tmp.dir, 'out1')
    mkdirSync(dir)
    const childPage = join(dir, `${CHILD_ID}.html`)
    writeFileSync(childPage, 'mine')
    const r = await cli(['report', join(tmp.dir, 'fam', 'p1.jsonl'), '-o', join(dir, 'p1.html'), '--children'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`${CHILD_ID}.html`)
    expect(existsSync(join(dir, 'p1.html'))).toBe(false)
    expect(readFileSync(childPage, 'utf8')).toBe('mine')
  })

  it('with --force both pages are written, the child\'s named on stdout', async () => {
    const dir = join(tmp.dir, 'out2')
    mkdirSync(dir)
    writeFileSync(join(dir, `${CHILD_ID}.html`), 'mine')
    const r = await cli(['report', join(tmp.dir, 'fam', 'p1.jsonl'), '-o', join(dir, 'p1.html'), '--children', '--force'])
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(join(dir, `${CHILD_ID}.html`), 'utf8')).toContain('<html')
    expect(existsSync(join(dir, 'p1.html'))).toBe(true)
    expect(r.stdout).toContain(`(child ${CHILD_ID},`)
  })

  it('a child whose page name is the parent\'s own OUT is refused before anything is written', async () => {
    const dir = join(tmp.dir, 'out3')
    mkdirSync(dir)
    const r = await cli(['report', join(tmp.dir, 'fam', 'p1.jsonl'), '-o', join(dir, `${CHILD_ID}.html`), '--children'])
    expect(r.code).toBe(2)
    expect(existsSync(join(dir, `${CHILD_ID}.html`))).toBe(false)
  })
})
