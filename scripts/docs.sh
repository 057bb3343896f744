#!/usr/bin/env bash
# Builds the DocC documentation of the Cellar and CellarStorage libraries with swift-docc-plugin,
# warnings as errors: a symbol link (``Box``) or an article link (<doc:Queries>) that does not
# resolve, a malformed doc comment or catalog fails the run. The catalogs are
# Sources/Cellar/Cellar.docc and Sources/CellarStorage/CellarStorage.docc.
#
# A build folder of its own (.build-docs): the plugin builds the targets with every trait of the
# package enabled (`ZstdOnMacOS` too), which in .build would overwrite the objects of the test
# suite's build and have the next build there compile Cellar and CellarStorage again.
# The archives land in .build-docs/plugins/Swift-DocC/outputs/{Cellar,CellarStorage}.doccarchive.
# To preview one:
#   swift package --scratch-path .build-docs --disable-sandbox preview-documentation --target Cellar
# Extra arguments go to the plugin (`scripts/docs.sh --verbose`). Installs libzstd-dev first when
# it is missing (the symbol graphs come from a build of the targets).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-deps.sh
# The versions the root package resolved, when it did: a build beside this one in .build must not
# find Package.resolved rewritten under it.
resolved=()
if [[ -e Package.resolved ]]; then resolved=(--only-use-versions-from-resolved-file); fi
swift package --scratch-path .build-docs ${resolved[@]+"${resolved[@]}"} \
    generate-documentation --target Cellar --target CellarStorage --warnings-as-errors "$@"
