"""One-command device check (under 5 minutes): align-extract's engine on a device in float32, float16
and bfloat16 and the plugin (fairseq-generate) in float32 and float16, each against the CPU float32
links (agreement rate and speed), then benchmarks/bench_extract.py on the device; writes the lot to
benchmarks/results/gpu.md.

Usage: python benchmarks/gpu_check.py [--device cuda] [--model-dir data/models/enfr] [--limit 447]
       [--bench-pairs 8192] [--out benchmarks/results/gpu.md]
Runs on CPU too (``--device cpu``: the half-precision rows then run on the CPU; fairseq's --fp16 is
skipped there). Run it first whenever a GPU is at hand, and commit the gpu.md it writes.
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.io.text import read_text_pairs  # noqa: E402

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

    aligner = NormAligner.from_checkpoint(model_dir, device=device, dtype=dtype)
    spec = aligner.spec(METHODS, None, ("awo", "awi"))
    t = time.perf_counter()
    out = aligner.dump(pairs, spec, batch_size=32)
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    return out, time.perf_counter() - t


def plugin_run(model_dir: str, data: str, text: str, device: str, fp16: bool, work: str) -> tuple[dict, float]:
    from align.io.formats import read_alignments
    from fairseq_plugins.pipeline import generate_command

    dump = tempfile.mkdtemp(dir=work)
    cmd = generate_command(model_dir, data, "en", "fr", dump, 32, ",".join(METHODS), text)
    cmd += (["--cpu"] if device == "cpu" else []) + (["--fp16"] if fp16 else [])
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, "PYTHONPATH": ROOT})
    sec = time.perf_counter() - t
    return {
        n: [
            sorted(read_alignments(os.path.join(dump, n)).links(k))
            for k in range(len(read_alignments(os.path.join(dump, n))))
        ]
        for n in os.listdir(dump)
        if n.endswith(".align")
    }, sec


def repo_path(path: str) -> str:
    """``path`` relative to the repository when inside it: results files hold no machine paths."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    return path if rel.startswith("..") else rel


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "data", "models", "enfr"))
    ap.add_argument("--gold-dir", default=os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards"))
    ap.add_argument("--limit", type=int, default=447)
    ap.add_argument("--bench-pairs", type=int, default=8192, help="pairs of bench_extract's speed part (0 skips it)")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "gpu.md"))
    args = ap.parse_args(argv)
    import torch

    from fairseq_plugins.pipeline import binarize

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu_check: no CUDA device here; use --device cpu", file=sys.stderr)
        return 1
    lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    pairs = [
        ([w.lower() for w in s], [w.lower() for w in t])
        for s, t in read_text_pairs(os.path.join(args.gold_dir, "enfr.src-tgt"))[: args.limit]
    ]
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU"
    say(
        f"device {args.device} ({name}), torch {torch.__version__}; {len(pairs)} Hansards pairs; methods "
        f"{', '.join(METHODS)}; every layer, AWO and AWI"
    )
    ref, t_ref = engine_run(args.model_dir, pairs, "cpu", torch.float32)
    say(f"engine cpu float32 (reference): {t_ref:.1f} s")
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        got, t = engine_run(args.model_dir, pairs, args.device, dtype)
        say(
            f"engine {args.device} {str(dtype)[6:]}: {t:.1f} s ({t_ref / t:.1f}x the CPU), "
            f"links equal to CPU float32: {100 * agreement(ref, got):.2f}%"
        )
    with tempfile.TemporaryDirectory() as work:
        data = binarize(args.model_dir, pairs, "en", "fr", work)
        text = os.path.join(work, "test")
        pref, tp = plugin_run(args.model_dir, data, text, "cpu", False, work)
        say(f"plugin cpu float32: {tp:.1f} s; links equal to the engine's: {100 * agreement(ref, pref):.2f}%")
        for fp16 in (False, True):
            if args.device == "cpu" and fp16:
                continue  # fairseq's --fp16 needs CUDA
            got, t = plugin_run(args.model_dir, data, text, args.device, fp16, work)
            say(
                f"plugin {args.device} {'float16' if fp16 else 'float32'}: {t:.1f} s ({tp / t:.1f}x the CPU), "
                f"links equal to CPU float32: {100 * agreement(pref, got):.2f}%"
            )
    bench = [] if args.bench_pairs <= 0 else bench_extract(args, os.path.splitext(args.out)[0] + "_bench_extract.json")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(
            f"# gpu_check on {name}, {datetime.date.today()}\n\n"
            f"`python benchmarks/gpu_check.py --device {args.device}` (links: Hansards En->Fr, shipped model)\n\n"
        )
        f.write("```\n" + "\n".join(lines) + "\n```\n")
        if bench:
            f.write("\n## bench_extract on the device\n\n```\n" + "\n".join(bench) + "\n```\n")
    print(f"wrote {repo_path(args.out)}")
    return 0


def bench_extract(args, out: str) -> list[str]:
    """benchmarks/bench_extract.py's speed part on the device (a script is run, never imported)."""
    cmd = [
        sys.executable,
        os.path.join(ROOT, "benchmarks", "bench_extract.py"),
        "--model",
        args.model_dir,
        "--sizes",
        "",
        "--pairs",
        str(args.bench_pairs),
        "--device",
        args.device,
    ]
    rows = []
    for dtype in ("float32", "float16"):
        p = subprocess.run(
            cmd + ["--dtype", dtype, "--out", out.replace(".json", f"_{dtype}.json")],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": ROOT},
        )
        if p.returncode:
            raise RuntimeError(f"bench_extract failed:\n{p.stderr[-2000:]}")
        got = [x for x in p.stdout.splitlines() if not x.startswith("wrote ")]
        print("\n".join(got), flush=True)
        rows += got
    return rows


if __name__ == "__main__":
    sys.exit(main())
