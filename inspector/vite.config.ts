/**
 * The inspector page: one self-contained HTML file (dist/inspector/template.html). The CLI fills in
 * the log (`turnlog report`) or serves it with a live tail (`turnlog inspect`). No plugin is needed
 * for the single file: `inlineAll` below moves the one JS chunk and the CSS into the HTML, so the page
 * makes no request of its own and loads from file://.
 */
import { defineConfig, type Plugin } from 'vite'

function inlineAll(): Plugin {
  return {
    name: 'turnlog-inline-all',
    enforce: 'post',
    generateBundle(_opts, bundle) {
      const html = Object.values(bundle).find((f) => f.type === 'asset' && f.fileName.endsWith('.html'))
      if (!html || html.type !== 'asset') throw new Error('inspector: no HTML in the bundle')
      let text = String(html.source)
      for (const [name, f] of Object.entries(bundle)) {
        if (f.type === 'chunk') {
          // '</script' inside the code would close the inline element early
          const code = f.code.replace(/<\/script/gi, '<\\/script')
          const tag = new RegExp(`<script[^>]*src="[^"]*${escapeRe(f.fileName)}"[^>]*></script>`)
          if (!tag.test(text)) throw new Error(`inspector: no script tag for ${f.fileName}`)
          text = text.replace(tag, () => `<script type="module">${code}</script>`)
          delete bundle[name]
        } else if (f.fileName.endsWith('.css')) {
          const tag = new RegExp(`<link[^>]*href="[^"]*${escapeRe(f.fileName)}"[^>]*>`)
          const css = String(f.source).replace(/<\/style/gi, '<\\/style')
          text = text.replace(tag, () => `<style>${css}</style>`)
          delete bundle[name]
        }
      }
      html.source = text
    },
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

export default defineConfig({
  root: import.meta.dirname,
  base: './',
  logLevel: 'warn',
  plugins: [inlineAll()],
  build: {
    outDir: '../dist/inspector',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: Number.MAX_SAFE_INTEGER,
    modulePreload: false,
    rolldownOptions: {
      input: { template: `${import.meta.dirname}/template.html` },
      output: { codeSplitting: false },
      // the page must not pull a Node built-in (item 7): fail the build instead of shimming it
      onwarn(warning, warn) {
        if (/externalized for browser compatibility|node:/.test(warning.message)) throw new Error(warning.message)
        warn(warning)
      },
    },
  },
})
