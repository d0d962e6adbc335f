"""Cost of extraction on Hugging Face models, as ratios to a plain forward pass of the same batch in
the same run: norm + attn-res-ln (and every other method) on every layer, against an eager and an
sdpa teacher-forced forward. Random weights (no download), opus-mt-sized Marian by default.

Usage: python benchmarks/bench_hf.py [--family marian|m2m_100|mbart] [--layers 6] [--dim 512] [--batch 32]
           [--methods attn,norm+attn-res-ln]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def build(family: str, layers: int, dim: int, heads: int, vocab: int, attn: str):
    import torch
    from transformers import (
        M2M100Config,
        M2M100ForConditionalGeneration,
        MarianConfig,
        MarianMTModel,
        MBartConfig,
        MBartForConditionalGeneration,
    )

    cls = {
        "marian": (MarianConfig, MarianMTModel),
        "m2m_100": (M2M100Config, M2M100ForConditionalGeneration),
        "mbart": (MBartConfig, MBartForConditionalGeneration),
    }[family]
    cfg = cls[0](
        vocab_size=vocab,
        d_model=dim,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=4 * dim,
        decoder_ffn_dim=4 * dim,
        pad_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=2,
        attn_implementation=attn,
    )
    torch.manual_seed(0)
    return cls[1](cfg).eval()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", default="marian", choices=("marian", "m2m_100", "mbart"))
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--len", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--methods",
        default="attn,norm+attn-res-ln,attn-res-ln-ff,alti,alti-rollout,value-zeroing",
        help="comma-separated groups of '+'-joined methods, each group timed on its own",
    )
    args = ap.parse_args(argv)
    import torch

    from align.extraction.adapters import Batch, HFAdapter
    from align.extraction.engine import collate, score_pairs

    g = torch.Generator().manual_seed(1)
    lens = lambda: torch.randint(args.len // 2, args.len * 3 // 2, (args.batch,), generator=g)  # noqa: E731
    src = [torch.randint(3, args.vocab, (int(n),), generator=g).tolist() + [2] for n in lens()]
    tgt = [torch.randint(3, args.vocab, (int(n),), generator=g).tolist() + [2] for n in lens()]
    src_ids, src_mask = collate(src, 1)
    lab, tgt_mask = collate(tgt, 1)
    batch = Batch(src_ids, src_mask, lab, tgt_mask)
    models = {a: build(args.family, args.layers, args.dim, args.heads, args.vocab, a) for a in ("eager", "sdpa")}
    models["sdpa"].load_state_dict(models["eager"].state_dict())
    adapter = HFAdapter(models["eager"])

    def timed(fn) -> tuple[float, float]:
        fn()
        ts = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return min(ts), sorted(ts)[len(ts) // 2]

    def forward(model):
        def run():
            with torch.no_grad():
                adapter.forward(model, batch)

        return run

    layers = list(range(args.layers))
    eager, eager_med = timed(forward(models["eager"]))
    sdpa, _ = timed(forward(models["sdpa"]))
    print(
        f"{args.family}: {args.layers}+{args.layers} layers, d={args.dim}, {args.heads} heads; batch {args.batch} "
        f"pairs of ~{args.len} tokens; threads {torch.get_num_threads()}; min of {args.repeat} runs"
    )
    print(
        f"eager forward: {1e3 * eager:.1f} ms (median {1e3 * eager_med:.1f}); sdpa forward: {1e3 * sdpa:.1f} ms "
        f"= {sdpa / eager:.2f}x eager"
    )
    for methods in [g.split("+") for g in args.methods.split(",")]:
        t, _ = timed(lambda methods=methods: score_pairs(models["eager"], adapter, src, tgt, 1, methods, layers))
        print(
            f"forward + {'+'.join(methods)}, every layer: {1e3 * t:.1f} ms = {t / eager:.2f}x eager, "
            f"{t / sdpa:.2f}x sdpa"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
