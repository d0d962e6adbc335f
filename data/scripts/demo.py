"""The main job on the shipped defaults: forced alignment of the Hansards En-Fr test set with the
shipped En->Fr model through ``fairseq-generate`` and the plugin (every method and layer, AWO
and AWI), scored with ``align-eval``: prints the AER table, writes a heatmap PNG and JSON.

Usage: ./run demo [--out demo_out] [--limit N] [--model-dir data/models/enfr] [--gold-dir data/gold/enfr_hansards]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from align.formats import read_alignments, read_text_pairs, write_alignments  # noqa: E402
from fairseq_plugins.pipeline import binarize, generate_command, run_with_progress  # noqa: E402
from eval.cli import plot_heatmap  # noqa: E402
from eval.grid import best as best_row, format_grid, layer_rows, parse_name, summarize_heads  # noqa: E402
from eval.metrics import score_corpus  # noqa: E402


def step(i: int, n: int, msg: str) -> None:
    print(f"[{i}/{n}] {msg}", file=sys.stderr, flush=True)


ALL_METHODS = "attn,norm,attn-res-ln,attn-res-ln-ff,alti,alti-rollout,value-zeroing,attn-head,norm-head"


def forced_dump(model_dir: str, data: str, src: str, tgt: str, dump: str, batch_size: int, log_path: str,
                total: int, methods: str = ALL_METHODS, text: str | None = None) -> int:
    """Forced alignment of the binarized test set through fairseq-generate and the plugin; every method,
    layer and shift written to ``dump`` (one Pharaoh file each). Returns fairseq-generate's exit status."""
    cmd = generate_command(model_dir, data, src, tgt, dump, batch_size, methods, text)
    return run_with_progress(cmd, {**os.environ, "PYTHONPATH": ROOT}, log_path, total)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "data", "models", "enfr"))
    ap.add_argument("--gold-dir", default=os.path.join(ROOT, "data", "gold", "enfr_hansards"))
    ap.add_argument("--src", default="en")
    ap.add_argument("--tgt", default="fr")
    ap.add_argument("--out", default="demo_out")
    ap.add_argument("--limit", type=int, default=0, help="align only the first N sentences (a quick look)")
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args(argv)
    t0 = time.time()
    pairs = read_text_pairs(os.path.join(args.gold_dir, "enfr.src-tgt"))
    gold = read_alignments(os.path.join(args.gold_dir, "enfr.gold"), "talp")
    if args.limit:
        pairs = pairs[: args.limit]
        gold = gold.select(list(range(len(pairs))))
    os.makedirs(args.out, exist_ok=True)
    dump = os.path.join(args.out, "alignments")
    with tempfile.TemporaryDirectory() as work:
        step(1, 4, f"binarizing {len(pairs)} Hansards sentence pairs with the model's SentencePiece and dictionaries")
        data = binarize(args.model_dir, pairs, args.src, args.tgt, work)
        text = os.path.join(work, "test")  # the real pieces, for any the dictionary lacks
        step(2, 4, "forced alignment: fairseq-generate --score-reference with the plugin, every method, layer, AWO and AWI")
        if forced_dump(args.model_dir, data, args.src, args.tgt, dump, args.batch_size,
                       os.path.join(args.out, "generate.out"), len(pairs), text=text) != 0:
            return 1
    step(3, 4, "scoring every alignment file against the gold (align-eval)")
    results = []
    for name in sorted(os.listdir(dump)):
        s = score_corpus(gold, read_alignments(os.path.join(dump, name)))
        results.append(s.as_dict(name))
    write_alignments(gold, os.path.join(args.out, "gold.used.talp"), "talp")
    step(4, 4, "writing the table, JSON, the AER heatmap and an example sentence's score matrices")
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    main_rows = layer_rows(results)
    plot_heatmap(main_rows, os.path.join(args.out, "aer_heatmap.png"))
    best = best_row(main_rows)
    plot_example(args.model_dir, pairs, gold, parse_name(best["hyp"]).layer, os.path.join(args.out, "example.png"))
    grid = format_grid(main_rows + summarize_heads(results))
    print(grid)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(f"# Hansards En-Fr forced alignment, {len(pairs)} sentences\n\nModel: `{args.model_dir}`. "
                "AER (%) of word alignments (argmax over source words) against the gold (sure + possible); "
                "`*-head-best`: the best head of the layer, `*-head-mean`: the mean over its heads.\n\n"
                "```\n" + grid + "\n```\n")
    print(f"\nbest: {best['hyp'].removesuffix('.align')} AER {best['aer']:.1f} (P {best['precision']:.1f} R {best['recall']:.1f}); "
          f"{len(pairs)} sentences; {time.time() - t0:.0f} s; files in {args.out}/")
    return 0


def plot_example(model_dir: str, pairs, gold, layer: int, path: str, index: int = 0) -> None:
    """One sentence's word-level score matrices, attention weights next to norms (AWI and AWO), gold marked."""
    import logging

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fairseq_plugins.hub import NormAligner

    logging.getLogger("matplotlib").setLevel(logging.WARNING)  # fairseq sets the root logger to DEBUG-friendly

    # the first sentence with at least 8 words on each side, for a readable picture
    index = next((i for i, (s, t) in enumerate(pairs) if 8 <= len(s) <= 14 and 8 <= len(t) <= 14), index)
    aligner = NormAligner.from_checkpoint(os.path.join(model_dir, "model.pt"))
    src = [w.lower() for w in pairs[index][0]]
    tgt = [w.lower() for w in pairs[index][1]]
    panels = [(m, sh) for sh in ("awo", "awi") for m in ("attn", "norm")]
    fig, axes = plt.subplots(1, 4, figsize=(4 + 0.45 * 4 * len(src), 1.5 + 0.35 * len(tgt)))
    sure = set(gold.links(index, "sure"))
    for ax, (method, shift) in zip(axes, panels):
        m = aligner.score_matrix(src, tgt, method, layer, shift)
        m = m / m.sum(axis=1, keepdims=True)  # rows as shares, comparable across methods
        ax.imshow(m, cmap="Greys", vmin=0, vmax=1)
        for s_, t_ in sure:
            ax.add_patch(plt.Rectangle((s_ - 0.5, t_ - 0.5), 1, 1, fill=False, ec="red", lw=1))
        ax.set_title(f"{method} {shift.upper()} layer {layer}", fontsize=9)
        ax.set_xticks(range(len(src)), src, rotation=90, fontsize=7)
        ax.set_yticks(range(len(tgt)), tgt if ax is axes[0] else [""] * len(tgt), fontsize=7)
    fig.suptitle(f"Hansards sentence {index + 1}: row-normalized scores (red: sure gold links)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)



if __name__ == "__main__":
    sys.exit(main())
