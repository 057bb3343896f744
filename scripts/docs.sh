#!/usr/bin/env bash
# Builds the DocC documentation of the Cellar and CellarStorage libraries with swift-docc-plugin,
# warnings as errors: a symbol link (``Box``) or an article link (<doc:Queries>) that does not
# resolve, a malformed doc comment or catalog fails the run. The catalogs are
# Sources/Cellar/Cellar.docc and Sources/CellarStorage/CellarStorage.docc.
#
# The archives land in .build/plugins/Swift-DocC/outputs/{Cellar,CellarStorage}.doccarchive.
# To preview one: `swift package --disable-sandbox preview-documentation --target Cellar`.
# Extra arguments go to the plugin (`scripts/docs.sh --verbose`). Installs libzstd-dev first when
# it is missing (the symbol graphs come from a build of the targets).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
swift package generate-documentation --target Cellar --target CellarStorage --warnings-as-errors "$@"
