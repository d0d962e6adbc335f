"""Statistical baseline on equal data: eflomal trained on every De-En pair of ../shared plus the
RWTH test sentences (never their gold links; the lilt/alignment-scripts protocol), forward,
reverse and symmetrized, scored on the RWTH gold. Writes benchmarks/results/eflomal_deen.json.
Usage: python benchmarks/eflomal_baseline.py [--shared ../shared/data]
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

from align.corpus import collect  # noqa: E402

from align.formats import read_alignments, read_text_pairs, shared_data_dir  # noqa: E402
from align.links import Alignments  # noqa: E402
from align.symmetrize import symmetrize_corpus  # noqa: E402
from eval.metrics import bootstrap_ci, count_matches, score_counts  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=shared_data_dir())
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "eflomal_deen.json"))
    args = ap.parse_args(argv)
    import eflomal

    t0 = time.time()
    train = collect(args.shared)
    test = [(" ".join(s).lower(), " ".join(t).lower())
            for s, t in read_text_pairs(os.path.join(args.shared, "gold", "deen_rwth", "deen.src-tgt"))]
    gold = read_alignments(os.path.join(args.shared, "gold", "deen_rwth", "deen.gold"), "talp")
    src = [d for d, _ in train] + [d for d, _ in test]
    tgt = [e for _, e in train] + [e for _, e in test]
    with tempfile.TemporaryDirectory() as d:
        fwd, rev = os.path.join(d, "fwd"), os.path.join(d, "rev")
        eflomal.Aligner().align(src, tgt, links_filename_fwd=fwd, links_filename_rev=rev, quiet=True)
        n = len(test)
        with open(fwd) as f:
            fl = f.read().splitlines()[-n:]
        with open(rev) as f:
            rl = f.read().splitlines()[-n:]
        for name, lines in (("fwd.test", fl), ("rev.test", rl)):
            with open(os.path.join(d, name), "w") as f:
                f.writelines(line + "\n" for line in lines)
        forward = read_alignments(os.path.join(d, "fwd.test"))
        reverse = read_alignments(os.path.join(d, "rev.test"))
    systems: dict[str, Alignments] = {"forward": forward, "reverse": reverse}
    for m in ("intersect", "grow-diag", "grow-diag-final-and", "union"):
        systems[m] = symmetrize_corpus(forward, reverse, m)
    results = {}
    for name, hyp in systems.items():
        c = count_matches(gold, hyp)
        s = score_counts(c)
        d = s.as_dict(f"eflomal-{name}")
        d["ci95_aer"] = [100 * x for x in bootstrap_ci(c, 1000)["aer"]]
        results[name] = d
        print(f"eflomal {name:<20} AER {d['aer']:5.1f} [{d['ci95_aer'][0]:.1f}, {d['ci95_aer'][1]:.1f}] "
              f"P {d['precision']:5.1f} R {d['recall']:5.1f} links {d['links']}")
    meta = {"train_pairs": len(train), "test_pairs": len(test), "protocol": "training text + RWTH test sentences "
            "(lilt/alignment-scripts)", "eflomal": getattr(eflomal, "__version__", "2.0.0"),
            "seconds": round(time.time() - t0, 1), "results": results}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(meta, f, indent=1)
    print(f"{len(train)} training pairs + {len(test)} test pairs, {meta['seconds']} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
