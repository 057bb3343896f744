#!/usr/bin/env bash
# The suites whose tests share a store or an engine between threads (writers, readers, observers,
# compaction), under ThreadSanitizer, in a build folder of their own (.build-tsan). Any race fails
# the run: TSan ends it at its first report (halt_on_error=1) and the log is searched for one as
# well. The suppressions file hides only the standard library's empty-array-storage false
# positive. The whole suite is clean under TSan too, but takes minutes more for tests that start
# no threads of their own.
#
# The build leaves out the generator and swift-syntax (CELLAR_WITHOUT_GENERATOR=1, see
# Package.swift): none of these suites needs them. A new multi-threaded suite belongs in the list.
#
#   scripts/test-tsan.sh                    # build, then run the suites
#   scripts/test-tsan.sh build              # only the build (CI starts it beside the test suite)
#   scripts/test-tsan.sh --filter SpillTests   # arguments go to `swift test`
set -euo pipefail
cd "$(dirname "$0")/.."

suites=(
    TransactionTests QueryConcurrencyTests ObservationTests LiveResultsTests LazyResultsTests ActorUseTests
    SnapshotIsolationTests OnlineCompactionTests StoreCompactionTests CommitHookTests PrimaryKeyTests
    EmbeddedQueryTests ReadOnlyFollowTests MultiProcessReaderTests GroupCommitTests SpillTests EncryptionTests
    VectorSearchTests VectorLifecycleTests HNSWCacheBoundTests HNSWImageTests SharedWritingTests SharedWritingStoreTests
    UndoCommitStepTests
)
filter=$(IFS='|'; echo "${suites[*]}")
echo "ThreadSanitizer: ${#suites[@]} suites: ${suites[*]}"

scripts/ensure-deps.sh
export CELLAR_WITHOUT_GENERATOR=1
# The versions the root package resolved, when it did: this manifest, without swift-syntax, must
# not rewrite Package.resolved under a build of the full one running beside it.
resolved=()
if [[ -e Package.resolved ]]; then resolved=(--only-use-versions-from-resolved-file); fi
# Line tables are all the reports need (file and line of each frame): no full debug info, a
# quicker build of every target, BoringSSL's C++ above all.
lines_only=(-Xswiftc -gline-tables-only -Xcc -gline-tables-only)
swift build --build-tests --sanitize=thread --scratch-path .build-tsan "${lines_only[@]}" ${resolved[@]+"${resolved[@]}"}
if [[ ${1:-} == build ]]; then exit 0; fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
TSAN_OPTIONS="suppressions=$PWD/.ci/tsan-suppressions.txt halt_on_error=1" \
    swift test --skip-build --sanitize=thread --scratch-path .build-tsan "${lines_only[@]}" --filter "$filter" "$@" 2>&1 | tee "$log"
if grep -q "WARNING: ThreadSanitizer" "$log"; then echo "ThreadSanitizer reported a race (above)"; exit 1; fi
