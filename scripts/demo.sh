#!/usr/bin/env bash
# The main job: builds Cellar and runs its demo on a store in ./cellar-demo (created on first run;
# each run adds to it). Installs libzstd-dev first when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
swift run -c release cellar demo "${1:-cellar-demo}"
swift run -c release cellar verify "${1:-cellar-demo}"
