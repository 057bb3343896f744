#!/usr/bin/env bash
# The whole test suite (warnings are errors: every target sets treatAllWarnings(as: .error)).
# Installs libzstd-dev first when it is missing. Set CELLAR_SEED to replay a randomized test's seed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
swift build --build-tests
swift test "$@"
