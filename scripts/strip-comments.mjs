// Part of `npm run build`: the emitted JavaScript loses its comments (the sources and the shipped
// .d.ts keep theirs: the doc comments are what a user reads). The package then fits its size
// budget (test/package/pack.test.ts, docs/decisions/package-contents.md). `ts.transpileModule`
// re-emits each file without type-checking (the build's tsc pass already did), so this takes
// seconds; a file whose re-emit fails to parse is left as it was.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { transformSync } from 'esbuild'

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
      // then the white space (tsx's esbuild, a devDependency's): names, strings and line breaks
      // inside template literals are kept, so messages and stack frames still name the code
      let code = out.outputText
      try {
        code = transformSync(code, { loader: 'js', format: 'esm', target: 'es2022', minifyWhitespace: true }).code
      } catch {
        // a file esbuild cannot parse keeps its comment-free form
      }
      before += src.length
      after += code.length
      writeFileSync(p, code)
    }
  }
}
walk(root)
console.log(`strip-comments: ${root}/**/*.js ${(before / 1024).toFixed(0)} KiB → ${(after / 1024).toFixed(0)} KiB`)
