// A child process for the decider-kill test (docs/spec/lifecycle.md §9, R10): decides an open approval through
// jsonlStore(DIR).decide and SIGKILLs itself at one exact step of the claim, so the parent sees
// what a decider killed there leaves behind.
// argv: LIB DIR SESSION APPROVAL STEP
//   STEP write   the claim's temp file got 10 bytes, then the process dies
//        sync    written, before its fsync          link     fsynced, before the link
//        syncDir linked, before the directory fsync  lock     claimed, before it takes the lock to log it
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'

const [lib, dir, sessionId, approvalId, step] = process.argv.slice(2)
const { jsonlStore, nodeFs } = await import(pathToFileURL(join(lib, 'stores/jsonl/index.js')).href)

const die = () => process.kill(process.pid, 'SIGKILL')
const c = nodeFs.claims
const claims = {
  ...c,
  create(path, mode) {
    const f = c.create(path, mode)
    return {
      write(buf, off, len, pos) {
        if (step === 'write') {
          f.write(buf, off, Math.min(10, len), pos)
          die()
        }
        return f.write(buf, off, len, pos)
      },
      sync() {
        if (step === 'sync') die()
        f.sync()
      },
      close: () => f.close(),
    }
  },
  link(a, b) {
    if (step === 'link') die()
    c.link(a, b)
  },
  syncDir(p) {
    if (step === 'syncDir') die()
    c.syncDir(p)
  },
}
const fs = {
  ...nodeFs,
  claims,
  async open(path, flags, mode) {
    if (step === 'lock' && path.endsWith('.lock') && flags === 'wx') die()
    return nodeFs.open(path, flags, mode)
  },
}
await jsonlStore(dir, { fs }).decide(sessionId, approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'killed' } })
console.log('DECIDED')
