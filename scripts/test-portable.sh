#!/usr/bin/env bash
# The engine's and the object layer's suites in a build configured as Cellar is built for iOS,
# tvOS and watchOS, as far as Linux can:
# - without zstd (the package's default traits off, so the `Zstd` trait too; see Package.swift).
#   Compression options are refused there, and a store holding zstd-compressed values throws
#   `compressionUnavailable` when it reads one; the suites that need zstd say they are skipped,
#   and CompressionUnavailableTests checks the refusals on a fixture;
# - with CELLAR_PORTABLE_POSIX: the engine takes the plain POSIX path Apple platforms take where
#   Linux has a call of its own (no memfd, no hole punching, no sync_file_range, fsync for
#   fdatasync; Sources/CellarStorage/IO/Syscall.swift, docs/platforms.md).
# A build folder of its own (.build-portable), without the generator and swift-syntax
# (CELLAR_WITHOUT_GENERATOR=1: the generator does not touch compression).
# Without arguments, every suite runs but those in `computing` below: suites of the object
# layer's computation (vector graphs, geometry, tokenizing and ranking, query evaluation, number
# encodings) whose code has no branch on either setting, no compression and no IO of their own
# beyond the engine's, which the engine's suites run here. A suite not named there runs.
#
#   scripts/test-portable.sh                  # build, then run the suites (but `computing`)
#   scripts/test-portable.sh build            # only the build (CI starts it beside other steps)
#   scripts/test-portable.sh run              # only the run, of the last build
#   scripts/test-portable.sh --filter KillTests   # arguments go to `swift test`
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-deps.sh
export CELLAR_WITHOUT_GENERATOR=1
config=(--disable-default-traits --scratch-path .build-portable -Xswiftc -DCELLAR_PORTABLE_POSIX
        -Xswiftc -gline-tables-only -Xcc -gline-tables-only)
# The versions the root package resolved, when it did: this manifest, without swift-syntax, must
# not rewrite Package.resolved under a build of the full one running beside it.
resolved=()
if [[ -e Package.resolved ]]; then resolved=(--only-use-versions-from-resolved-file); fi
mode=${1:-}
if [[ $mode != run ]]; then
    swift build --build-tests "${config[@]}" ${resolved[@]+"${resolved[@]}"}
fi
if [[ $mode == build ]]; then exit 0; fi
if [[ $mode == run ]]; then shift; fi
computing=(
    VectorSearchTests HNSWRecallTests HNSWQuantizationTests HNSWKernelTests HNSWDistanceTests
    HNSWIdMapTests HNSWParametersTests HNSWSpeedTests GeoCellsTests GeoQueryTests GeoShapeTests
    FullTextTests FullTextTopKTests FullTextTokenizerTests FullTextQueryTests BM25Tests
    CompoundIndexTests DecimalEncodingTests QueryDifferentialTests CollectionPropertyTests
    ChunkedListTests EmbeddedDifferentialTests
)
skip=()
if (( $# == 0 )); then
    skip=(--skip "^CellarTests\\.($(IFS='|'; echo "${computing[*]}"))/")
    echo "Portable run: every suite but ${#computing[@]} of computation: ${computing[*]}"
fi
swift test --skip-build "${config[@]}" ${skip[@]+"${skip[@]}"} "$@"
