"""What do 8-bit soft-score files cost? Both directions' word scores combined from float64, float32 and 8-bit copies.

RWTH De-En (``align.gold.testsets``: read from ``$NORM_ALIGN_TESTSETS`` or ``../shared/data/gold``, checksums
verified, never copied into the project): the forward model ``data/models/deen`` scores each gold pair, the
reverse model ``data/models/ende`` the pair turned round; method norm, AWI, every layer (the same layer in both
directions). Each direction's word score matrices are kept three ways: as computed (float64), round-tripped
through a float32 line of a soft-score file, and through an 8-bit line (``align.io.softscores``: each row
scaled to its maximum; the bytes as stored, since the combiners' row shares make the scale irrelevant). For
each combination of ``align.links.combine`` (hmean:threshold at 0.1, 0.2 and 0.3, hmean:itermax,
hmean:intersect, grow-diag-final-and) and layer: AER against the gold from each copy, and the number of
sentences whose links differ from the float64 ones; and the size of each kind of file.

Writes ``benchmarks/results/score_precision.{md,json}``.
Usage: python benchmarks/score_precision.py [--limit N] [--batch-size 32] [--out benchmarks/results/score_precision]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.gold import testsets  # noqa: E402
from align.io.atomic import write_text_atomic  # noqa: E402
from align.io.softscores import decode_scores, encode_scores  # noqa: E402
from align.links.alignments import Alignments  # noqa: E402
from align.links.combine import DEFAULT_THRESHOLD, combine  # noqa: E402
from align.spec.setting import Setting  # noqa: E402
from eval.experiment import load_gold  # noqa: E402
from eval.metrics import score_corpus  # noqa: E402

TEST_SET = "rwth"
FORWARD, REVERSE = "deen", "ende"
COMBINATIONS = [
    ("hmean:threshold", 0.1),
    ("hmean:threshold", 0.2),
    ("hmean:threshold", 0.3),
    ("hmean:itermax", None),
    ("hmean:intersect", None),
    ("grow-diag-final-and", None),
]
COPIES = ("float64", "float32", "8bit")


def word_matrices(model: str, pairs: list, batch_size: int) -> tuple[dict[int, list[np.ndarray]], str]:
    """{layer: [(T, S) float64 word scores per pair]} of norm at AWI, every layer; and the dtypes computed
    (token scores, word scores)."""
    from fairseq_plugins.hub import NormAligner

    aligner = NormAligner.from_checkpoint(os.path.join(ROOT, "data", "models", model))
    spec = aligner.spec(["norm"], None, ["awi"])
    items = [(f"sentence {k + 1}", s, t) for k, (s, t) in enumerate(pairs)]
    out: dict[int, list[np.ndarray]] = {}
    dtypes = set()
    for _, se, te, sc in aligner.score_items(items, spec, batch_size):
        dtypes.update(f"tokens {np.asarray(v).dtype}" for v in sc.values())
        for name, w in aligner.word_scores(se, te, sc, spec).items():
            layer = Setting.parse(name).layer
            dtypes.add(f"words {np.asarray(w).dtype}")
            out.setdefault(layer, []).append(np.asarray(w, dtype=np.float64))
    return out, ",".join(sorted(dtypes))


def round_trip(mats: list[np.ndarray], copy: str) -> tuple[list[np.ndarray], int]:
    """The matrices as a soft-score file of precision ``copy`` gives them back (float64: unchanged), and the
    file's size in bytes."""
    if copy == "float64":
        return mats, 0
    lines = [encode_scores(m, precision=copy) for m in mats]
    return [decode_scores(line, "memory", k + 1) for k, line in enumerate(lines)], sum(len(x) + 1 for x in lines)


