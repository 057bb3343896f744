#!/usr/bin/env bash
# Downloads ObjectBox's C library 5.3.2 (the PyPI wheel `objectbox-clib`, which holds the prebuilt
# libobjectbox.so for this platform and nothing else), unpacks it into a cache folder and prints
# the path of libobjectbox.so. The library comes under ObjectBox's binary licence (the LICENSE file
# in the wheel); it is a peer measured on this machine, not a dependency of the project.
#
#   Benchmarks/peers/objectbox/fetch.sh [CACHE]
#
# CACHE defaults to Benchmarks/.build-objectbox (ignored by git: `.build*/`). A second call finds
# the unpacked library there and downloads nothing.
set -euo pipefail

version=5.3.2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:-$here/../../.build-objectbox}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"
unpacked="$cache/objectbox-clib-$version"

find_library() { [ -d "$unpacked" ] && find "$unpacked" -name libobjectbox.so -type f | sort | head -n 1 || true; }

library="$(find_library)"
if [ -z "$library" ]; then
    python=python3
    command -v "$python" >/dev/null || { echo "fetch.sh: python3 is needed (pip and zipfile)" >&2; exit 1; }
    wheels="$cache/wheels"
    mkdir -p "$wheels"
    echo "fetch.sh: pip download objectbox-clib==$version" >&2
    "$python" -m pip download "objectbox-clib==$version" --no-deps --only-binary=:all: -d "$wheels" >&2
    wheel="$(ls "$wheels"/objectbox_clib-"$version"-*.whl | head -n 1)"
    rm -rf "$unpacked.tmp"
    "$python" -m zipfile -e "$wheel" "$unpacked.tmp"
    rm -rf "$unpacked"
    mv "$unpacked.tmp" "$unpacked"
    library="$(find_library)"
    [ -n "$library" ] || { echo "fetch.sh: no libobjectbox.so in $wheel" >&2; exit 1; }
fi
echo "$library"
