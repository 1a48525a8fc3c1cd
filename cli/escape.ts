/**
 * Control characters from a log never reach the operator's terminal raw (docs/spec/api.md "CLI": human output
 * escapes control characters from log text). A model, a tool or a user can put `ESC]0;…BEL` (set
 * the window title), `ESC[2J` (clear the screen) or a bare `\r` (overwrite the line) into a log;
 * printed raw, they would rewrite what the operator sees. JSON output (`--json`, exports to
 * stdout) goes through `json`: exact for a program, and safe on a terminal too.
 *
 * Two layers: every log string is escaped where the printer puts it in a line (`inline`, `text`),
 * and every human line goes through `scrubLine` on its way out, which escapes any control
 * character left, except the colour codes (SGR, `ESC[…m`) the CLI itself adds when colours are on.
 */

// C0 (but \t and \n, handled by `text`), DEL, C1, and the Unicode bidi and direction controls
// (which reorder what the terminal shows: "Trojan source").
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
// eslint-disable-next-line no-control-regex
const CONTROLS_INLINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
// eslint-disable-next-line no-control-regex
const ANY_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/y

function esc(ch: string): string {
  const c = ch.charCodeAt(0)
  switch (c) {
    case 0x09: return '\\t'
    case 0x0a: return '\\n'
    case 0x0d: return '\\r'
    case 0x1b: return '\\e'
  }
  return c <= 0xff ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`
}

/** A log string shown on one line (names, ids, codes): every control character escaped, `\n` too. */
export function inline(s: string): string {
  return s.replace(CONTROLS_INLINE, esc)
}

/** A log text that may span lines (message text): control characters escaped, `\n` and `\t` kept. */
export function text(s: string): string {
  return s.replace(CONTROLS, esc)
}

/**
 * The last line of defence for a human output line: escapes every control character but `\n`
 * and `\t`, keeping only SGR colour sequences when `keepColors` (the CLI's own, added after the
 * log text was escaped).
 */
export function scrubLine(line: string, keepColors: boolean): string {
  if (!ANY_CONTROL.test(line)) return line
  let out = ''
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    const c = line.charCodeAt(i)
    if (c === 0x1b && keepColors) {
      SGR.lastIndex = i
      const m = SGR.exec(line)
      if (m) {
        out += m[0]
        i += m[0].length - 1
        continue
      }
    }
    out += (c < 0x20 && c !== 0x09 && c !== 0x0a) || (c >= 0x7f && c <= 0x9f) || ANY_CONTROL.test(ch) ? esc(ch) : ch
  }
  return out
}

// What JSON.stringify leaves raw (it escapes C0, the quote and the backslash only) that a terminal acts on: DEL,
// C1 (U+009B is a one-byte CSI), the bidi controls, and U+2028/U+2029 (line breaks to some
// terminals and to JavaScript before ES2019). Outside strings JSON text is ASCII, so each of these
// is inside a string, where `\uXXXX` stands for the same character.
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/**
 * `JSON.stringify(value, null, space)` with every character a terminal acts on written as a `\u`
 * escape: valid JSON that parses back to the same value, safe to print to a TTY (issue 24). Every
 * JSON document the CLI prints goes through here.
 */
export function json(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? 'null').replace(JSON_UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
