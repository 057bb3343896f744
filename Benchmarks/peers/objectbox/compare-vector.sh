#!/usr/bin/env bash
# Cellar's HNSW beside ObjectBox 5.3.2's on the same real vectors, both measured here, in
# alternating rounds:
#
#   Benchmarks/peers/objectbox/compare-vector.sh VECTOR_BENCH_BINARY VECTORS_DIR [--rounds K] [--widths W,…] [--dir PARENT]
#
# VECTOR_BENCH_BINARY is Cellar's `vector-bench`, built beforehand (swift build -c release
# --package-path Benchmarks --product vector-bench); VECTORS_DIR holds base.fvecs and queries.fvecs
# (Benchmarks/scripts/embed-man-pages.py). This script fetches ObjectBox's library (fetch.sh), builds
# vector-objectbox.c when its binary is missing or older than the source, then runs K rounds
# (default 3) of `vector-objectbox --runs 1` and `VECTOR_BENCH_BINARY --vectors DIR --runs 1
# --format tsv --cold 100`, the first of the two alternating from round to round, both with the same
# search widths (default 10,16,24,32,40,48,56,64,100,150,200,300: Cellar's searchWidth, ObjectBox's
# maxResultCount with the results limited to 10) and databases under PARENT (default /var/tmp).
# It prints the build rate, each engine's recall/speed curve (medians over the rounds), the
# queries/s of each at recall@10 ≥ 0.90, 0.95, 0.99 (its fastest width reaching that recall, per
# round; the median of the rounds' ratios cellar/objectbox and their min–max), and the files.
#
# The machine is shared: rates move with its load from one round to the next; the ratios within a
# round, the two engines measured back to back, are the figures to read.
set -euo pipefail

usage() { echo "usage: compare-vector.sh VECTOR_BENCH_BINARY VECTORS_DIR [--rounds K] [--widths W,…] [--dir PARENT]" >&2; exit 2; }
[ $# -ge 2 ] || usage
bench="$1" vectors="$2"; shift 2
rounds=3 dir=/var/tmp widths=10,16,24,32,40,48,56,64,100,150,200,300
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) [ $# -ge 2 ] || usage; rounds="$2"; shift 2 ;;
        --widths) [ $# -ge 2 ] || usage; widths="$2"; shift 2 ;;
        --dir) [ $# -ge 2 ] || usage; dir="$2"; shift 2 ;;
        *) usage ;;
    esac
done
[ -x "$bench" ] || { echo "compare-vector.sh: $bench is not an executable (build Cellar's vector-bench first)" >&2; exit 1; }
[ -f "$vectors/base.fvecs" ] && [ -f "$vectors/queries.fvecs" ] || { echo "compare-vector.sh: no base.fvecs and queries.fvecs in $vectors" >&2; exit 1; }

source "$(dirname "${BASH_SOURCE[0]}")/rounds.sh"
peer="$(build_peer vector-objectbox -lm)"
out="$(output_folder compare-vector)"
run_objectbox() { run_into "$out/objectbox-$1" "$peer" --vectors "$vectors" --runs 1 --widths "$widths" --dir "$dir"; }
run_cellar() { run_into "$out/cellar-$1" "$bench" --vectors "$vectors" --runs 1 --format tsv --widths "$widths" --dir "$dir"; }
run_rounds "$rounds"

python3 - "$out" "$rounds" "$widths" <<'PY'
import statistics, sys
out, rounds, widths = sys.argv[1], int(sys.argv[2]), [int(w) for w in sys.argv[3].split(",")]

def read(engine, round):
    rates, values, n = {}, {}, 0
    for line in open(f"{out}/{engine}-{round}.tsv"):
        f = line.rstrip("\n").split("\t")
        if len(f) != 5:
            continue
        n = int(f[2])
        if f[0] == engine:
            rates[f[1]] = float(f[3])
        else:
            values[(f[0], f[1])] = float(f[3])
    d = next(s for s in rates if s.startswith("insert-d"))[len("insert-d"):]
    curve = [(w, rates[f"query-d{d}-w{w}"], values[("recall_at_10", f"d{d}-w{w}")]) for w in widths]
    return {"n": n, "d": d, "insert": rates[f"insert-d{d}"], "curve": curve, "file": values[("file_mb_insert", f"d{d}")],
            "default": (rates[f"query-d{d}"], values[("recall_at_10", f"d{d}")])}

