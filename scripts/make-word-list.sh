#!/usr/bin/env bash
# Derives Tests/CellarTestSupport/Resources/words.txt (about 5,000 English words, for full-text
# tests and benchmarks; read through WordList.words) from the system word list of Debian's
# wamerican package (/usr/share/dict/words; scripts/ensure-deps.sh --bench installs it).
#
# Deterministic for a given wamerican version: in the list's order, words with an apostrophe
# (possessives such as `cat's`) are dropped, then every 15th of the plain-ASCII words is kept and
# every 2nd of the words with non-ASCII letters (`café`, `Düsseldorf`), so that the folding of
# accents is exercised too. Run it again only to change the list, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
source="${1:-/usr/share/dict/words}"
if [[ ! -r "$source" ]]; then
    echo "no word list at $source: install Debian's wamerican (scripts/ensure-deps.sh --bench)" >&2
    exit 1
fi
out=Tests/CellarTestSupport/Resources/words.txt
mkdir -p "$(dirname "$out")"
LC_ALL=C awk '
    index($0, "\047") > 0 { next }
    /[\200-\377]/ { if (accented++ % 2 == 0) print; next }
    { if (plain++ % 15 == 0) print }
' "$source" > "$out"
echo "$(wc -l < "$out") words in $out" >&2
