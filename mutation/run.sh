#!/bin/sh
# One per-file (or per-folder) mutation run with a restricted test set, its JSON report kept as
# mutation/reports/<name>.json for `npm run mutate:summary`. Runs must not overlap (they share the
# incremental file and the temp folder).
#   mutation/run.sh <name> '<tests globs, comma-separated>' <file-or-glob> [more --mutate globs] [-- stryker options]
set -e
name=$1; tests=$2; shift 2
mutate=$1; shift
cd "$(dirname "$0")/.."
TURNLOG_MUTATE_TESTS="$tests" npx stryker run --mutate "$mutate" "$@"
cp mutation/last-report.json "mutation/reports/$name.json"
