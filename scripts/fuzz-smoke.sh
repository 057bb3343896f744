#!/usr/bin/env bash
# Fuzz smoke test: builds the libFuzzer targets of Fuzz/ with AddressSanitizer (one build) and runs
# each for FUZZ_SECONDS seconds (default 30), one per core at a time, on a temporary copy of its
# committed seed corpus, so that a run never changes the repository. Prints one summary line per
# fuzzer; exits non-zero when a fuzzer did (1: ASan report or crash, 77: a Swift trap, 70:
# timeout, …), keeping the crashing input in a temporary directory whose path it prints.
#
#   FUZZ_SECONDS=60 scripts/fuzz-smoke.sh
#   scripts/fuzz-smoke.sh build     # only the build (CI starts it beside the benchmarks' build)
#   scripts/fuzz-smoke.sh run       # only the runs, of what the last build made (CI, after that)
#
# Environment:
#   FUZZ_SECONDS   seconds per fuzzer (default 30)
#   FUZZ_CONFIG    debug (default) or release (faster, and ASan also sees the standard library's
#                  inlined pointer reads; see Fuzz/README.md)
#   FUZZ_TIMEOUT   seconds one input may take before libFuzzer reports a hang (default 10)
#   FUZZ_JOBS      fuzzers run side by side (default: the number of cores)
#   FUZZ_TARGETS   which fuzzers to run (default "FuzzOpenStore FuzzNode FuzzModelJSON FuzzRecord FuzzFlex FuzzIdentifier FuzzDecompress FuzzEmbedded
#                  FuzzFullTextQuery FuzzGeo")
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${FUZZ_SECONDS:-30}
config=${FUZZ_CONFIG:-debug}
timeout=${FUZZ_TIMEOUT:-10}
targets=${FUZZ_TARGETS:-FuzzOpenStore FuzzNode FuzzModelJSON FuzzRecord FuzzFlex FuzzIdentifier FuzzDecompress FuzzEmbedded FuzzFullTextQuery FuzzGeo}

corpus_of() {
    case "$1" in
        FuzzOpenStore) echo open-store ;;
        FuzzNode) echo node ;;
        FuzzModelJSON) echo model-json ;;
        FuzzRecord) echo record ;;
        FuzzFlex) echo flex ;;
        FuzzIdentifier) echo identifier ;;
        FuzzDecompress) echo decompress ;;
        FuzzEmbedded) echo embedded ;;
        FuzzFullTextQuery) echo fulltext-query ;;
        FuzzGeo) echo geo ;;
        *) echo "fuzz-smoke: unknown fuzzer $1" >&2; exit 2 ;;
    esac
}

case "$config" in
    debug) extra=() ;;
    # Release links with --gc-sections by default, which drops libFuzzer's coverage counters.
    release) extra=(--disable-dead-strip) ;;
    *) echo "fuzz-smoke: FUZZ_CONFIG must be debug or release, not $config" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/cellar-fuzz-smoke.XXXXXX")
# FuzzOpenStore rewrites its data file on every run: keep that on tmpfs when there is one (on ext4
# each truncate-and-rewrite costs a device flush).
if [[ -d /dev/shm && -w /dev/shm ]]; then
    scratch=$(mktemp -d /dev/shm/cellar-fuzz-smoke.XXXXXX)
else
    scratch="$work/scratch"
    mkdir -p "$scratch"
