"""Scoring speed and memory, side by side: ``align-eval`` (streaming) against lilt/alignment-scripts'
``aer.py`` on the same generated corpus (default 1,000,000 pairs, about 19 links each), in one run.

Each scorer runs in its own process; its wall time and peak RSS (``os.wait4``) are measured and both
must give the same AER. The baseline is, by default, a re-implementation of ``aer.py``'s algorithm
written here (labelled "aer.py equivalent"): it reads every line of both files into per-sentence
Python sets, then loops over the sentences for |A|, |S|, |A&S|, |A&P| and the extra statistics that
``aer.py`` always computes (coverage, jumps). ``--lilt-aer PATH`` also runs the real script from your
copy of https://github.com/lilt/alignment-scripts (``scripts/aer.py``); it is never shipped here.
When the shared data is present (``$NORM_ALIGN_SHARED`` or ``../shared/data``), both scorers also
score real system outputs on the RWTH De-En gold and must agree there too.

Targets (issue 13): at least 5x faster and at least 10x less peak memory than aer.py, same AER.
Usage: python benchmarks/bench_eval.py [--pairs N] [--lilt-aer PATH] [--shared DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
# numpy and the project are imported only by the parent: the baseline's process loads neither.

# Real outputs on the RWTH De-En gold: (label, path under system_outputs, the file is target first)
REAL = [
    ("fast_align forward", "fast_align/test.deen.talp", False),
    ("fast_align reverse", "fast_align/test.deen.reverse.talp", True),
    ("MGIZA++ grow-diag-final", "mgiza/test.deen.grow-diagonal-final.talp", False),
]


def generate(path_gold: str, path_hyp: str, n: int, seed: int = 0) -> int:
    """Write a talp gold (~16 sure + ~3 possible links a line) and a Pharaoh hypothesis (the same
    links, a quarter of them moved one target word); returns the number of hypothesis links."""
    import numpy as np

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
                gl.append(
                    " ".join(
                        f"{s + 1}{'p' if u < 0.15 else '-'}{t + 1}"
                        for s, t, u in zip(src.tolist(), tgt.tolist(), kinds.tolist())
                    )
                )
                noisy = np.where(rng.random(len(src)) < 0.25, (tgt + 1) % L, tgt)
                hl.append(" ".join(f"{s}-{t}" for s, t in zip(src.tolist(), noisy.tolist())))
                links += len(src)
            g.write("\n".join(gl) + "\n")
            h.write("\n".join(hl) + "\n")
    return links


# -- the baseline: aer.py's algorithm, re-implemented -------------------------------------------------


def _link(token: str, one_based: bool, reverse: bool) -> tuple[int, int]:
    x, y = (int(v) for v in token.replace("p", "-").split("-"))
    if one_based:
        x, y = x - 1, y - 1
    return (y, x) if reverse else (x, y)


def aer_py_equivalent(
    gold: str, hyp: str, one_ref: bool = True, reverse_ref: bool = False, reverse_hyp: bool = False
) -> dict:
    """aer.py's way: all lines of both files into lists of per-sentence sets (possible includes
    sure), then one loop over the sentences. Returns the four totals and the rates (fractions)."""
    sure, possible, hypothesis = [], [], []
    with open(gold, encoding="utf-8") as f:
        for line in f:
            s, p = set(), set()
            for tok in line.split():
                link = _link(tok, one_ref, reverse_ref)
                if "-" in tok:
                    s.add(link)
                p.add(link)
            sure.append(s)
            possible.append(p)
    with open(hyp, encoding="utf-8") as f:
        for line in f:
            hypothesis.append({_link(tok, False, reverse_hyp) for tok in line.split()})
    if not (len(sure) == len(possible) == len(hypothesis)):
        raise ValueError(f"{len(sure)} gold and {len(hypothesis)} hypothesis lines")
    a = s_ = a_s = a_p = src_words = tgt_words = internal = external = 0
    for S, P, A in zip(sure, possible, hypothesis):
        a, s_ = a + len(A), s_ + len(S)
        a_s, a_p = a_s + len(A & S), a_p + len(A & P)
        src_words += len({x for x, _ in A})
        tgt_words += len({y for _, y in A})
        # aer.py also builds, per target word, the set of its source words and counts jumps
        by_tgt = [set() for _ in range(max((y for _, y in A), default=0) + 1)]
        for x, y in A:
            by_tgt[y].add(x)
        internal += sum(1 for xs in by_tgt if len(xs) > 1 and max(xs) - min(xs) + 1 != len(xs))
        for prev, cur in zip(by_tgt, by_tgt[1:]):
            if prev and cur:
                x0 = sorted(prev)[0]
                external += not (x0 in cur or x0 + 1 in cur or x0 - 1 in cur)
    return {
        "links": a,
        "sure": s_,
        "matched_sure": a_s,
        "matched_possible": a_p,
        "aer": 1.0 - (a_s + a_p) / (a + s_),
        "precision": a_p / a,
        "recall": a_s / s_,
    }


# -- measuring ------------------------------------------------------------------------------------------


def measure(cmd: list[str]) -> dict:
    """Run ``cmd`` in a fresh process: its wall time (s), peak RSS (MB), stdout; fails loudly."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {stderr.strip()[-2000:]}")
    return {"wall_s": wall, "peak_mb": usage.ru_maxrss / 1024, "stdout": stdout}


