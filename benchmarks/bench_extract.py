"""align-extract at corpus scale, measured in one run (issue 31):

1. memory: peak RSS of ``align-extract`` (one process each) on 10k and 100k pairs; streaming keeps
   them within 10% of each other (the target), and pairs/s end to end;
2. speed against the forward pass: the same batches of the same model on the same device, a plain
   teacher-forced forward pass against the forward pass plus each method at one layer and at all
   layers (target: ``attn`` and ``norm`` at all layers <= 1.3x the plain pass).

Usage: python benchmarks/bench_extract.py [--sizes 10000,100000] [--pairs 2048] [--device cpu]
       [--dtype float32] [--model data/models/enfr] [--out benchmarks/results/bench_extract.json]
The pairs are the Hansards gold sentences repeated (lowercased, as the shipped model wants them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

HANSARDS = os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards", "enfr.src-tgt")
METHODS = ["attn", "norm", "alti", "value-zeroing", "attn-res-ln-ff"]

# One align-extract process, reporting its own peak RSS (ru_maxrss is KiB on Linux).
_CHILD = """
import resource, sys, time
sys.path.insert(0, {root!r})
from align.cli.extract import main
t = time.perf_counter()
rc = main({argv!r})
print("RESULT", rc, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def corpus(path: str, n: int) -> str:
    """``n`` pairs: the Hansards sentences repeated, lowercased."""
    with open(HANSARDS, encoding="utf-8") as f:
        lines = [line.lower() for line in f.read().splitlines()]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(lines[i % len(lines)] + "\n")
    return path


def memory(model: str, sizes: list[int], device: str, work: str) -> list[dict]:
    """Peak RSS and pairs/s of align-extract --out (attn, layer 0) per corpus size."""
    rows = []
    for n in sizes:
        inp = corpus(os.path.join(work, f"pairs{n}.txt"), n)
        argv = [
            "--model",
            model,
            "--input",
            inp,
            "--out",
            os.path.join(work, f"out{n}"),
            "--methods",
            "attn",
            "--layers",
            "0",
            "--batch-size",
            "64",
            "--device",
            device,
            "--progress",
            "off",
        ]
        env = {**os.environ, "PYTHONPATH": ROOT}
        p = subprocess.run(
            [sys.executable, "-c", _CHILD.format(root=ROOT, argv=argv)], capture_output=True, text=True, env=env
        )
        line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT")), None)
        if p.returncode or line is None:
            raise RuntimeError(p.stderr[-2000:])
        _, rc, sec, kib = line.split()
        rows.append(
            {
                "pairs": n,
                "seconds": round(float(sec), 1),
                "pairs_per_s": round(n / float(sec), 1),
                "peak_rss_mb": round(int(kib) / 1024, 1),
            }
        )
        print(
            f"align-extract {n:>7} pairs (attn, layer 0): {float(sec):7.1f} s, {n / float(sec):6.1f} pairs/s, "
            f"peak RSS {int(kib) / 1024:.0f} MB",
            flush=True,
        )
    return rows


def speed(model: str, n: int, device: str, dtype: str, batch: int) -> dict:
    """Plain forward vs forward + each method at one layer and at all layers, the same batches."""
    import torch

    from align.extraction.adapters import Batch
    from align.extraction.engine import collate, score_pairs
    from align.extraction.loading import load_aligner

    aligner = load_aligner(model, device=device, dtype=getattr(torch, dtype))
    with open(HANSARDS, encoding="utf-8") as f:
        lines = f.read().splitlines()
    enc = [aligner.encode_pair(*lines[i % len(lines)].split(" ||| "), i) for i in range(n)]
    enc.sort(key=lambda e: (len(e[0].ids), len(e[1].ids)))  # as align-extract sorts within a chunk
    batches = [enc[k : k + batch] for k in range(0, n, batch)]
    m, adapter, pad = aligner.model, aligner.adapter, aligner.pad
    dev = next(m.parameters()).device

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def plain():
        for b in batches:
            s, sm = collate([e[0].ids for e in b], pad, dev)
            t, tm = collate([e[1].ids for e in b], pad, dev)
            with torch.no_grad():
                adapter.forward(m, Batch(s, sm, t, tm))

    def scored(methods, layers):
        for b in batches:
            score_pairs(m, adapter, [e[0].ids for e in b], [e[1].ids for e in b], pad, methods, layers)

    def timed(fn) -> float:
        fn()  # warm-up
        sync()
        best = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            fn()
            sync()
            best = min(best, time.perf_counter() - t0)
        return best

    base = timed(plain)
    every = list(range(aligner.n_layers))
    print(
        f"{n} pairs in batches of {batch}, {dtype} on {device}, {aligner.n_layers} decoder layers: plain forced "
        f"forward {base:.2f} s ({n / base:.0f} pairs/s)",
        flush=True,
    )
    out = {
        "pairs": n,
        "batch": batch,
        "device": device,
        "dtype": dtype,
        "forward_seconds": round(base, 3),
        "methods": {},
    }
    for method in METHODS:
        row = {}
        for label, layers in (("one_layer", [aligner.n_layers - 1]), ("all_layers", every)):
            t = timed(lambda method=method, layers=layers: scored([method], layers))
            row[label] = {"seconds": round(t, 3), "ratio": round(t / base, 2), "pairs_per_s": round(n / t, 1)}
        out["methods"][method] = row
        print(
            f"  {method:<15} one layer {row['one_layer']['ratio']:5.2f}x   all layers "
            f"{row['all_layers']['ratio']:5.2f}x the forward pass ({row['all_layers']['pairs_per_s']:.0f} pairs/s)",
            flush=True,
        )
    for method in ("attn", "norm"):
        r = out["methods"][method]["all_layers"]["ratio"]
        print(f"target {method} at all layers <= 1.3x: {r:.2f}x -> {'met' if r <= 1.3 else 'NOT met'}")
    return out


def repo_path(path: str) -> str:
    """``path`` relative to the repository when inside it: results files hold no machine paths."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    return path if rel.startswith("..") else rel


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "data", "models", "enfr"))
    ap.add_argument("--sizes", default="10000,100000", help="corpus sizes for the memory part ('' skips it)")
    ap.add_argument("--pairs", type=int, default=2048, help="pairs of the speed part")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float16", "bfloat16"))
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "bench_extract.json"))
    args = ap.parse_args(argv)
    import platform

    import torch

    result = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch threads "
        f"{torch.get_num_threads()}" + (f", {torch.cuda.get_device_name()}" if args.device.startswith("cuda") else "")
    }
    sizes = [int(x) for x in args.sizes.split(",") if x]
    if sizes:
        with tempfile.TemporaryDirectory() as work:
            rows = memory(args.model, sizes, args.device, work)
        result["memory"] = rows
        if len(rows) >= 2:
            ratio = rows[-1]["peak_rss_mb"] / rows[0]["peak_rss_mb"]
            result["rss_ratio"] = round(ratio, 3)
            print(
                f"peak RSS at {rows[-1]['pairs']} / at {rows[0]['pairs']} pairs: {ratio:.3f} (target <= 1.10: "
                f"{'met' if ratio <= 1.10 else 'NOT met'})"
            )
    result["speed"] = speed(args.model, args.pairs, args.device, args.dtype, args.batch_size)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {repo_path(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