def measure(gold: Alignments, fwd: dict, rev: dict) -> tuple[list[dict], dict]:
    """One row per (layer, combination): AER of each copy, sentences whose links differ from float64's."""
    rows, sizes = [], {}
    for layer in sorted(fwd):
        copies = {}
        for copy in COPIES:
            f, f_bytes = round_trip(fwd[layer], copy)
            r, r_bytes = round_trip(rev[layer], copy)
            copies[copy] = (f, r)
            if copy != "float64":
                sizes[f"layer {layer} {copy}"] = {"forward": f_bytes, "reverse": r_bytes}
        for name, threshold in COMBINATIONS:
            links = {
                copy: [
                    sorted(combine(name, a, b, threshold=DEFAULT_THRESHOLD if threshold is None else threshold))
                    for a, b in zip(*copies[copy])
                ]
                for copy in COPIES
            }
            row = {"layer": layer, "combination": name, "threshold": threshold}
            for copy in COPIES:
                row[f"aer_{copy}"] = 100 * score_corpus(gold, Alignments.from_lists(links[copy])).aer
            for copy in COPIES[1:]:
                row[f"differ_{copy}"] = sum(a != b for a, b in zip(links[copy], links["float64"]))
            rows.append(row)
    return rows, sizes


def label(row: dict) -> str:
    return row["combination"] + (f" {row['threshold']}" if row["threshold"] is not None else "")


def markdown(rows: list[dict], sizes: dict, meta: dict) -> str:
    n = meta["sentences"]
    lines = [
        "# Soft-score files: 8-bit against float32",
        "",
        f"RWTH De-En ({n} sentences, {meta['signature']}), norm at AWI, `data/models/{FORWARD}` forward and "
        f"`data/models/{REVERSE}` reverse (the same layer in both directions), both directions combined by "
        "`align.links.combine`. AER from the word score matrices as computed (float64; as computed: "
        f"{meta['computed_dtype']}), after a float32 soft-score file and after an 8-bit one (each row scaled to its "
        "maximum, one byte a cell); `differ`: sentences whose links are not those from float64.",
        "",
        f"`{meta['command']}` ({meta['seconds']} s).",
        "",
        "| layer | combination | AER float64 | AER float32 | AER 8-bit | differ float32 | differ 8-bit |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['layer']} | {label(r)} | {r['aer_float64']:.2f} | {r['aer_float32']:.2f} | {r['aer_8bit']:.2f} | "
            f"{r['differ_float32']} | {r['differ_8bit']} |"
        )
    worst = {c: max(abs(r[f"aer_{c}"] - r["aer_float64"]) for r in rows) for c in COPIES[1:]}
    lines += [
        "",
        f"Largest AER change from float64: float32 {worst['float32']:.3f}, 8-bit {worst['8bit']:.3f}.",
        "",
        "| file (one direction, one layer) | forward bytes | reverse bytes |",
        "|---|---:|---:|",
    ]
    lines += [f"| {k} | {v['forward']} | {v['reverse']} |" for k, v in sizes.items() if k.startswith("layer 0")]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=0, help="only the first N sentences (a quick look)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "score_precision"))
    args = ap.parse_args(argv)
    t0 = time.time()
    try:
        pairs, gold = load_gold(TEST_SET, args.limit)
        signature = testsets.load(TEST_SET).signature()
    except ValueError as e:
        print(f"score_precision: {e}", file=sys.stderr)
        return 1
    fwd, dt_f = word_matrices(FORWARD, pairs, args.batch_size)
    rev, dt_r = word_matrices(REVERSE, [(t, s) for s, t in pairs], args.batch_size)
    rows, sizes = measure(gold, fwd, rev)
    given = sys.argv[1:] if argv is None else list(argv)
    meta = {
        "command": shlex.join(["python", "benchmarks/score_precision.py", *given]),
        "seconds": round(time.time() - t0),
        "signature": signature,
        "sentences": len(pairs),
        "models": {"forward": f"data/models/{FORWARD}", "reverse": f"data/models/{REVERSE}"},
        "setting": {"method": "norm", "shift": "awi", "layers": sorted(fwd)},
        "computed_dtype": ", ".join(sorted(set(dt_f.split(",")) | set(dt_r.split(",")))),
    }
    write_text_atomic(args.out + ".json", json.dumps({"meta": meta, "rows": rows, "sizes": sizes}, indent=1) + "\n")
    text = markdown(rows, sizes, meta)
    write_text_atomic(args.out + ".md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
