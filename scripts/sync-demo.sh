#!/usr/bin/env bash
# The sync example: two stores, a phone's and a laptop's, kept in step through PostgreSQL
# (Sync/Sources/SyncExample). Without CELLAR_SYNC_POSTGRES set, starts a throwaway server of its
# own (scripts/postgres.sh: a cluster in a temporary directory, 127.0.0.1 only; PostgreSQL is
# installed first when it is missing) and stops it afterwards; with it set, uses that server.
#
# A debug build in the repository's own build directory, as scripts/demo.sh: the Cellar modules
# the test suite built there are reused.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh --postgres
rm -f .build/debug.yaml
swift build --package-path Sync --scratch-path "$PWD/.build" --product sync-example
bin=$(swift build --package-path Sync --scratch-path "$PWD/.build" --show-bin-path)
# The root package's build plan was replaced: the next root build makes it again.
rm -f .build/debug.yaml
if [[ -n "${CELLAR_SYNC_POSTGRES:-}" ]]; then
    "$bin/sync-example"
    exit
fi
pg_dir=$(mktemp -d)
trap 'scripts/postgres.sh stop "$pg_dir" >/dev/null 2>&1 || true' EXIT
url=$(scripts/postgres.sh start "$pg_dir" 55499 | sed -n 's/^CELLAR_SYNC_POSTGRES=//p')
[[ -n "$url" ]] || { echo "sync-demo: the throwaway server did not start" >&2; exit 1; }
CELLAR_SYNC_POSTGRES="$url" "$bin/sync-example"
