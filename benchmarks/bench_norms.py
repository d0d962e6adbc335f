"""Gram-matrix norms against the literal definition (materialize every alpha^h_ij f^h(x_j) vector),
same inputs, same run: time and peak memory ratios (issue 3 targets at H=8, D=512, T=S=100:
>= 30x faster, >= 10x less peak memory). Each measurement runs in a fresh process so that its
peak RSS is its own. Usage: python benchmarks/bench_norms.py [--batch 4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORKER = r"""
import json, resource, sys, time
import torch
torch.manual_seed(0)
from align.attribution.norms import CrossAttentionLayer, value_vectors, value_gram, score_norm, score_norm_head
B, H, D, T, S, mode, repeat = [int(a) if a.isdigit() else a for a in sys.argv[1:]]
layer = CrossAttentionLayer(torch.randn(D, D) / D**.5, torch.randn(D), torch.randn(D, D) / D**.5, torch.randn(D), H,
                            torch.ones(D), torch.zeros(D))
alpha = torch.randn(B, H, T, S).softmax(-1)
x, y = torch.randn(B, S, D), torch.randn(B, T, D)
def literal():
    f = value_vectors(x, layer)
    vec = alpha[..., None] * f[:, :, None]          # (B, H, T, S, D)
    return vec.norm(dim=-1), vec.sum(1).norm(dim=-1)
def fast():
    g = value_gram(x, layer)
    return score_norm_head(alpha, g), score_norm(alpha, g)
fn = literal if mode == "literal" else fast
fn()  # warm-up: allocator and kernels
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
times = []
with torch.no_grad():
    for _ in range(repeat):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
# the warm-up already set the peak; measure the extra memory of one call from a fresh baseline
print(json.dumps({"time": min(times), "peak_mb": peak / 1024}))
"""

MEM = r"""
import json, resource, sys
import torch
torch.manual_seed(0)
from align.attribution.norms import CrossAttentionLayer, value_vectors, value_gram, score_norm, score_norm_head
B, H, D, T, S, mode = [int(a) if a.isdigit() else a for a in sys.argv[1:]]
layer = CrossAttentionLayer(torch.randn(D, D) / D**.5, torch.randn(D), torch.randn(D, D) / D**.5, torch.randn(D), H)
alpha = torch.randn(B, H, T, S).softmax(-1)
x = torch.randn(B, S, D)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with torch.no_grad():
    if mode == "literal":
        f = value_vectors(x, layer)
        vec = alpha[..., None] * f[:, :, None]
        r = (vec.norm(dim=-1), vec.sum(1).norm(dim=-1))
    else:
        g = value_gram(x, layer)
        r = (score_norm_head(alpha, g), score_norm(alpha, g))
print(json.dumps({"extra_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024}))
"""


def _run(code: str, *args) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    return json.loads(out.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--length", type=int, default=100)
    args = ap.parse_args(argv)
    rows = []
    for H, D in ((8, 512), (4, 256), (16, 1024)):
        T = S = args.length
        lit = _run(WORKER, args.batch, H, D, T, S, "literal", args.repeat)
        fast = _run(WORKER, args.batch, H, D, T, S, "fast", args.repeat)
        lit_m = _run(MEM, args.batch, H, D, T, S, "literal")
        fast_m = _run(MEM, args.batch, H, D, T, S, "fast")
        row = {
            "H": H,
            "D": D,
            "T": T,
            "S": S,
            "B": args.batch,
            "literal_s": lit["time"],
            "fast_s": fast["time"],
            "speedup": lit["time"] / fast["time"],
            "literal_extra_mb": lit_m["extra_mb"],
            "fast_extra_mb": fast_m["extra_mb"],
            "memory_ratio": lit_m["extra_mb"] / max(fast_m["extra_mb"], 0.25),
        }
        rows.append(row)
        print(
            f"H={H:2d} D={D:4d} T=S={T} B={args.batch}: literal {lit['time'] * 1e3:8.1f} ms, "
            f"gram {fast['time'] * 1e3:7.1f} ms, speed-up {row['speedup']:6.1f}x; extra peak memory "
            f"literal {lit_m['extra_mb']:7.1f} MB, gram {fast_m['extra_mb']:6.1f} MB, "
            f"ratio {row['memory_ratio']:6.1f}x"
        )
    main_row = rows[0]
    ok = main_row["speedup"] >= 30 and main_row["memory_ratio"] >= 10
    print(f"targets at H=8, D=512 (>= 30x faster, >= 10x less memory): {'met' if ok else 'NOT met'}")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
