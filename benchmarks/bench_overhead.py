"""Overhead of computing ``norm`` and ``attn-res-ln`` for every decoder layer over a plain
teacher-forced forward pass of the same fairseq Transformer, same batch, same run (issue 3
target: under 1.3x). Also reports ``attn`` alone and the per-head methods.
Usage: python benchmarks/bench_overhead.py [--layers 6] [--dim 512] [--heads 8] [--batch 32] [--len 30]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def build(layers: int, dim: int, heads: int, vocab: int = 8000, ffn: int | None = None):
    from argparse import Namespace

    from fairseq.data import Dictionary
    from fairseq.models.transformer import TransformerModel, base_architecture

    d = Dictionary()
    for i in range(vocab):
        d.add_symbol(f"w{i}")
    args = Namespace(
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_embed_dim=dim,
        decoder_embed_dim=dim,
        encoder_ffn_embed_dim=ffn or 4 * dim,
        decoder_ffn_embed_dim=ffn or 4 * dim,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        share_all_embeddings=True,
        dropout=0.0,
        max_source_positions=1024,
        max_target_positions=1024,
    )
    base_architecture(args)
    task = Namespace(source_dictionary=d, target_dictionary=d)
    return TransformerModel.build_model(args, task).eval(), d


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--len", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ffn", type=int, default=None, help="FF width (default 4 x dim)")
    ap.add_argument(
        "--rwth",
        metavar="SRC_TGT",
        help="also time attn-res-ln-ff and norm on every sentence of this "
        "'de ||| en' file (RWTH: ../shared/data/gold/deen_rwth/deen.src-tgt), 1.3 subwords per word",
    )
    args = ap.parse_args(argv)
    from align.extraction.adapters import FairseqAdapter
    from align.extraction.engine import Batch, collate, score_pairs

    torch.manual_seed(0)
    model, d = build(args.layers, args.dim, args.heads, ffn=args.ffn)
    g = torch.Generator().manual_seed(1)
    adapter = FairseqAdapter(d.pad(), d.eos())
    src = [
        torch.randint(10, len(d), (int(n),), generator=g).tolist() + [d.eos()]
        for n in torch.randint(args.len // 2, args.len * 3 // 2, (args.batch,), generator=g)
    ]
    tgt = [
        torch.randint(10, len(d), (int(n),), generator=g).tolist() + [d.eos()]
        for n in torch.randint(args.len // 2, args.len * 3 // 2, (args.batch,), generator=g)
    ]
    layers = list(range(args.layers))
    src_ids, src_mask = collate(src, d.pad())
    lab, tgt_mask = collate(tgt, d.pad())
    batch = Batch(src_ids, src_mask, lab, tgt_mask)

    def plain():
        with torch.no_grad():
            adapter.forward(model, batch)

    def timed(fn) -> float:
        fn()
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        return best

    base = timed(plain)
    print(
        f"model: {args.layers}+{args.layers} layers, d={args.dim}, {args.heads} heads; batch {args.batch} pairs "
        f"of ~{args.len} tokens; threads {torch.get_num_threads()}"
    )
    print(f"plain forward pass: {1e3 * base:.1f} ms")
    for methods in (
        ["attn"],
        ["norm", "attn-res-ln"],
        ["attn", "norm", "attn-res-ln", "attn-head", "norm-head"],
        ["attn-res-ln-ff"],
        ["alti"],
        ["alti-rollout"],
        ["value-zeroing"],
    ):
        t = timed(lambda methods=methods: score_pairs(model, adapter, src, tgt, d.pad(), methods, layers))
        print(f"forward + {'+'.join(methods)} for all {args.layers} layers: {1e3 * t:.1f} ms = {t / base:.2f}x")
    if args.rwth:
        from align.io.text import read_text_pairs

        pairs = read_text_pairs(args.rwth)
        g2 = torch.Generator().manual_seed(2)
        mk = lambda n: torch.randint(10, len(d), (max(1, round(1.3 * n)),), generator=g2).tolist() + [d.eos()]  # noqa: E731
        data = [(mk(len(s)), mk(len(t))) for s, t in pairs]
        data.sort(key=lambda p: len(p[0]))
        for methods in (["norm"], ["attn-res-ln-ff"], ["alti"], ["alti-rollout"], ["value-zeroing"]):
            t0 = time.perf_counter()
            for k in range(0, len(data), args.batch):
                chunk = data[k : k + args.batch]
                score_pairs(model, adapter, [p[0] for p in chunk], [p[1] for p in chunk], d.pad(), methods, layers)
            print(
                f"all {len(data)} sentence pairs of {os.path.basename(args.rwth)}, {'+'.join(methods)}, every layer: "
                f"{time.perf_counter() - t0:.1f} s"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
