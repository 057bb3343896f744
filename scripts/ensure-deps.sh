#!/usr/bin/env bash
# Installs the system packages Cellar builds against, when they are missing:
#   libzstd-dev and libssl-dev (always: compression, and on Linux libcrypto for encryption at
#   rest); liblmdb-dev, libsqlite3-dev and wamerican (with --bench: the Benchmarks package
#   compares against LMDB, and crud against SQLite through GRDB, which links the system SQLite;
#   wamerican's word list is what scripts/make-word-list.sh derives the committed test word list
#   from, and the text the full-text benchmarks index).
#   chromium (with --browser: the data browser's tests, Tools/CellarBrowse, drive headless
#   Chromium; on macOS they skip without it).
#   postgresql (with --postgres: the sync package's tests, Sync/, run against a throwaway server
#   that scripts/postgres.sh starts; on macOS install it yourself, Homebrew's postgresql@17 say),
#   and openssl (the certificates of the TLS test's server).
# Debian/Ubuntu through apt-get (as root, or with sudo); macOS through Homebrew.
set -euo pipefail

want=(libzstd-dev libssl-dev)
for option in "$@"; do
    case "$option" in
        --bench) want+=(liblmdb-dev libsqlite3-dev wamerican) ;;
        --browser) want+=(chromium) ;;
        --postgres) want+=(postgresql openssl) ;;
        *) echo "ensure-deps.sh: unknown option $option (--bench, --browser, --postgres)" >&2; exit 64 ;;
    esac
done

if [[ "$(uname -s)" == "Darwin" ]]; then
    brew list zstd >/dev/null 2>&1 || brew install zstd
    exit 0
fi

missing=()
for package in "${want[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "installing ${missing[*]} ..." >&2
if [[ $(id -u) -eq 0 ]]; then sudo=(); else sudo=(sudo); fi
"${sudo[@]}" apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
