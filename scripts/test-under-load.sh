#!/usr/bin/env bash
# The whole test suite on a busy machine: builds it (scripts/test.sh's build, without load), then
# runs it ROUNDS times in a row while LOAD busy processes (default: one per core) keep every core
# at 100 %. No test may depend on how fast the machine is at the moment, and this is how that is
# checked. Prints the time of each run; stops at the first failing run and exits with its status.
#
#   scripts/test-under-load.sh                 # one run under load
#   ROUNDS=3 scripts/test-under-load.sh        # three in a row
#   LOAD=4 scripts/test-under-load.sh --filter KillTests
#
# Arguments are passed to `swift test`, as scripts/test.sh passes them.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-1}
load=${LOAD:-$(nproc)}

scripts/ensure-deps.sh
swift build --build-tests

busy=()
stop_load() {
    if ((${#busy[@]} > 0)); then kill "${busy[@]}" 2> /dev/null || true; wait "${busy[@]}" 2> /dev/null || true; fi
    busy=()
}
trap stop_load EXIT
for ((i = 0; i < load; i++)); do
    # A shell loop that never sleeps nor makes a system call: one core's worth of load each.
    bash -c 'while :; do :; done' &
    busy+=("$!")
done
echo "test-under-load: $load busy processes (${busy[*]}) on $(nproc) cores; $rounds run(s)"

for ((round = 1; round <= rounds; round++)); do
    started=$SECONDS
    status=0
    swift test --skip-build "$@" || status=$?
    echo "test-under-load: run $round of $rounds: $((SECONDS - started)) s, $([[ $status == 0 ]] && echo passed || echo "FAILED (exit $status)")"
    [[ $status == 0 ]] || exit "$status"
done