runs = {e: [read(e, r) for r in range(1, rounds + 1)] for e in ("objectbox", "cellar")}
med = statistics.median

def rate(x):
    return f"{x:,.0f}"

def spread(pairs):
    ratios = [c / o for o, c in pairs]
    return f"{med(ratios):.2f}x", f"{min(ratios):.2f}-{max(ratios):.2f}"

def table(rows):
    widths_ = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join([r[0].ljust(widths_[0])] + [c.rjust(w) for c, w in zip(r[1:], widths_[1:])]))

first = runs["cellar"][0]
print(f"\nHNSW on real vectors: N = {first['n']:,}, d = {first['d']}, k = 10, cosine, M = 30, efConstruction = 100; "
      f"{rounds} round(s), one run per engine per round\n")
rows = [["", "objectbox", "cellar", "cellar/objectbox", "min-max"]]
pairs = [(o["insert"], c["insert"]) for o, c in zip(runs["objectbox"], runs["cellar"])]
rows.append(["build (vectors/s, one txn)", rate(med(o for o, _ in pairs)), rate(med(c for _, c in pairs)), *spread(pairs)])
pairs = [(o["default"][0], c["default"][0]) for o, c in zip(runs["objectbox"], runs["cellar"])]
rows.append(["query, defaults (q/s)", rate(med(o for o, _ in pairs)), rate(med(c for _, c in pairs)), *spread(pairs)])
rows.append(["  its recall@10", f"{med(o['default'][1] for o in runs['objectbox']):.4f}", f"{med(c['default'][1] for c in runs['cellar']):.4f}", "", ""])
for target in (0.90, 0.95, 0.99):
    def best(run):
        points = [p for p in run["curve"] if p[2] >= target]
        return max(points, key=lambda p: p[1]) if points else None
    pairs, labels = [], {"objectbox": [], "cellar": []}
    for o, c in zip(runs["objectbox"], runs["cellar"]):
        bo, bc = best(o), best(c)
        if bo: labels["objectbox"].append(bo[0])
        if bc: labels["cellar"].append(bc[0])
        if bo and bc: pairs.append((bo[1], bc[1]))
    if not pairs:
        rows.append([f"query at recall >= {target:.2f} (q/s)", "not reached" if not labels["objectbox"] else "", "not reached" if not labels["cellar"] else "", "", ""])
        continue
    wo = "/".join(str(w) for w in labels["objectbox"]); wc = "/".join(str(w) for w in labels["cellar"])
    rows.append([f"query at recall >= {target:.2f} (q/s)", f"{rate(med(o for o, _ in pairs))} (w {wo})", f"{rate(med(c for _, c in pairs))} (w {wc})", *spread(pairs)])
pairs = [(o["file"], c["file"]) for o, c in zip(runs["objectbox"], runs["cellar"])]
rows.append(["file after the build (MB)", f"{med(o for o, _ in pairs):.1f}", f"{med(c for _, c in pairs):.1f}", *spread(pairs)])
table(rows)
print("\nRecall/speed curves (medians over the rounds; width: Cellar's searchWidth, ObjectBox's maxResultCount with limit 10):\n")
rows = [["width", "objectbox q/s", "recall@10", "cellar q/s", "recall@10"]]
for j, w in enumerate(widths):
    rows.append([str(w)] + [x for e in ("objectbox", "cellar") for x in
                            (rate(med(r["curve"][j][1] for r in runs[e])), f"{med(r['curve'][j][2] for r in runs[e]):.4f}")])
table(rows)
print("\nAbove 1: Cellar faster (for the file: larger). A recall row compares, per round, each engine's fastest width whose")
print("recall@10 reaches the target (the widths per round in brackets). The machine is shared and its load moves the rates")
print("between rounds: the ratios within one round, the two engines measured back to back, are what count.")
PY
echo "compare-vector.sh: each round's output is in $out" >&2
