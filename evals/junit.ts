/**
 * The report as JUnit XML (one test case per golden; CI systems show the failing graders of each
 * failing trial). Text is escaped and characters XML 1.0 cannot hold are replaced.
 */
import type { EvalReport } from './evaluate-types.js'

function esc(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')
}

/** JUnit XML for `report`; `suite` names the test suite (default "turnlog goldens"). */
export function junitXml(report: EvalReport, suite = 'turnlog goldens'): string {
  const secs = (ms: number) => (ms / 1000).toFixed(3)
  const total = report.goldens.reduce((s, g) => s + g.trials.reduce((t, x) => t + x.durationMs, 0), 0)
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${esc(suite)}" tests="${report.goldens.length}" failures="${report.summary.failed}" time="${secs(total)}">`,
    `  <testsuite name="${esc(suite)}" tests="${report.goldens.length}" failures="${report.summary.failed}" errors="0" skipped="0" time="${secs(total)}">`,
  ]
  for (const g of report.goldens) {
    const time = g.trials.reduce((t, x) => t + x.durationMs, 0)
    lines.push(`    <testcase classname="turnlog.golden" name="${esc(g.name)}" time="${secs(time)}">`)
    lines.push('      <properties>')
    lines.push(`        <property name="trials" value="${g.n}"/>`, `        <property name="passed" value="${g.passed}"/>`)
    lines.push(`        <property name="pass@${g.n}" value="${g.passAtK[g.n] ?? 0}"/>`, `        <property name="pass^${g.n}" value="${g.passHatK[g.n] ?? 0}"/>`)
    lines.push(`        <property name="flaky" value="${g.flaky}"/>`)
    if (g.costUsd !== undefined) lines.push(`        <property name="costUsd" value="${g.costUsd}"/>`)
    lines.push('      </properties>')
    if (!g.pass) {
      const why = g.n === 0 ? 'no trial ran (maxCostUsd reached)' : `${g.n - g.passed} of ${g.n} trials failed${g.flaky ? ' (flaky)' : ''}`
      const detail = g.trials.filter((t) => !t.pass).map((t) => {
        const parts = [`trial ${t.trial + 1}:`]
        if (t.error) parts.push(`  error: ${t.error}`)
        for (const r of t.graders.filter((x) => !x.pass)) parts.push(`  ${r.name}${r.reason ? `: ${r.reason}` : ''}`)
        if (t.divergence) parts.push(`  first divergence: ${t.divergence.diff.split('\n')[0]}`)
        return parts.join('\n')
      }).join('\n')
      lines.push(`      <failure message="${esc(why)}" type="golden">${esc(detail)}</failure>`)
    }
    lines.push('    </testcase>')
  }
  lines.push('  </testsuite>', '</testsuites>', '')
  return lines.join('\n')
}
