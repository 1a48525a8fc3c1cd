/**
 * Credentials out of everything the CLI prints. A connection URL can carry a secret in three
 * places: the userinfo (`user:PASSWORD@host`), a query parameter (`?password=…`,
 * `?sslpassword=…`, a token or key) and, when the URL is not parseable, anywhere in its text.
 * `maskUrl` masks one URL; `maskCredentials` masks every URL inside a message (error texts quote
 * what they were given). Data a command writes on purpose (an export, a replayed message) is not
 * passed through here: it must stay byte-exact.
 */

/** Query parameters whose value is a secret (libpq's, and the usual token names). */
const SECRET_PARAM = /^(password|passwd|pwd|pass|sslpassword|secret|client_secret|token|access_token|refresh_token|api[-_]?key|apikey|auth|authorization)$/i

const MASK = '***'

/** One URL with its password and secret query parameters replaced by `***` (user and host kept). */
export function maskUrl(url: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return maskLoose(url)
  }
  let changed = false
  if (u.password) {
    u.password = MASK
    changed = true
  }
  // URLSearchParams.set re-encodes the whole query; rebuild it by hand so that the parameters
  // that are not secret stay exactly as given
  if (u.search.length > 1) {
    const parts = u.search.slice(1).split('&')
    let masked = false
    for (let i = 0; i < parts.length; i++) {
      const eq = parts[i]!.indexOf('=')
      const key = eq < 0 ? parts[i]! : parts[i]!.slice(0, eq)
      let name = key
      try {
        name = decodeURIComponent(key.replace(/\+/g, ' '))
      } catch {
        // a malformed escape: judge the key as written
      }
      if (eq >= 0 && SECRET_PARAM.test(name)) {
        parts[i] = `${key}=${MASK}`
        masked = true
      }
    }
    if (masked) {
      u.search = '?' + parts.join('&')
      changed = true
    }
  }
  return changed ? u.toString() : url
}

/** The same masking by pattern, for text that is not a parseable URL. */
function maskLoose(text: string): string {
  return text
    .replace(/(\/\/[^\s/?#@:]*):[^\s/?#@]*@/g, `$1:${MASK}@`)
    .replace(/([?&;\s](?:password|passwd|pwd|pass|sslpassword|secret|client_secret|token|access_token|refresh_token|api[-_]?key|apikey)=)[^\s&#'"]*/gi, `$1${MASK}`)
}

/** Every `scheme://…` inside a message masked (`maskUrl`), and loose `password=` pairs too. */
export function maskCredentials(text: string): string {
  if (text.indexOf('://') < 0 && !/(password|secret|token|api[-_]?key)=/i.test(text)) return text
  const urls = text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>`]+/gi, (m) => {
    // a URL quoted at the end of a sentence keeps its trailing punctuation outside the mask
    const tail = /[),.;:!?\]]+$/.exec(m)?.[0] ?? ''
    return maskUrl(m.slice(0, m.length - tail.length)) + tail
  })
  return maskLoose(urls)
}
