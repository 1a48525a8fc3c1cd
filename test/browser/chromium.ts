/**
 * Headless Chromium for the browser tests (issue "See a session"): Debian's /usr/bin/chromium
 * driven by playwright-core with a fresh profile and every background service off. `hasChromium()`
 * lets a test skip with a message where the browser is not installed (.ci/run installs it).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = process.env.TURNLOG_CHROMIUM ?? '/usr/bin/chromium'

export function hasChromium(): boolean {
  return existsSync(CHROMIUM)
}

export interface Launched {
  /** A persistent context on a fresh --user-data-dir (playwright takes the profile as an argument). */
  browser: BrowserContext
  close(): Promise<void>
}

export async function launch(): Promise<Launched> {
  const profile = mkdtempSync(join(tmpdir(), 'turnlog-chromium-'))
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  })
  return {
    browser,
    async close() {
      await browser.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

export interface Watched {
  page: Page
  /** Console errors and uncaught page errors. */
  errors: string[]
  /** Requests to anything but file: and data: (each one is aborted). */
  outside: string[]
}

/** A page that records console errors and page errors, and aborts (and records) every request
 * whose URL is not file: or data:, unless `allow(url)` says otherwise. */
export async function watchedPage(context: BrowserContext, allow: (url: string) => boolean = () => false): Promise<Watched> {
  const page = await context.newPage()
  const errors: string[] = []
  const outside: string[] = []
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()) })
  page.on('pageerror', (e) => errors.push(String(e)))
  page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); void d.dismiss() })
  await page.route('**/*', (route) => {
    const url = route.request().url()
    if (url.startsWith('file:') || url.startsWith('data:') || allow(url)) return route.continue()
    outside.push(url)
    return route.abort()
  })
  return { page, errors, outside }
}