def run_align_eval(gold: str, hyp: str, reverse_hyp: bool = False) -> dict:
    cmd = [sys.executable, "-m", "eval.cli", gold, hyp, "--format", "json"]
    cmd += ["--reverse-hyp"] if reverse_hyp else []
    r = measure(cmd)
    r.update(json.loads(r.pop("stdout"))[0])
    r["aer"] /= 100  # JSON rates are in percent
    return r


def run_equivalent(gold: str, hyp: str, reverse_hyp: bool = False) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--run-equivalent", gold, hyp]
    cmd += ["--reverse-hyp"] if reverse_hyp else []
    r = measure(cmd)
    r.update(json.loads(r.pop("stdout")))
    return r


def run_lilt(script: str, gold: str, hyp: str, reverse_hyp: bool = False) -> dict:
    """The real aer.py; it prints ``HYP: AER% (P%/R%/links)`` to one decimal."""
    r = measure([sys.executable, script, gold, hyp, "--oneRef"] + (["--reverseHyp"] if reverse_hyp else []))
    m = re.search(r": ([0-9.]+)% \(([0-9.]+)%/([0-9.]+)%/(\d+)\)", r.pop("stdout"))
    if m is None:
        raise RuntimeError(f"{script}: unexpected output")
    r.update(aer=float(m[1]) / 100, precision=float(m[2]) / 100, recall=float(m[3]) / 100, links=int(m[4]))
    return r


def same_aer(ours: dict, theirs: dict) -> bool:
    """The same four counts (hence the same AER) where the baseline reports them, else the same
    number of links and AER to aer.py's printed 0.1 point."""
    if "matched_sure" in theirs:
        keys = ("links", "sure", "matched_sure", "matched_possible")
        return all(ours[k] == theirs[k] for k in keys) and abs(ours["aer"] - theirs["aer"]) < 1e-12
    return ours["links"] == theirs["links"] and abs(100 * ours["aer"] - 100 * theirs["aer"]) <= 0.05 + 1e-9


def report(name: str, r: dict) -> str:
    return f"{name}: {r['wall_s']:.1f} s, peak RSS {r['peak_mb']:.0f} MB, AER {100 * r['aer']:.4f} (links {r['links']})"


def check_real(shared: str, lilt: str | None) -> list[str]:
    """Both scorers on real outputs for the RWTH De-En gold, where present."""
    gold = os.path.join(shared, "gold", "deen_rwth", "deen.gold")
    if not os.path.exists(gold):
        return [f"(no RWTH De-En gold at {gold}: the check on real outputs is skipped; set NORM_ALIGN_SHARED)"]
    lines = []
    for label, rel, swap in REAL:
        hyp = os.path.join(shared, "system_outputs", rel)
        if not os.path.exists(hyp):
            lines.append(f"(no {hyp}: skipped)")
            continue
        ours, eq = run_align_eval(gold, hyp, swap), run_equivalent(gold, hyp, swap)
        ok = same_aer(ours, eq)
        if lilt:
            ok = ok and same_aer(ours, run_lilt(lilt, gold, hyp, swap))
        lines.append(
            f"RWTH De-En, {label}: AER {100 * ours['aer']:.2f} (align-eval) vs "
            f"{100 * eq['aer']:.2f} (aer.py equivalent{', aer.py' if lilt else ''}): "
            f"{'same' if ok else 'DIFFERENT'}"
        )
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=1_000_000, help="sentence pairs to generate")
    ap.add_argument("--lilt-aer", metavar="PATH", help="lilt/alignment-scripts' scripts/aer.py, also run as a baseline")
    ap.add_argument("--shared", help="shared data (default $NORM_ALIGN_SHARED or ../shared/data)")
    ap.add_argument("--run-equivalent", nargs=2, metavar=("GOLD", "HYP"), help=argparse.SUPPRESS)
    ap.add_argument("--reverse-hyp", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.run_equivalent:  # the child process of the baseline measurement
        print(json.dumps(aer_py_equivalent(*args.run_equivalent, reverse_hyp=args.reverse_hyp)))
        return 0
    if args.lilt_aer and not os.path.isfile(args.lilt_aer):
        ap.error(f"--lilt-aer {args.lilt_aer}: no such file")
    from align.gold.testsets import shared_data_dir

    shared = args.shared or shared_data_dir()
    ok = True
    with tempfile.TemporaryDirectory() as d:
        gold, hyp = os.path.join(d, "gold.talp"), os.path.join(d, "hyp.align")
        t = time.perf_counter()
        n_links = generate(gold, hyp, args.pairs)
        print(f"generated {args.pairs} pairs, {n_links} hypothesis links in {time.perf_counter() - t:.1f} s")
        ours = run_align_eval(gold, hyp)
        baselines = [("aer.py equivalent", run_equivalent(gold, hyp))]
        if args.lilt_aer:
            baselines.append(("aer.py (lilt)", run_lilt(args.lilt_aer, gold, hyp)))
    print(report("align-eval", ours))
    for name, base in baselines:
        print(report(name, base))
        speed, lean = base["wall_s"] / ours["wall_s"], base["peak_mb"] / ours["peak_mb"]
        same = same_aer(ours, base)
        met = speed >= 5 and lean >= 10 and same
        ok = ok and met
        print(
            f"  align-eval vs {name}: {speed:.1f}x faster, {lean:.1f}x less peak memory, "
            f"same AER: {'yes' if same else 'NO'} -> targets (>= 5x, >= 10x, same AER) {'met' if met else 'NOT met'}"
        )
    for line in check_real(shared, args.lilt_aer):
        print(line)
        ok = ok and not line.endswith("DIFFERENT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
