/**
 * The CLI's optional peer dependencies, loaded on demand: an app that only embeds an agent does
 * not install them (decision record "package-contents" (docs/decisions/ in the repository)).
 *
 * - `cli-progress` draws the progress bars of `replay`/`verify` on big logs, `eval` and `fuzz`.
 *   Without it the commands run the same, with no bar.
 * - `fast-check` drives `turnlog fuzz` (and `turnlog/testing`). Without it `turnlog fuzz` stops
 *   with `MISSING_DEPENDENCY` naming the package to install.
 */
import { TurnlogError } from '../events/errors.js'

type CliProgress = typeof import('cli-progress')

const notInstalled = (err: unknown, name: string): boolean => {
  const e = err as { code?: unknown; message?: unknown } | null
  return e?.code === 'ERR_MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.includes(`'${name}'`)
}

let progress: Promise<CliProgress | null> | undefined

/** `cli-progress`, or null where it is not installed (the caller draws no bar). */
export function loadProgress(): Promise<CliProgress | null> {
  progress ??= import('cli-progress').then(
    (m) => ((m as { default?: CliProgress }).default ?? m) as CliProgress,
    (err: unknown) => {
      if (notInstalled(err, 'cli-progress')) return null
      throw err
    },
  )
  return progress
}

/** The fuzzer of `turnlog/testing`, or `MISSING_DEPENDENCY` where `fast-check` is not installed. */
export async function loadFuzzer(): Promise<typeof import('../testing/fuzz/fuzz-agent.js')> {
  try {
    return await import('../testing/fuzz/fuzz-agent.js')
  } catch (err) {
    if (notInstalled(err, 'fast-check')) {
      throw new TurnlogError('MISSING_DEPENDENCY',
        "turnlog fuzz needs the optional peer dependency 'fast-check', which is not installed: npm install -D fast-check",
        { info: { package: 'fast-check', install: 'npm install -D fast-check' } }, { cause: err })
    }
    throw err
  }
}
