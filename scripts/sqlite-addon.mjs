// `npm run sqlite:addon`: makes better-sqlite3's native addon (node_modules/better-sqlite3/build/
// Release/better_sqlite3.node) match the Node that runs this script, so the SQLite store's tests can
// run on the better-sqlite3 driver under any Node line. `npm ci` builds the addon for the Node that
// ran it (in CI: the Node that runs the tests, so nothing to do); a developer who installed with one
// Node and tests with another runs this under the other (e.g. PATH=/path/to/node22/bin:$PATH npm run
// sqlite:addon). A native addon is bound to one Node ABI (process.versions.modules), so each build is
// kept in node_modules/.cache/turnlog-sqlite/node-v<ABI>-<platform>-<arch>/ and switching back is a
// copy, not another compile. A build uses node-gyp (npm's own) with the running Node's headers: its
// include/ directory when the Node install has one (the official binary packages do), else what
// node-gyp downloads.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(join(root, 'package.json'))
const pkgDir = dirname(require.resolve('better-sqlite3/package.json'))
const release = join(pkgDir, 'build', 'Release', 'better_sqlite3.node')
const slot = (abi) => join(root, 'node_modules', '.cache', 'turnlog-sqlite', `node-v${abi}-${process.platform}-${process.arch}`, 'better_sqlite3.node')
const abi = process.versions.modules

/** The ABI a built addon was compiled for (its `node_register_module_v<ABI>` symbol), or null. */
function abiOf(file) {
  if (!existsSync(file)) return null
  const m = /node_register_module_v(\d+)/.exec(readFileSync(file).toString('latin1'))
  return m ? m[1] : null
}

/** True when better-sqlite3 opens a database in a fresh process of this Node. */
function loads() {
  try {
    execFileSync(process.execPath, ['-e', "new (require('better-sqlite3'))(':memory:').close()"], { cwd: root, stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

function keep(file, forAbi) {
  const to = slot(forAbi)
  mkdirSync(dirname(to), { recursive: true })
  copyFileSync(file, to)
}

const current = abiOf(release)
if (current === abi && loads()) {
  keep(release, abi)
  console.log(`better-sqlite3: the addon is built for this Node (${process.version}, ABI ${abi})`)
  process.exit(0)
}
// the build in place belongs to another Node: keep it for switching back
if (current !== null && current !== abi) keep(release, current)
if (existsSync(slot(abi))) {
  copyFileSync(slot(abi), release)
  if (loads()) {
    console.log(`better-sqlite3: switched to the addon built earlier for ${process.version} (ABI ${abi})`)
    process.exit(0)
  }
}
const npmDir = process.env.npm_execpath ? resolve(dirname(process.env.npm_execpath), '..') : null
const gyp = [npmDir && join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')].find((p) => p && existsSync(p))
if (!gyp) {
  console.error('better-sqlite3: node-gyp not found (run this through npm: npm run sqlite:addon)')
  process.exit(1)
}
const nodeDir = resolve(dirname(process.execPath), '..')
const headers = existsSync(join(nodeDir, 'include', 'node', 'node.h')) ? [`--nodedir=${nodeDir}`] : []
console.log(`better-sqlite3: building the addon for ${process.version} (ABI ${abi}); this compiles SQLite and takes minutes`)
execFileSync(process.execPath, [gyp, 'rebuild', '--release', ...headers], { cwd: pkgDir, stdio: 'inherit' })
if (!loads()) {
  console.error(`better-sqlite3: the new build does not load in ${process.version}`)
  process.exit(1)
}
keep(release, abi)
console.log(`better-sqlite3: built for ${process.version} (ABI ${abi})`)
