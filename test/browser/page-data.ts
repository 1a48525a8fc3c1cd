/** The page data the CLI embedded in a report (plain JSON, or gzip + base64 with --gzip: cli/page.ts). */
import { gunzipSync } from 'node:zlib'
import { expect } from 'vitest'

export function embedded(html: string): Record<string, any> {
  const gz = /<script type="application\/octet-stream" id="turnlog-data" data-encoding="gzip-base64">([^<]*)<\/script>/.exec(html)
  if (gz) return JSON.parse(gunzipSync(Buffer.from(gz[1]!, 'base64')).toString('utf8'))
  const json = /<script type="application\/json" id="turnlog-data">([^<]*)<\/script>/.exec(html)
  expect(json, 'the page embeds the log').not.toBeNull()
  return JSON.parse(json![1]!)
}
