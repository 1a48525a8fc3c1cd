/** The conformance corpus's manifest entry, and how its logs are read for `verify` (docs/spec/README.md). */

/** One entry of corpus.json. */
export interface CorpusEntry {
  /** Path relative to docs/spec/corpus/. */
  file: string
  /** What the log is, or what it breaks. */
  description: string
  /** True: `verify` finds no violation. */
  valid: boolean
  /**
   * Invalid logs: the first violation `verify` must report (`code` an L or W id, or SCHEMA, at
   * `seq`); unreadable logs (`unreadable/`): the error a reader must refuse the file with (`code`
   * at `line`, 1-based, line 1 being the header).
   */
  expect?: { code: string; seq?: number; line?: number }
  /** Checker options the verdict assumes, when not the defaults. */
  options?: Record<string, unknown>
}

/**
 * The events of a log's text as `verify` takes them: line 1 is the header; a log with checksums has
 * its records' `crc` member removed, as the reader does after checking it (the `crc` is the
 * record's, not the event's). Deliberately a plain `JSON.parse` per line otherwise, so that a
 * SCHEMA fixture reaches `verify` instead of being refused by the reader first.
 */
export function recordsOf(text: string): unknown[] {
  const [head, ...rest] = text.split('\n').filter((l) => l.length > 0)
  const checksums = (JSON.parse(head!) as { checksums?: string }).checksums === 'crc32'
  return rest.map((l) => {
    const r = JSON.parse(l) as Record<string, unknown>
    if (checksums) delete r.crc
    return r
  })
}

