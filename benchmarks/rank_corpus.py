"""Rank a real corpus by the sentence score, and what scoring costs (issue 49).

1. The 287,764 Hansard pairs of ``../shared/data/parallel/enfr_extra/hansard36-house-debates`` (Canadian
   House of Commons 1997-98; its README says about 0.2% are sentence-alignment slips), in the style the models
   trained on (``data.prep.hansards.tokenize``: lowercased, gold-style words), as ``source ||| target`` pairs
   (an empty side written as ".", which the score then rejects).
2. A calibration of ``data/models/enfr`` with ``data/models/fren`` as reverse model: link probabilities fitted
   on every Hansards gold sentence, the sentence score on the corpus's last 1,000 pairs (the slice the models
   held out for BLEU: ``align-calibrate --sentence-pairs``), against noisy copies of them.
3. Cost: ``align-extract --reverse-model`` on the first ``--cost-pairs`` pairs, with and without
   ``--calibration --sentence-scores``, alternating, the fastest of ``--repeats`` kept. Target <= 1.2x.
4. ``align-filter`` over the whole corpus (``--keep-fraction``: the lowest 1,000 rejected), and the length
   ratio's lowest 1,000 (``-|log(T/S)|``, ties in line order); both lists and a blind sample of each for
   reading by hand go to ``--work``.

Writes ``benchmarks/results/rank_corpus.json``; the reading of the samples is reported in
``benchmarks/results/rank_corpus.md``. The shipped models trained on this corpus (after a 2.5 length-ratio
filter): the scores are of pairs they saw.
Usage: python benchmarks/rank_corpus.py [--limit N] [--work work/rank_corpus] [--cost-pairs 4000]
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import subprocess
import sys
import time
from contextlib import redirect_stderr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.cli.extract import main as extract  # noqa: E402
from align.io.atomic import write_text_atomic  # noqa: E402
from data.prep.hansards import HELD_OUT_TEST, tokenize  # noqa: E402

LOWEST = 1000


def corpus(out: str, limit: int) -> int:
    """Write the Hansard pairs in the models' style as ``src ||| tgt`` lines, and the last HELD_OUT_TEST of them
    to ``out.heldout``; the number of pairs."""
    shared = os.environ.get("NORM_ALIGN_SHARED", os.path.join(ROOT, "..", "shared", "data"))
    base = os.path.join(shared, "parallel", "enfr_extra", "hansard36-house-debates", "hansard36-house-debates")
    lines = []
    with open(base + ".en", encoding="utf-8") as en, open(base + ".fr", encoding="utf-8") as fr:
        for e, r in zip(en, fr):
            s, t = tokenize(e.rstrip("\n"), "en"), tokenize(r.rstrip("\n"), "fr")
            lines.append(f"{' '.join(s) or '.'} ||| {' '.join(t) or '.'}\n")
    write_text_atomic(out + ".heldout", "".join(lines[-HELD_OUT_TEST:]))
    lines = lines[:limit] if limit else lines
    write_text_atomic(out, "".join(lines))
    return len(lines)


def run(argv: list[str]) -> None:
    """A command of this package, its output passed through; SystemExit if it fails."""
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
    r = subprocess.run(argv, env=env, cwd=ROOT)
    if r.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({r.returncode})")


def timed(argv: list[str]) -> float:
    t = time.perf_counter()
    with redirect_stderr(io.StringIO()) as err:
        code = extract(argv)
    if code != 0:
        raise SystemExit(f"align-extract {' '.join(argv)} failed: {err.getvalue().strip()}")
    return time.perf_counter() - t


def cost(pairs: str, cal: str, n: int, repeats: int, work: str) -> dict:
    """Fastest seconds of both-direction extraction with and without sentence scores on the first ``n`` pairs."""
    head = os.path.join(work, f"head{n}.txt")
    with open(pairs, encoding="utf-8") as f, open(head, "w", encoding="utf-8") as g:
        for _, line in zip(range(n), f):
            g.write(line)
    common = ["--model", "data/models/enfr", "--reverse-model", "data/models/fren", "--input", head,
              "--methods", "norm", "--layers", "0", "--progress", "off", "--overwrite"]  # fmt: skip
    plain, scored = [], []
    for _ in range(repeats):
        plain.append(timed(common + ["--out", os.path.join(work, "cost-plain")]))
        scored.append(timed(common + ["--out", os.path.join(work, "cost-scored"), "--calibration", cal,
                                      "--sentence-scores"]))  # fmt: skip
    return {"pairs": n, "plain_s": min(plain), "scored_s": min(scored), "ratio": min(scored) / min(plain)}


def score_in_shards(pairs: str, cal: str, shards: int, out: str) -> str:
    """Sentence scores of every pair from ``shards`` one-thread ``align-extract --shard K/N`` processes run side by
    side, merged (``align-merge``); the merged scores file (the features beside it, sentence_features.jsonl: a new
    sentence model ranks the corpus again without running the models)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = []
    for k in range(shards):
        argv = ["align-extract", "--model", "data/models/enfr", "--reverse-model", "data/models/fren", "--input", pairs,
                "--out", out, "--shard", f"{k}/{shards}", "--calibration", cal, "--sentence-features", "--methods",
                "norm", "--layers", "0", "--shifts", "awi", "--combine", "", "--truncate", "--batch-size", "64",
                "--overwrite", "--progress", "on" if k == 0 else "off"]  # fmt: skip
        procs.append(subprocess.Popen(argv, env=env, cwd=ROOT))
    codes = [p.wait() for p in procs]
    if any(codes):
        raise SystemExit(f"align-extract shards failed: {codes}")
    run(["align-merge", out, "--overwrite"])
    return os.path.join(out, "merged", "sentence_scores.tsv")


