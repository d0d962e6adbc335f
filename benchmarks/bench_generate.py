"""Wall time of ``fairseq-generate --score-reference`` on the Hansards test set with the shipped
model: plain ``--print-alignment`` against the plugin (``--alignment-method norm``) and against the
plugin with ``--alignment-dump`` of every method and layer, same data, same run (issue 4 targets:
under 1.2x and under 2x). Each command runs ``--repeat`` times; the fastest counts.
Usage: python benchmarks/bench_generate.py [--model-dir data/models/enfr] [--repeat 2]
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

from fairseq_plugins.pipeline import binarize  # noqa: E402

from align.formats import read_text_pairs  # noqa: E402


def timed(cmd: list[str], repeat: int) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": ROOT}
    best, n = float("inf"), 0
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        best = min(best, time.perf_counter() - t)
        n = sum(line.startswith("A-") for line in r.stdout.splitlines())
    return best, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "data", "models", "enfr"))
    ap.add_argument("--gold-dir", default=os.path.join(ROOT, "data", "gold", "enfr_hansards"))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args(argv)
    pairs = read_text_pairs(os.path.join(args.gold_dir, "enfr.src-tgt"))
    with tempfile.TemporaryDirectory() as work:
        data = binarize(args.model_dir, pairs, "en", "fr", work)
        # every run has --user-dir for the safe checkpoint loader; "plain" keeps fairseq's own task
        base = [sys.executable, "-m", "fairseq_cli.generate", data, "--path", os.path.join(args.model_dir, "model.pt"),
                "--source-lang", "en", "--target-lang", "fr", "--gen-subset", "test", "--score-reference",
                "--print-alignment", "--batch-size", str(args.batch_size), "--user-dir", os.path.join(ROOT, "fairseq_plugins")]
        plugin = ["--task", "translation_norm_align"]
        plain, n_plain = timed(base, args.repeat)
        one, n_one = timed(base + plugin + ["--alignment-method", "norm"], args.repeat)
        full, n_full = timed(base + plugin + ["--alignment-method", "norm", "--alignment-dump", os.path.join(work, "d")],
                             args.repeat)
    print(f"{len(pairs)} sentence pairs, batch size {args.batch_size}, wall time incl. start-up and model load")
    print(f"plain fairseq-generate --print-alignment: {plain:6.2f} s ({n_plain} sentences aligned)")
    print(f"plugin, --alignment-method norm:          {one:6.2f} s = {one / plain:.2f}x ({n_one} sentences)")
    print(f"plugin + --alignment-dump (every method, layer, shift, head): {full:6.2f} s = {full / plain:.2f}x")
    ok = one / plain < 1.2 and full / plain < 2
    print(f"targets (< 1.2x, < 2x): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
