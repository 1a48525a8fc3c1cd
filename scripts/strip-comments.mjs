// Part of `npm run build`: the emitted JavaScript loses its comments (the sources and the shipped
// .d.ts keep theirs: the doc comments are what a user reads). The package then fits its size
// budget (test/package/pack.test.ts, docs/decisions/package-contents.md). `ts.transpileModule`
// re-emits each file without type-checking (the build's tsc pass already did), so this takes
// seconds; a file whose re-emit fails to parse is left as it was.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

const root = process.argv[2] ?? 'dist'
let before = 0
let after = 0
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) walk(p)
    else if (p.endsWith('.js')) {
      const src = readFileSync(p, 'utf8')
      const out = ts.transpileModule(src, {
        fileName: p,
        reportDiagnostics: true,
        compilerOptions: { removeComments: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, sourceMap: false, verbatimModuleSyntax: true },
      })
      if (out.diagnostics?.length) continue
      before += src.length
      after += out.outputText.length
      writeFileSync(p, out.outputText)
    }
  }
}
walk(root)
console.log(`strip-comments: ${root}/**/*.js ${(before / 1024).toFixed(0)} KiB → ${(after / 1024).toFixed(0)} KiB`)
