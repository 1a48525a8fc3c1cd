/**
 * The kinds of statement a B8 worker sends (b8-worker.ts counts them; b8-round.ts sums them per
 * session). A kind names what the statement is for in workers/ and stores/postgres/, so the
 * per-session and per-worker figures say which part of the protocol grows.
 */
const KINDS: Array<[string, RegExp]> = [
  ['append', /turnlog_append/],
  ['claim', /SET token = s\.token \+ 1/],
  ['heartbeat', /FROM unnest\(\$2::text\[\], \$3::bigint\[\]\)/],
  ['handBack', /SET lease_owner = NULL, lease_until = NULL\s+WHERE id = \$1 AND token = \$2 AND pending = 0/],
  ['release', /SET lease_owner = NULL, lease_until = NULL WHERE id = \$1 AND token = \$2$/],
  // round 14: one fallback check (workers/checks.ts) instead of the two polls below
  ['check', /SELECT session_id, false AS cancel FROM turnlog_inbox/],
  ['inboxPoll', /SELECT DISTINCT session_id FROM turnlog_inbox/],
  ['cancelPoll', /SELECT DISTINCT session_id FROM turnlog_cancels/],
  ['inboxRead', /FROM turnlog_inbox WHERE session_id = \$1 AND moved_seq IS NULL/],
  ['decisionsRead', /FROM turnlog_decisions/],
  ['cancelsRead', /FROM turnlog_cancels WHERE session_id = \$1/],
  ['eventsRead', /FROM turnlog_events WHERE session_id = \$1 AND seq >= \$2/],
  ['listen', /^LISTEN /],
]

/** The kind of one statement (`other:` and its first words when none matches). */
export function queryKind(sql: string): string {
  for (const [k, re] of KINDS) if (re.test(sql)) return k
  return 'other:' + sql.replace(/\s+/g, ' ').trim().slice(0, 48)
}
