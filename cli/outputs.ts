/**
 * `-o OUT` never changes an input's bytes (issue "Logs from anywhere" 4; docs/spec/events.md "The JSONL file": never
 * rewrite a user's log in place). Paths are compared as files, not strings: OUT and OUT.quarantine
 * (the files a command writes) must not be LOG, nor LOG's own quarantine file, whether they name
 * them directly, through a symlink (of the file or of a directory on the way), a hard link, `..`,
 * or another spelling. A file that exists is compared by device and inode (what `stat` says after
 * following links); a file that does not exist yet, by the real path of its directory plus its
 * name. `--force` then replaces only files that are not inputs, and always by renaming a new file
 * over the name (atomic-file.ts), never by writing into an existing inode.
 *
 * What is left: a race with another process that swaps files between this check and the write
 * (the write itself cannot reach an input's inode; only the name OUT could be re-pointed).
 */
import { realpathSync, statSync, type Stats } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { TurnlogError } from '../events/errors.js'
import { AtomicFile, exists } from '../replay/atomic-file.js'

interface Identity {
  /** Real path (the directory's real path plus the name when the file does not exist). */
  real: string
  /** Device and inode when the file exists. */
  node?: { dev: number; ino: number }
}

function identify(path: string): Identity {
  let st: Stats | undefined
  try {
    st = statSync(path)
  } catch {
    st = undefined
  }
  let real: string
  try {
    real = realpathSync(path)
  } catch {
    // missing (or a dangling symlink): the real directory plus the name
    let dir: string
    try {
      dir = realpathSync(dirname(path))
    } catch {
      dir = resolve(dirname(path))
    }
    real = join(dir, basename(path))
  }
  return st ? { real, node: { dev: st.dev, ino: st.ino } } : { real }
}

function same(a: Identity, b: Identity): boolean {
  if (a.node && b.node) return a.node.dev === b.node.dev && a.node.ino === b.node.ino
  return a.real === b.real
}

/**
 * Throws `INVALID_ARGUMENT` (field `-o`, or `field`) when any of `outputs` is one of `inputs` or an
 * input's quarantine file (`<input>.quarantine`).
 */
export function assertNotInputs(inputs: readonly string[], outputs: readonly string[], field = '-o'): void {
  const protectedFiles: { path: string; what: string; id: Identity }[] = []
  for (const i of inputs) {
    protectedFiles.push({ path: i, what: 'LOG', id: identify(i) })
    const q = `${i}.quarantine`
    protectedFiles.push({ path: q, what: "LOG's quarantine file", id: identify(q) })
    // the quarantine of LOG's real file too (LOG may be a symlink)
    const real = identify(i).real
    if (real !== i) protectedFiles.push({ path: `${real}.quarantine`, what: "LOG's quarantine file", id: identify(`${real}.quarantine`) })
  }
  for (const o of outputs) {
    const oid = identify(o)
    for (const p of protectedFiles) {
      if (same(oid, p.id)) {
        throw new TurnlogError('INVALID_ARGUMENT', `refusing to write ${o}: it is ${p.what} (${p.path}); a log is never rewritten in place, pick another OUT`, {
          file: o, field, info: { input: p.path },
        })
      }
    }
  }
}

export interface WriteOutputOptions {
  /** The files the command read (never written, by name or by inode). A postgres URL is not a file: leave it out. */
  inputs: readonly string[]
  /** Replace an existing OUT (by renaming a new file over its name). */
  force?: boolean
  /** The option that named OUT (`-o`, `--report`, `--out`), for messages. */
  field: string
}

/**
 * The one output rule of every CLI command that writes a file (issue 27.1): OUT is never an input
 * (`assertNotInputs`), an existing OUT is refused with `FILE_EXISTS` naming `--force`, and the bytes
 * go to a temp file in OUT's directory that is fsynced and then moved into place (`AtomicFile`:
 * link without `--force`, rename with it), so a reader never sees half a file and an existing
 * inode (a hard link's other name, a symlink's target) is never written into.
 */
export async function writeOutput(out: string, data: string | Uint8Array, opts: WriteOutputOptions): Promise<void> {
  await checkOutput(out, opts)
  const force = opts.force === true
  const f = await AtomicFile.create(out)
  try {
    await f.write(typeof data === 'string' ? Buffer.from(data, 'utf8') : data)
    await f.commit({ overwrite: force })
  } catch (err) {
    throw TurnlogError.is(err, 'FILE_EXISTS') ? outputExists(out, opts.field) : err
  } finally {
    await f.discard()
  }
}

/**
 * The checks of `writeOutput` alone, for a command to run before its work (a refused OUT should
 * not cost a whole re-execution first); `writeOutput` runs them again at the write.
 */
export async function checkOutput(out: string, opts: WriteOutputOptions): Promise<void> {
  assertNotInputs(opts.inputs, [out], opts.field)
  if (opts.force !== true && (await exists(out))) throw outputExists(out, opts.field)
}

/** `FILE_EXISTS` for the command line: the flag is `--force` (the library's says `{ overwrite: true }`). */
export function outputExists(out: string, field: string): TurnlogError {
  return new TurnlogError('FILE_EXISTS', `${out} already exists: pass --force to replace it, or choose another ${field} path`, { file: out, field })
}
