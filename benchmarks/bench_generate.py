"""Wall time of ``fairseq-generate --score-reference`` on the Hansards test set with the shipped
model: plain ``--print-alignment`` against the plugin (``--alignment-method norm``) and against the
plugin with ``--alignment-dump`` of every method and layer, same data, same run (issue 4 targets:
under 1.2x and under 2x). The commands' runs are interleaved (round k runs all three, in an order
that rotates), so a busy machine slows each alike; min and median are reported, with the pinning.
Usage: python benchmarks/bench_generate.py [--model-dir data/models/enfr] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.io.text import read_text_pairs  # noqa: E402
from fairseq_plugins.pipeline import binarize  # noqa: E402


def run_once(cmd: list[str]) -> tuple[float, int]:
    """Wall time of one run and the number of A- lines it printed."""
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT}, check=True)
    return time.perf_counter() - t, sum(line.startswith("A-") for line in r.stdout.splitlines())


def interleaved(cmds: dict[str, list[str]], repeat: int) -> dict[str, tuple[list[float], int]]:
    """Each command ``repeat`` times, rounds interleaved and the order rotated each round."""
    names = list(cmds)
    times: dict[str, list[float]] = {n: [] for n in names}
    count: dict[str, int] = {}
    for k in range(repeat):
        for n in names[k % len(names) :] + names[: k % len(names)]:
            t, c = run_once(cmds[n])
            times[n].append(t)
            count[n] = c
    return {n: (times[n], count[n]) for n in names}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "data", "models", "enfr"))
    ap.add_argument("--gold-dir", default=os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args(argv)
    pairs = read_text_pairs(os.path.join(args.gold_dir, "enfr.src-tgt"))
    with tempfile.TemporaryDirectory() as work:
        data = binarize(args.model_dir, pairs, "en", "fr", work)
        # every run has --user-dir for the safe checkpoint loader; "plain" keeps fairseq's own task
        base = [
            sys.executable,
            "-m",
            "fairseq_cli.generate",
            data,
            "--path",
            args.model_dir,
            "--source-lang",
            "en",
            "--target-lang",
            "fr",
            "--gen-subset",
            "test",
            "--score-reference",
            "--print-alignment",
            "--batch-size",
            str(args.batch_size),
            "--user-dir",
            os.path.join(ROOT, "fairseq_plugins"),
        ]
        plugin = ["--task", "translation_norm_align"]
        res = interleaved(
            {
                "plain": base,
                "norm": base + plugin + ["--alignment-method", "norm"],
                "dump": base + plugin + ["--alignment-method", "norm", "--alignment-dump", os.path.join(work, "d")],
            },
            args.repeat,
        )
    import statistics

    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    print(
        f"{len(pairs)} sentence pairs, batch size {args.batch_size}, wall time incl. start-up and model load; "
        f"{args.repeat} interleaved rounds; pinned to cores {cores}, OMP_NUM_THREADS="
        f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, load average {os.getloadavg()[0]:.2f} at the end"
    )
    plain = min(res["plain"][0])
    labels = {
        "plain": "plain fairseq-generate --print-alignment",
        "norm": "plugin, --alignment-method norm",
        "dump": "plugin + --alignment-dump (every method, layer, shift, head)",
    }
    for n, (ts, c) in res.items():
        print(
            f"{labels[n]}: min {min(ts):6.2f} s = {min(ts) / plain:.2f}x, median {statistics.median(ts):6.2f} s "
            f"= {statistics.median(ts) / statistics.median(res['plain'][0]):.2f}x ({c} sentences aligned)"
        )
    ok = min(res["norm"][0]) / plain < 1.2 and min(res["dump"][0]) / plain < 2
    print(f"targets on the minimum (< 1.2x, < 2x): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
