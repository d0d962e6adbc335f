"""Scoring throughput: align-eval's reader + scorer on a generated corpus (default 1,000,000 pairs,
about 20 links each), against a plain-Python set-based scorer (lilt/alignment-scripts' aer.py way)
on a slice of the same files, in the same run.

Targets (issue 2): the whole corpus in under 60 s and under 2 GB peak memory on 2 cores.
Usage: python benchmarks/bench_eval.py [--sentences N] [--baseline-sentences M]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def generate(path_gold: str, path_hyp: str, n: int, seed: int = 0) -> int:
    """Write a talp gold (~18 sure + ~4 possible links) and a Pharaoh hypothesis (~20 links)."""
    rng = np.random.default_rng(seed)
    links = 0
    with open(path_gold, "w") as g, open(path_hyp, "w") as h:
        for start in range(0, n, 10000):
            k = min(10000, n - start)
            lens = rng.integers(10, 40, size=k)
            gl, hl = [], []
            for L in lens.tolist():
                src = rng.permutation(L)[:20]
                tgt = np.minimum(src + rng.integers(-1, 2, size=len(src)), L - 1).clip(0)
                kinds = rng.random(len(src))
                gl.append(" ".join(f"{s + 1}{'p' if u < 0.15 else '-'}{t + 1}"
                                   for s, t, u in zip(src.tolist(), tgt.tolist(), kinds.tolist())))
                noisy = np.where(rng.random(len(src)) < 0.25, (tgt + 1) % L, tgt)
                hl.append(" ".join(f"{s}-{t}" for s, t in zip(src.tolist(), noisy.tolist())))
                links += len(src)
            g.write("\n".join(gl) + "\n")
            h.write("\n".join(hl) + "\n")
    return links


def run_ours(gold: str, hyp: str) -> dict:
    """Time align-eval's path in a fresh process and read its peak RSS."""
    code = (
        "import json,resource,sys,time\n"
        "t=time.perf_counter()\n"
        "from align.formats import read_alignments\n"
        "from eval.metrics import score_corpus\n"
        f"g=read_alignments({gold!r},'talp'); h=read_alignments({hyp!r},'pharaoh')\n"
        "t1=time.perf_counter(); s=score_corpus(g,h); t2=time.perf_counter()\n"
        "print(json.dumps({'wall_s':t2-t,'read_s':t1-t,'score_s':t2-t1,'aer':s.aer,'links':s.links,"
        "'peak_mb':resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(out.stdout)


def run_baseline(gold: str, hyp: str, n: int) -> dict:
    """lilt aer.py's approach (a Python set per sentence) on the first n lines."""
    t = time.perf_counter()
    a = s = a_s = a_p = links = 0
    with open(gold) as fg, open(hyp) as fh:
        for k, (lg, lh) in enumerate(zip(fg, fh)):
            if k == n:
                break
            S, P = set(), set()
            for tok in lg.split():
                x, y = tok.replace("p", "-").split("-")
                P.add((int(x) - 1, int(y) - 1))
                if "p" not in tok:
                    S.add((int(x) - 1, int(y) - 1))
            A = {tuple(map(int, tok.split("-"))) for tok in lh.split()}
            a, s, a_s, a_p = a + len(A), s + len(S), a_s + len(A & S), a_p + len(A & P)
    wall = time.perf_counter() - t
    return {"wall_s": wall, "links": a, "aer": 1 - (a_s + a_p) / (a + s)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=1_000_000)
    ap.add_argument("--baseline-sentences", type=int, default=100_000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        gold, hyp = os.path.join(d, "gold.talp"), os.path.join(d, "hyp.align")
        t = time.perf_counter()
        n_links = generate(gold, hyp, args.sentences)
        print(f"generated {args.sentences} pairs, {n_links} hypothesis links in {time.perf_counter() - t:.1f} s")
        ours = run_ours(gold, hyp)
        base = run_baseline(gold, hyp, args.baseline_sentences)
    ours_rate = ours["links"] / ours["wall_s"]
    base_rate = base["links"] / base["wall_s"]
    print(f"align-eval path: {ours['wall_s']:.1f} s (read {ours['read_s']:.1f} s, score {ours['score_s']:.2f} s), "
          f"{ours_rate / 1e6:.2f} M links/s, peak {ours['peak_mb']:.0f} MB, AER {100 * ours['aer']:.2f}")
    print(f"set-based loop (first {args.baseline_sentences} pairs): {base_rate / 1e6:.2f} M links/s")
    print(f"speed ratio (ours / set loop): {ours_rate / base_rate:.1f}x")
    ok = ours["wall_s"] < 60 and ours["peak_mb"] < 2048
    print(f"targets (< 60 s, < 2048 MB): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
