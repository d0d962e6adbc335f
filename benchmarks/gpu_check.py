"""One-command device check (under 5 minutes): the plugin (fairseq-generate) and align-extract's engine
on a device in float32 and float16 against the CPU float32 links; prints the agreement and the speed.

Usage: python benchmarks/gpu_check.py [--device cuda] [--model-dir data/models/enfr] [--limit 447]
Runs on CPU too (``--device cpu``: the float16 rows then run float16 weights on the CPU). Record its
output in benchmarks/results/ whenever a GPU is available.
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

from align.links.formats import read_text_pairs  # noqa: E402

METHODS = ["attn", "norm", "attn-res-ln", "attn-res-ln-ff", "alti", "alti-rollout", "value-zeroing"]


def agreement(ref: dict, got: dict) -> float:
    """Share of links of ``ref`` that ``got`` has too, over every file and sentence."""
    same = total = 0
    for name, sents in ref.items():
        for a, b in zip(sents, got[name]):
            total += len(a)
            same += len(set(a) & set(b))
    return same / max(total, 1)


def engine_run(model_dir: str, pairs, device: str, dtype) -> tuple[dict, float]:
    from fairseq_plugins.hub import NormAligner

    aligner = NormAligner.from_checkpoint(os.path.join(model_dir, "model.pt"), device=device, dtype=dtype)
    spec = aligner.spec(METHODS, None, ("awo", "awi"))
    t = time.perf_counter()
    out = aligner.dump(pairs, spec, batch_size=32)
    if device.startswith("cuda"):
        import torch
        torch.cuda.synchronize()
    return out, time.perf_counter() - t


def plugin_run(model_dir: str, data: str, text: str, device: str, fp16: bool, work: str) -> tuple[dict, float]:
    from align.links.formats import read_alignments
    from fairseq_plugins.pipeline import generate_command

    dump = tempfile.mkdtemp(dir=work)
    cmd = generate_command(model_dir, data, "en", "fr", dump, 32, ",".join(METHODS), text)
    cmd += (["--cpu"] if device == "cpu" else []) + (["--fp16"] if fp16 else [])
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": ROOT})
    sec = time.perf_counter() - t
    return {n: [sorted(read_alignments(os.path.join(dump, n)).links(k)) for k in range(len(read_alignments(
        os.path.join(dump, n))))] for n in os.listdir(dump) if n.endswith(".align")}, sec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "data", "models", "enfr"))
    ap.add_argument("--gold-dir", default=os.path.join(ROOT, "data", "gold", "enfr_hansards"))
    ap.add_argument("--limit", type=int, default=447)
    args = ap.parse_args(argv)
    import torch

    from fairseq_plugins.pipeline import binarize

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu_check: no CUDA device here; use --device cpu", file=sys.stderr)
        return 1
    pairs = [([w.lower() for w in s], [w.lower() for w in t])
             for s, t in read_text_pairs(os.path.join(args.gold_dir, "enfr.src-tgt"))[: args.limit]]
    print(f"device {args.device} ({torch.cuda.get_device_name() if args.device.startswith('cuda') else 'CPU'}); "
          f"{len(pairs)} Hansards pairs; methods {', '.join(METHODS)}; every layer, AWO and AWI")
    ref, t_ref = engine_run(args.model_dir, pairs, "cpu", torch.float32)
    print(f"engine cpu float32 (reference): {t_ref:.1f} s")
    for dtype in (torch.float32, torch.float16):
        got, t = engine_run(args.model_dir, pairs, args.device, dtype)
        print(f"engine {args.device} {str(dtype)[6:]}: {t:.1f} s ({t_ref / t:.1f}x the CPU), "
              f"links equal to CPU float32: {100 * agreement(ref, got):.2f}%")
    with tempfile.TemporaryDirectory() as work:
        data = binarize(args.model_dir, pairs, "en", "fr", work)
        text = os.path.join(work, "test")
        pref, tp = plugin_run(args.model_dir, data, text, "cpu", False, work)
        print(f"plugin cpu float32: {tp:.1f} s; links equal to the engine's: {100 * agreement(ref, pref):.2f}%")
        for fp16 in (False, True):
            if args.device == "cpu" and fp16:
                continue  # fairseq's --fp16 needs CUDA
            got, t = plugin_run(args.model_dir, data, text, args.device, fp16, work)
            print(f"plugin {args.device} {'float16' if fp16 else 'float32'}: {t:.1f} s ({tp / t:.1f}x the CPU), "
                  f"links equal to CPU float32: {100 * agreement(pref, got):.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