def lowest_by_length(pairs: str) -> list[tuple[int, float]]:
    """The ``LOWEST`` pairs of least ``-|log(T/S)|`` (1-based line, value), ties in line order."""
    vals = []
    with open(pairs, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s, t = line.rstrip("\n").split(" ||| ")
            vals.append((-abs(math.log(len(t.split()) / len(s.split()))), n))
    vals.sort()
    return [(n, v) for v, n in vals[:LOWEST]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=0, help="only the first N pairs (a quick run)")
    ap.add_argument("--work", default=os.path.join(ROOT, "work", "rank_corpus"))
    ap.add_argument("--cost-pairs", type=int, default=4000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--sample", type=int, default=100, help="pairs of each lowest 1,000 to read by hand")
    ap.add_argument("--cost-only", action="store_true", help="measure the cost and stop (no ranking)")
    ap.add_argument("--skip-cost", action="store_true", help="rank without measuring the cost again")
    ap.add_argument("--shards", type=int, default=1, help="score in N one-thread shards side by side (default 1)")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "rank_corpus.json"))
    args = ap.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    t0 = time.time()
    pairs = os.path.join(args.work, "hansard36.src-tgt")
    n = corpus(pairs, args.limit)
    cal = os.path.join(args.work, "enfr-fren.cal.json")
    if not os.path.exists(cal):
        run(["align-calibrate", "--model", "data/models/enfr", "--reverse-model", "data/models/fren", "-t",
             "hansards", "--layer", "0", "--fit-on", "all", "--sentence-pairs", pairs + ".heldout", "-o", cal])  # fmt: skip
    result: dict = {}
    if os.path.exists(args.out):
        with open(args.out, encoding="utf-8") as f:
            result = json.load(f)
    if not args.skip_cost:
        measured = cost(pairs, cal, min(args.cost_pairs, n), args.repeats, args.work)
        print(f"cost: {measured['scored_s']:.1f} s with sentence scores, {measured['plain_s']:.1f} s without "
              f"({measured['ratio']:.2f}x) on {measured['pairs']} pairs")  # fmt: skip
        command = (
            f"python benchmarks/rank_corpus.py --cost-only --cost-pairs {args.cost_pairs} --repeats {args.repeats}"
        )
        result["cost"] = {**measured, "command": command}
        if args.cost_only:
            write_text_atomic(args.out, json.dumps(result, indent=1) + "\n")
            return 0
    filtered = os.path.join(args.work, "filtered")
    if args.shards > 1:
        # the cluster path of the guide: align-extract --sentence-scores --shard K/N, align-merge, align-filter --scores
        # (N one-thread processes keep 2 cores busier than one two-thread process on these small models)
        scores = score_in_shards(pairs, cal, args.shards, os.path.join(args.work, "shards"))
        run(["align-filter", pairs, "--scores", scores, "--keep-fraction", str(1 - LOWEST / n), "--out", filtered,
             "--overwrite"])  # fmt: skip
    else:
        run(["align-filter", pairs, "--model", "data/models/enfr", "--reverse-model", "data/models/fren",
             "--calibration", cal, "--keep-fraction", str(1 - LOWEST / n), "--out", filtered, "--overwrite",
             "--progress", "on", "--batch-size", "64", "--truncate"])  # fmt: skip
    with open(os.path.join(filtered, "rejected.tsv"), encoding="utf-8") as f:
        by_score = [(int(a), float(b)) for a, b, _ in (line.split("\t", 2) for line in f)]
    by_length = lowest_by_length(pairs)
    with open(pairs, encoding="utf-8") as f:
        text = f.read().splitlines()
    # a blind sample: both lists' samples mixed, each line with an id only the key file links to its list
    rng = random.Random(1)
    key, sample = {}, []
    for name, rows in (("score", by_score), ("length", by_length)):
        for n_line, _ in rng.sample(rows, min(args.sample, len(rows))):
            sample.append((name, n_line))
    rng.shuffle(sample)
    with open(os.path.join(args.work, "blind_sample.txt"), "w", encoding="utf-8") as f:
        for i, (name, n_line) in enumerate(sample, 1):
            key[i] = {"list": name, "line": n_line}
            f.write(f"{i}\t{text[n_line - 1]}\n")
    write_text_atomic(os.path.join(args.work, "blind_key.json"), json.dumps(key, indent=0) + "\n")
    both = len({n for n, _ in by_score} & {n for n, _ in by_length})
    result |= {
        "pairs": n,
        "lowest": LOWEST,
        "in_both_lowest": both,
        "score_lowest_max": max(v for _, v in by_score),
        "seconds": round(time.time() - t0),
        "command": "python benchmarks/rank_corpus.py --skip-cost"
        + (f" --shards {args.shards}" if args.shards > 1 else "")
        + (f" --limit {args.limit}" if args.limit else ""),
    }
    write_text_atomic(args.out, json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