fi
failed=0
cleanup() {
    rm -rf "$scratch"
    if [[ $failed == 0 ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT

# Both sanitizers, and both spellings: SwiftPM passes `--sanitize` to swiftc as separate
# `-sanitize=fuzzer -sanitize=address` flags, of which swiftc 6.3 keeps only the last, so the
# Swift code would get ASan but no coverage instrumentation (libFuzzer then reports 2 counters and
# fuzzes blindly). The combined -Xswiftc flag comes last and restores both; `--sanitize` is still
# needed for the link (libFuzzer's main and the runtimes).
# Line tables are all a report needs (file and line of each frame): no full debug info.
build_flags=(-c "$config" --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address
             -Xswiftc -gline-tables-only -Xcc -gline-tables-only ${extra[@]+"${extra[@]}"})

for target in $targets; do corpus_of "$target" > /dev/null; done
# One build for every fuzzer: the package's products all at once, MakeCorpus left out (see
# Fuzz/Package.swift).
export CELLAR_FUZZERS_ONLY=1
# The engine's encryption through swift-crypto (its backend off Linux, CryptoKit on Apple
# platforms) instead of the system's libcrypto: FuzzSupport needs swift-crypto anyway, and so the
# backend Apple platforms run is compiled and fuzzed here.
export CELLAR_CRYPTO=swift-crypto
build_fuzzers() {
    local start=$SECONDS compiled
    if ! swift build --package-path Fuzz "${build_flags[@]}" > "$work/build.log" 2>&1; then
        grep -v 'ld.gold: warning: Cannot export local symbol' "$work/build.log" | tail -40 >&2
        echo "fuzz: build FAILED (log: $work/build.log)"
        failed=1
        exit 1
    fi
    # What the build compiled (nothing, when it is a no-op after an earlier one): a build that
    # redoes work says which modules.
    compiled=$(sed -n 's/^\[[0-9]*\/[0-9]*\] Compiling \([^ ]*\) .*/\1/p' "$work/build.log" | sort -u | head -16 | tr '\n' ' ')
    echo "fuzz: built every fuzzer ($config, ASan + libFuzzer) in $((SECONDS - start)) s; modules compiled: ${compiled:-none}"
}
case ${1:-} in
    build) build_fuzzers; exit 0 ;;
    # What the last build made, as it is. CI builds in one process and runs in a later one: a
    # build there, after other packages' builds in between, compiled every Swift module again
    # (95 s, all of it wasted: the sources had not changed; why it did is not known).
    run) ;;
    *) build_fuzzers ;;
esac
bin_dir=$(swift build --package-path Fuzz "${build_flags[@]}" --show-bin-path)
for target in $targets; do
    [[ -x "$bin_dir/$target" ]] || { echo "fuzz: $bin_dir/$target is not built (scripts/fuzz-smoke.sh build)"; exit 1; }
done

# Runs one fuzzer for $seconds seconds on a copy of its corpus; its log and exit status go into
# $work (a scratch directory of its own, so that fuzzers can run side by side).
run_fuzzer() {
    local target=$1 dir corpus artifacts rc=0
    dir=$(corpus_of "$target")
    corpus="$work/corpus-$dir"
    artifacts="$work/artifacts-$target"
    mkdir -p "$artifacts" "$scratch/$target"
    cp -R "Fuzz/corpus/$dir" "$corpus"
    SWIFT_BACKTRACE=enable=no CELLAR_FUZZ_SCRATCH="$scratch/$target" \
        "$bin_dir/$target" -max_total_time="$seconds" -timeout="$timeout" -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "$corpus" > "$work/$target.log" 2>&1 || rc=$?
    echo "$rc" > "$work/$target.status"
}

# Each fuzzer is one process on one core: FUZZ_JOBS of them at a time (default: one per core).
# Each still runs its $seconds seconds; the summaries come in the list's order.
jobs=${FUZZ_JOBS:-$(nproc)}
running=0
for target in $targets; do
    if ((running >= jobs)); then wait -n; running=$((running - 1)); fi
    run_fuzzer "$target" &
    running=$((running + 1))
done
wait

for target in $targets; do
    log="$work/$target.log"
    artifacts="$work/artifacts-$target"
    rc=$(cat "$work/$target.status")
    runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
    if [[ -z $runs ]]; then runs=$(sed -n 's/^Done \([0-9]*\) runs in.*/\1/p' "$log" | tail -1); fi
    runs=${runs:-?}
    rate=$(sed -n 's/^stat::average_exec_per_sec: *\([0-9]*\).*/\1/p' "$log" | tail -1)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    if [[ $rc == 0 ]]; then
        echo "fuzz $target: $seconds s, $runs runs (${rate:-?}/s, ${cov:-no coverage line}), ok"
    else
        failed=1
        case $rc in
            1) what="ASan report or crash" ;;
            70) what="timeout" ;;
            71) what="out of memory" ;;
            77) what="Swift trap" ;;
            *) what="exit $rc" ;;
        esac
        echo "fuzz $target: $seconds s, $runs runs, FAILED ($what, exit $rc)"
        # The report, without libFuzzer's progress lines.
        grep -Ev '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED)' "$log" | tail -60 >&2
        for input in "$artifacts"/*; do
            [[ -e $input ]] || continue
            echo "  input: $input ($(wc -c < "$input") bytes)" >&2
            echo "  reproduce: SWIFT_BACKTRACE=enable=no $bin_dir/$target $input" >&2
            # CI keeps only the log: small inputs go into it too.
            if (( $(wc -c < "$input") <= 32768 )); then
                echo "  base64: $(base64 < "$input" | tr -d '\n')" >&2
            fi
        done
        echo "  log: $log" >&2
    fi
done

exit $failed
