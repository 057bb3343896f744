#!/usr/bin/env bash
# Cellar beside ObjectBox 5.3.2's C core on the CRUD workload (docs/crud-workload.md), both measured
# here, in alternating rounds:
#
#   Benchmarks/peers/objectbox/compare.sh CRUD_BINARY [--n N] [--rounds K] [--dir PARENT]
#
# CRUD_BINARY is Cellar's `crud` harness, built beforehand (swift build -c release --package-path
# Benchmarks --product crud). This script fetches ObjectBox's library (fetch.sh), builds
# crud-objectbox.c when its binary is missing or older than the source, then runs K rounds (default
# 3) of `crud-objectbox --runs 1` and `CRUD_BINARY --engines cellar --runs 1 --format tsv`, the
# first of the two alternating from round to round, both with databases under PARENT (default
# /var/tmp). It prints per step the median rate of each engine over the rounds, the median of the
# rounds' ratios cellar/objectbox, and their min–max.
#
# The machine is shared: rates move with its load from one round to the next. Each round measures
# the two engines back to back, so the ratio within a round is the figure to read; its spread over
# the rounds says how steady it was.
set -euo pipefail

usage() { echo "usage: compare.sh CRUD_BINARY [--n N] [--rounds K] [--dir PARENT]" >&2; exit 2; }
[ $# -ge 1 ] || usage
crud="$1"; shift
n=100000 rounds=3 dir=/var/tmp
while [ $# -gt 0 ]; do
    case "$1" in
        --n) [ $# -ge 2 ] || usage; n="$2"; shift 2 ;;
        --rounds) [ $# -ge 2 ] || usage; rounds="$2"; shift 2 ;;
        --dir) [ $# -ge 2 ] || usage; dir="$2"; shift 2 ;;
        *) usage ;;
    esac
done
[ -x "$crud" ] || { echo "compare.sh: $crud is not an executable (build Cellar's crud first)" >&2; exit 1; }

source "$(dirname "${BASH_SOURCE[0]}")/rounds.sh"
peer="$(build_peer crud-objectbox)"
out="$(output_folder compare)"
run_objectbox() { run_into "$out/objectbox-$1" "$peer" --n "$n" --runs 1 --dir "$dir"; }
run_cellar() { run_into "$out/cellar-$1" "$crud" --engines cellar --runs 1 --format tsv --n "$n" --dir "$dir"; }
run_rounds "$rounds"

python3 - "$out" "$rounds" "$n" <<'PY'
import statistics, sys
out, rounds, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
steps = ["a", "b", "bget", "c", "d", "e", "e2", "e2find", "e3", "f", "g"]
titles = {"a": "put N new, one txn", "b": "get by id, random, title length", "bget": "get objects by id, random",
          "c": "scan, sum creationDate", "d": "update all, one txn", "e": "count author==42 (q/s)",
          "e2": "visit hits, title length (q/s)", "e2find": "find hits, every field (q/s)",
          "e3": "ids of author==42 (q/s)", "f": "durable 1-object commits (/s)", "g": "remove all, one txn"}

def read(engine, round):
    values = {}
    for line in open(f"{out}/{engine}-{round}.tsv"):
        fields = line.rstrip("\n").split("\t")
        if len(fields) == 5 and fields[0] == engine:
            values[fields[1]] = float(fields[3])
    return values

runs = {e: [read(e, r) for r in range(1, rounds + 1)] for e in ("objectbox", "cellar")}

def rate(x):
    return f"{x:,.1f}" if x < 1000 else f"{x / 1e6:.2f}M" if x >= 1e7 else f"{x:,.0f}"

rows = [["step", "objectbox", "cellar", "cellar/objectbox", "min-max"]]
for step in steps:
    pairs = [(o[step], c[step]) for o, c in zip(runs["objectbox"], runs["cellar"]) if step in o and step in c]
    if not pairs:
        continue
    ratios = [c / o for o, c in pairs]
    rows.append([f"{step:7} {titles[step]}", rate(statistics.median(o for o, _ in pairs)),
                 rate(statistics.median(c for _, c in pairs)), f"{statistics.median(ratios):.2f}x",
                 f"{min(ratios):.2f}-{max(ratios):.2f}"])
for key, label in (("size_after_a", "file after a (MB)"), ("size_after_d", "file after d (MB)")):
    pairs = [(o[key], c[key]) for o, c in zip(runs["objectbox"], runs["cellar"]) if key in o and key in c]
    if pairs:
        ratios = [c / o for o, c in pairs]
        rows.append([label, f"{statistics.median(o for o, _ in pairs) / 1e6:.1f}", f"{statistics.median(c for _, c in pairs) / 1e6:.1f}",
                     f"{statistics.median(ratios):.2f}x", f"{min(ratios):.2f}-{max(ratios):.2f}"])
widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
print(f"\nCRUD workload, N = {n:,}, {rounds} round(s), one run per engine per round; ops/s (queries/s for e*, commits/s for f)\n")
for r in rows:
    print("  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]))
print("\nobjectbox: ObjectBox 5.3.2's C core (crud-objectbox.c); cellar: Cellar's crud --engines cellar.")
print("Medians over the rounds; cellar/objectbox is the median of the per-round ratios (above 1: Cellar faster,")
print("for the file sizes: Cellar larger), min-max their spread. The machine is shared and its load moves the")
print("rates between rounds: the ratios within one round, the two engines measured back to back, are what count.")
PY
echo "compare.sh: each round's output is in $out" >&2
