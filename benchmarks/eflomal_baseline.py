"""Statistical baseline on equal data: eflomal trained on exactly the text our NMT models saw (their
training pairs plus the test sentences repeated ``--test-repeat`` times, never the gold links; 1 is
the lilt/alignment-scripts protocol), forward, reverse and symmetrized, scored on the gold.
Writes benchmarks/results/eflomal_<pair>_x<N>.json and, for paired tests against it (benchmarks/bidirectional.py),
the links of every system on the test sentences: benchmarks/results/eflomal_<pair>_x<N>/SYSTEM.align (Pharaoh,
0-based, source first, the gold's sentence order; links only, never the text or the gold).

Usage: python benchmarks/eflomal_baseline.py [--pair deen|enfr] [--test-repeat 20] [--shared ../shared/data]
  deen: every De-En pair of ../shared (data.prep.corpus) + the RWTH sentences, as data/models/deen saw them
  enfr: the En-Fr text of data.prep.hansards (Hansards, news, Tatoeba, FLORES, Multi30k) + the Hansards test set
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.gold.testsets import shared_data_dir
from align.io.atomic import write_text_atomic
from align.io.formats import read_alignments, write_alignments
from align.io.text import read_text_pairs
from align.links.alignments import Alignments  # noqa: E402
from align.links.symmetrize import symmetrize_corpus  # noqa: E402
from eval.metrics import bootstrap_ci, count_matches, score_counts  # noqa: E402


def _deen(shared: str) -> list[tuple[str, str]]:
    from data.prep.corpus import collect

    return collect(shared)


def _enfr(shared: str) -> list[tuple[str, str]]:
    from data.prep.hansards import collect

    return collect(shared).train


# pair -> (training text, gold folder, file stem, gold format)
PAIRS = {"deen": (_deen, "deen_rwth", "deen", "talp"), "enfr": (_enfr, "enfr_hansards", "enfr", "talp")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pair", default="deen", choices=sorted(PAIRS))
    ap.add_argument(
        "--test-repeat",
        type=int,
        default=20,
        help="copies of the test sentences in the training text (20: as our NMT models; 1: lilt)",
    )
    ap.add_argument("--shared", help="the shared data folder (default $NORM_ALIGN_SHARED)")
    ap.add_argument("--out", help="default benchmarks/results/eflomal_<pair>_x<N>.json")
    args = ap.parse_args(argv)
    args.shared = shared_data_dir(args.shared)
    if args.test_repeat < 1:
        ap.error("--test-repeat must be at least 1 (the test sentences must be in the text to be aligned)")
    out = args.out or os.path.join(ROOT, "benchmarks", "results", f"eflomal_{args.pair}_x{args.test_repeat}.json")
    import eflomal

    t0 = time.time()
    collect, gold_dir, stem, fmt = PAIRS[args.pair]
    train = collect(args.shared)
    gold_path = os.path.join(args.shared, "gold", gold_dir)
    test = [
        (" ".join(s).lower(), " ".join(t).lower())
        for s, t in read_text_pairs(os.path.join(gold_path, f"{stem}.src-tgt"))
    ]
    gold = read_alignments(os.path.join(gold_path, f"{stem}.gold"), fmt)
    # the test copies last: the final len(test) output lines are the links of the last copy
    src = [s for s, _ in train] + [s for s, _ in test] * args.test_repeat
    tgt = [t for _, t in train] + [t for _, t in test] * args.test_repeat
    with tempfile.TemporaryDirectory() as d:
        fwd, rev = os.path.join(d, "fwd"), os.path.join(d, "rev")
        eflomal.Aligner().align(src, tgt, links_filename_fwd=fwd, links_filename_rev=rev, quiet=True)
        n = len(test)
        systems: dict[str, Alignments] = {}
        for name, path in (("forward", fwd), ("reverse", rev)):
            with open(path) as f:
                lines = f.read().splitlines()[-n:]
            with open(path + ".test", "w") as f:
                f.writelines(line + "\n" for line in lines)
            systems[name] = read_alignments(path + ".test")
    for m in ("intersect", "grow-diag", "grow-diag-final-and", "union"):
        systems[m] = symmetrize_corpus(systems["forward"], systems["reverse"], m)
    links_dir = os.path.splitext(out)[0]
    os.makedirs(links_dir, exist_ok=True)
    for name, hyp in systems.items():
        write_alignments(hyp, os.path.join(links_dir, f"{name}.align"), "pharaoh")
    results = {}
    for name, hyp in systems.items():
        c = count_matches(gold, hyp)
        d = score_counts(c).as_dict(f"eflomal-{name}")
        d["ci95_aer"] = [100 * x for x in bootstrap_ci(c, 1000)["aer"]]
        results[name] = d
        print(
            f"eflomal {name:<20} AER {d['aer']:5.1f} [{d['ci95_aer'][0]:.1f}, {d['ci95_aer'][1]:.1f}] "
            f"P {d['precision']:5.1f} R {d['recall']:5.1f} links {d['links']}"
        )
    from importlib.metadata import version

    meta = {
        "pair": args.pair,
        "train_pairs": len(train),
        "test_pairs": len(test),
        "test_repeat": args.test_repeat,
        "protocol": f"training text of our {args.pair} NMT model + the test sentences x{args.test_repeat} "
        "(never their links)",
        "eflomal": version("eflomal"),
        "seconds": round(time.time() - t0, 1),
        "results": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    write_text_atomic(out, json.dumps(meta, indent=1))
    print(
        f"{len(train)} training pairs + {len(test)} test pairs x{args.test_repeat}, {meta['seconds']} s -> "
        f"{os.path.relpath(out, ROOT)} (links in {os.path.relpath(links_dir, ROOT)}/)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
