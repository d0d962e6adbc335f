"""What both directions cost: ``align-extract --reverse-model`` (one pass over the input, two models' forward
passes, the combinations) against ``align-extract`` with the forward model alone, on the same pairs, in the
same run. Target: at most 2.1x one direction.

Each configuration runs ``--repeats`` times in this process, alternating, and the fastest of each is kept (the
machine's other load only ever slows a run down). Writes ``benchmarks/results/bench_both.{json,md}``.

Usage: python benchmarks/bench_both.py [--pairs 2000] [--methods norm] [--repeats 3]
       [--forward data/models/deen] [--reverse data/models/ende] [--device cpu]
The pairs are the Hansards gold sentences repeated (their text does not change what is measured: the same
pairs go through both runs).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from contextlib import redirect_stderr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.cli.extract import main as extract  # noqa: E402
from align.io.atomic import write_text_atomic  # noqa: E402

HANSARDS = os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards", "enfr.src-tgt")


def corpus(path: str, n: int) -> str:
    """``n`` pairs: the Hansards sentences repeated, lowercased."""
    with open(HANSARDS, encoding="utf-8") as f:
        lines = [line.lower() for line in f.read().splitlines()]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines[i % len(lines)] + "\n" for i in range(n))
    return path


def timed(argv: list[str]) -> float:
    """Seconds of one ``align-extract`` run (its summary line swallowed); SystemExit if it fails."""
    t = time.perf_counter()
    with redirect_stderr(io.StringIO()) as err:
        code = extract(argv)  # a usage error is its status 2, said on standard error
    if code != 0:
        raise SystemExit(f"align-extract {' '.join(argv)} failed: {err.getvalue().strip()}")
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--methods", default="norm")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--forward", default=os.path.join(ROOT, "data", "models", "deen"))
    ap.add_argument("--reverse", default=os.path.join(ROOT, "data", "models", "ende"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "bench_both"))
    args = ap.parse_args(argv)
    import torch

    with tempfile.TemporaryDirectory() as work:
        inp = corpus(os.path.join(work, "pairs.txt"), args.pairs)
        common = ["--input", inp, "--methods", args.methods, "--device", args.device, "--progress", "off"]
        one = ["--model", args.forward, *common, "--out", os.path.join(work, "one"), "--overwrite"]
        both = [
            "--model",
            args.forward,
            "--reverse-model",
            args.reverse,
            *common,
            "--out",
            os.path.join(work, "both"),
            "--overwrite",
        ]
        timed(["--model", args.forward, *common, "--out", os.path.join(work, "warm")])  # first load: lazy imports
        times: dict[str, list[float]] = {"one": [], "both": []}
        for _ in range(args.repeats):
            times["one"].append(timed(one))
            times["both"].append(timed(both))
    best = {k: min(v) for k, v in times.items()}
    ratio = best["both"] / best["one"]
    report = {
        "pairs": args.pairs,
        "methods": args.methods,
        "layers": "all",
        "combinations": "the default (grow-diag-final-and, gmean:threshold)",
        "device": args.device,
        "threads": torch.get_num_threads(),
        "seconds": times,
        "best": best,
        "ratio": ratio,
        "target": 2.1,
        "command": "python benchmarks/bench_both.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    md = (
        "# Both directions: extraction cost\n\n"
        f"`align-extract --reverse-model` against the forward model alone, {args.pairs} pairs, methods "
        f"{args.methods}, every layer, {args.device} ({report['threads']} threads), fastest of {args.repeats} runs "
        f"each, in one run of `{report['command']}`:\n\n"
        "| run | seconds | pairs/s |\n|---|---:|---:|\n"
        f"| one direction | {best['one']:.1f} | {args.pairs / best['one']:.0f} |\n"
        f"| both directions + combinations | {best['both']:.1f} | {args.pairs / best['both']:.0f} |\n\n"
        f"Ratio {ratio:.2f}x (target: at most 2.1x).\n"
    )
    write_text_atomic(args.out + ".json", json.dumps(report, indent=1))
    write_text_atomic(args.out + ".md", md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
