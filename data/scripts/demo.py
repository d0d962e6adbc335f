"""The main job on the shipped defaults: forced alignment of the Hansards En-Fr test set with the
shipped En->Fr model through ``fairseq-generate`` and the plugin (every method and layer, AWO
and AWI), scored with ``align-eval``: prints the AER table, writes a heatmap PNG, JSON and the
``align-view`` page ``view.html`` (the best layer of each method beside the gold). With the reverse
model (``data/models/fren``, or ``--reverse-model-dir``), both directions too: ``align-extract
--reverse-model --blend`` over the same pairs, every combination scored, the combined alignment on the shipped
defaults printed beside the one-direction best and eflomal's figure on the same text, and shown first in
``view.html``.

Usage: ./run demo [--out demo_out] [--limit N] [--model-dir data/models/enfr] [--test-set hansards]
                  [--reverse-model-dir data/models/fren | --one-direction]
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

from align.gold import testsets  # noqa: E402
from align.gold.protocol import ProtocolError, protocol_of, read_training_text  # noqa: E402
from align.io.atomic import write_text_atomic  # noqa: E402
from align.io.formats import read_alignments, write_alignments  # noqa: E402
from eval.grid import best as best_row, format_grid, layer_rows, parse_name, summarize_heads  # noqa: E402
from eval.metrics import score_corpus  # noqa: E402
from eval.plot import plot_heatmap  # noqa: E402
from eval.scoring import EvalOptions, signature  # noqa: E402
from eval.view import build_page  # noqa: E402
from fairseq_plugins.pipeline import binarize, generate_command, run_with_progress  # noqa: E402


def step(i: int, n: int, msg: str) -> None:
    print(f"[{i}/{n}] {msg}", file=sys.stderr, flush=True)


ALL_METHODS = "attn,norm,attn-res-ln,attn-res-ln-ff,alti,alti-rollout,value-zeroing,attn-head,norm-head"


def forced_dump(
    model_dir: str,
    data: str,
    src: str,
    tgt: str,
    dump: str,
    batch_size: int,
    log_path: str,
    total: int,
    methods: str = ALL_METHODS,
    text: str | None = None,
) -> int:
    """Forced alignment of the binarized test set through fairseq-generate and the plugin; every method,
    layer and shift written to ``dump`` (one Pharaoh file each). Returns fairseq-generate's exit status."""
    cmd = generate_command(model_dir, data, src, tgt, dump, batch_size, methods, text)
    return run_with_progress(cmd, {**os.environ, "PYTHONPATH": ROOT}, log_path, total)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "data", "models", "enfr"))
    ap.add_argument(
        "-t", "--test-set", default="hansards", help="a named test set (align-eval --list); default hansards"
    )
    ap.add_argument("--src", default="en")
    ap.add_argument("--tgt", default="fr")
    ap.add_argument("--out", default="demo_out")
    ap.add_argument("--limit", type=int, default=0, help="align only the first N sentences (a quick look)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument(
        "--reverse-model-dir",
        help="the model of the other direction (default data/models/TGTSRC when it is there)",
    )
    ap.add_argument("--one-direction", action="store_true", help="skip both directions")
    args = ap.parse_args(argv)
    if args.reverse_model_dir is None and not args.one_direction:
        guess = os.path.join(ROOT, "data", "models", f"{args.tgt}{args.src}")
        args.reverse_model_dir = guess if os.path.isdir(guess) else None
    if args.one_direction:
        args.reverse_model_dir = None
    if args.reverse_model_dir:  # a table of two models that saw the gold differently is of neither protocol
        try:
            args.protocol = protocol_of([args.model_dir, args.reverse_model_dir])
        except ProtocolError as e:
            print(f"demo: {e}", file=sys.stderr)
            return 1
    t0 = time.time()
    n_steps = 5 if args.reverse_model_dir else 4
    ts = testsets.load(args.test_set, f"{args.src}-{args.tgt}")
    pairs, gold = list(zip(ts.src, ts.tgt)), ts.gold
    if args.limit:
        pairs = pairs[: args.limit]
        gold = gold.select(list(range(len(pairs))))
    os.makedirs(args.out, exist_ok=True)
    dump = os.path.join(args.out, "alignments")
    with tempfile.TemporaryDirectory() as work:
        step(
            1,
            n_steps,
            f"binarizing {len(pairs)} Hansards sentence pairs with the model's SentencePiece and dictionaries",
        )
        data = binarize(args.model_dir, pairs, args.src, args.tgt, work)
        text = os.path.join(work, "test")  # the real pieces, for any the dictionary lacks
        step(
            2,
            n_steps,
            "forced alignment: fairseq-generate --score-reference with the plugin, every method, layer, AWO and AWI",
        )
        if (
            forced_dump(
                args.model_dir,
                data,
                args.src,
                args.tgt,
                dump,
                args.batch_size,
                os.path.join(args.out, "generate.out"),
                len(pairs),
                text=text,
            )
            != 0
        ):
            return 1
    step(3, n_steps, "scoring every alignment file against the gold (align-eval)")
    results = []
    for name in sorted(n for n in os.listdir(dump) if n.endswith(".align")):
        s = score_corpus(gold, read_alignments(os.path.join(dump, name)))
        results.append(s.as_dict(name))
    write_alignments(gold, os.path.join(args.out, "gold.used.talp"), "talp")
    step(
        4,
        n_steps,
        "writing the table, JSON, the AER heatmap, an example sentence's score matrices and the align-view page",
    )
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    main_rows = layer_rows(results)
    plot_heatmap(main_rows, os.path.join(args.out, "aer_heatmap.png"))
    best = best_row(main_rows)
    plot_example(args.model_dir, pairs, gold, parse_name(best["hyp"]).layer, os.path.join(args.out, "example.png"))
    combined = None
    if args.reverse_model_dir:
        step(
            5,
            n_steps,
            f"both directions: align-extract --reverse-model {os.path.relpath(args.reverse_model_dir, ROOT)}",
        )
        combined = both_directions(args, pairs, gold)
        if combined is None:
            return 1
    view = write_view(pairs, gold, dump, main_rows, os.path.join(args.out, "view.html"), ts, combined)
    grid = format_grid(main_rows + summarize_heads(results))
    print(grid)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(
            f"# Hansards En-Fr forced alignment, {len(pairs)} sentences\n\nModel: `{args.model_dir}`. "
            "AER (%) of word alignments (argmax over source words) against the gold (sure + possible); "
            "`*-head-best`: the best head of the layer, `*-head-mean`: the mean over its heads.\n\n"
            "```\n" + grid + "\n```\n"
        )
    print(
        f"\nbest: {best['hyp'].removesuffix('.align')} AER {best['aer']:.1f} (P {best['precision']:.1f} R {best['recall']:.1f}); "
        f"{len(pairs)} sentences; {time.time() - t0:.0f} s; files in {args.out}/"
    )
    if combined is not None:
        print(combined["text"])
    print(f"alignments beside the gold, sentence by sentence: {view}")
    return 0


# Both directions on the shipped defaults: in each direction a blend of a layer-0 AWI setting and an AWO setting,
# combined, as the held-out protocol chose for the gold set on its even-numbered half, to score the odd-numbered
# (benchmarks/bidirectional.py's JSON for the models' protocol: benchmarks/results/bidirectional_SET[_halves].json,
# family "blend", its first fold), fixed before this demo scores it. The AER printed is on all sentences, the half that made the choice included; the "best" rows
# beside it are picked on the sentences they are scored on.
BOTH_METHODS, BOTH_LAYER, BOTH_SHIFT = "norm,alti", 0, "awi"
BOTH_DEFAULT = ("alti-awi-layer0+attn-awo-layer2", "gmean:threshold")
"""Where no held-out run exists for the set and protocol: align-extract's --combine default, RWTH's x20 choice."""


def held_out_choice(test_set: str, protocol: str = "x20") -> tuple[str, str] | None:
    """(blend, combination) the held-out protocol chose on the even-numbered sentences of ``test_set`` (to score the
    odd-numbered: ``held_out.blend.folds[0].chosen`` of benchmarks/bidirectional.py's JSON, eval.experiment's folds)
    for models of ``protocol``, or None where that run is not in benchmarks/results/."""
    from align.links.combine import DEFAULT_THRESHOLD

    name = f"bidirectional_{test_set}" + ("_halves" if protocol == "halves" else "")
    path = os.path.join(ROOT, "benchmarks", "results", name + ".json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        chosen = json.load(f)["held_out"]["blend"]["folds"][0]["chosen"]  # "blend:BLEND:COMBINATION"
    _, blend, combination = chosen.split(":", 2)
    # align-extract names the default threshold's file without its value
    return blend, combination.removesuffix(f"={DEFAULT_THRESHOLD}")


COMBINATIONS = "grow-diag-final-and,intersect,gmean:threshold,hmean:threshold,gmean:intersect,mean:intersect"


def both_directions(args, pairs, gold) -> dict | None:
    """Both models over the same pairs (``align-extract --reverse-model``, every combination), scored: the
    combined default beside the best of one direction and of both, and eflomal's figure on the same text."""
    from align.cli.extract import main as extract

    held = held_out_choice(args.test_set, getattr(args, "protocol", "x20"))
    blend, combination = held or BOTH_DEFAULT
    chosen = f"{blend}.{combination.replace(':', '-')}.align"
    combinations = COMBINATIONS + ("" if combination in COMBINATIONS.split(",") else f",{combination}")
    out = os.path.join(args.out, "both")
    inp = os.path.join(args.out, "pairs.txt")
    write_text_atomic(inp, "".join(f"{' '.join(s)} ||| {' '.join(t)}\n" for s, t in pairs))
    code = extract(
        ["--model", args.model_dir, "--reverse-model", args.reverse_model_dir, "--input", inp, "--out", out,
         "--overwrite", "--methods", BOTH_METHODS, "--layers", str(BOTH_LAYER), "--shifts", BOTH_SHIFT,
         "--blend", blend,
         "--combine", combinations, "--batch-size", str(args.batch_size), "--progress", "off"]
    )  # fmt: skip
    if code != 0:
        return None
    rows = []
    for name in sorted(n for n in os.listdir(out) if n.endswith(".align")):
        rows.append(score_corpus(gold, read_alignments(os.path.join(out, name))).as_dict(name))
    with open(os.path.join(args.out, "both.json"), "w") as f:
        json.dump(rows, f, indent=1)
    aer = {r["hyp"]: r for r in rows}
    default = aer[chosen]
    one = min((r for r in rows if r["hyp"].count(".") == 1), key=lambda r: r["aer"])
    two = min((r for r in rows if r["hyp"].count(".") == 2 and ".reverse." not in r["hyp"]), key=lambda r: r["aer"])
    lines = [
        "",
        f"both directions (align-extract --reverse-model, norm and alti at layer 0, AWI, --blend {blend}):",
    ]
    lines += [
        f"  {r['hyp'].removesuffix('.align'):<40} AER {r['aer']:5.1f}" for r in sorted(rows, key=lambda r: r["aer"])
    ]
    # eflomal's links of the same test set in the same direction, where benchmarks/eflomal_baseline.py wrote them
    pair = {"hansards": "enfr", "rwth": "deen"}.get(args.test_set)
    # eflomal saw the test sentences as often as the model did: 20 times for the x20 models, once for the half models
    # (eflomal must see a sentence to align it)
    times = 1 if read_training_text(args.model_dir).get("test_halves") else 20
    efl = os.path.join(ROOT, "benchmarks", "results", f"eflomal_{pair}_x{times}") if pair == args.src + args.tgt else ""
    efl_text = ""
    if all(os.path.exists(os.path.join(efl, f"{x}.align")) for x in ("intersect", "grow-diag-final-and")):
        # eflomal's links on these sentences (benchmarks/eflomal_baseline.py), scored here
        got = {}
        for system in ("intersect", "grow-diag-final-and"):
            links = read_alignments(os.path.join(efl, f"{system}.align"))
            got[system] = score_corpus(gold, links.select(list(range(len(pairs))))).aer * 100
        # the half models' text holds the odd-numbered test sentences only; eflomal's every one once
        text = "the same text" if times == 20 else "the same corpus with every test sentence once"
        efl_text = (
            f"; eflomal trained on {text}: intersect {got['intersect']:.1f}, "
            f"grow-diag-final-and {got['grow-diag-final-and']:.1f}"
        )
    lines.append(
        f"combined ({chosen.removesuffix('.align')}, "
        + ("the held-out protocol's choice for this set" if held else "the default")
        + f"): AER {default['aer']:.1f} "
        f"(P {default['precision']:.1f} R {default['recall']:.1f}); best combined here {two['hyp'].removesuffix('.align')} "
        f"{two['aer']:.1f}; best of one direction here {one['hyp'].removesuffix('.align')} {one['aer']:.1f}{efl_text}"
    )
    lines.append(by_half(gold, read_alignments(os.path.join(out, chosen)), args.model_dir))
    return {"text": "\n".join(lines), "name": chosen, "path": os.path.join(out, chosen), "rows": rows}


def by_half(gold, links, model_dir: str) -> str:
    """The combined AER on the odd-numbered and on the even-numbered sentences apart, and what the model's training
    text held of each (``training_text`` of its model_config.json, data/scripts/export_model.py)."""
    n = len(gold)
    odd, even = list(range(0, n, 2)), list(range(1, n, 2))  # 1-based odd-numbered: 0-based lines 0, 2, ...
    aer = [score_corpus(gold.select(ix), links.select(ix)).aer * 100 for ix in (odd, even)]
    seen = read_training_text(model_dir)
    if seen.get("test_halves"):
        h = seen["test_halves"]
        left = int(h.get("odd_not_added_equal_to_an_even_one", 0))  # equal to an even-numbered one: never wins
        if int(h.get("seen_once", 0)) + left + int(h.get("never_seen", 0)) != n:  # --limit: which are among them?
            left = 0
        what = (
            "seen once in training" + (f" but {left} equal to an even-numbered one, never" if left else ""),
            "never seen in training",
        )
    elif seen.get("test_repeat"):
        what = (f"seen {seen['test_repeat']} times in training",) * 2
    else:
        # the models shipped up to 0.2.0 predate the record; their cards say x20
        what = ("what training saw of them is not recorded in model_config.json; the x20 models saw them 20 times",) * 2
    if what[0] == what[1]:  # both halves alike: say it once
        return (
            f"by half: odd-numbered sentences ({len(odd)}) AER {aer[0]:.1f}; even-numbered ({len(even)}) AER "
            f"{aer[1]:.1f} ({what[0]})"
        )
    return (
        f"by half: odd-numbered sentences ({len(odd)}, {what[0]}) AER {aer[0]:.1f}; "
        f"even-numbered ({len(even)}, {what[1]}) AER {aer[1]:.1f}"
    )


def write_view(
    pairs, gold, dump: str, rows: list[dict], path: str, ts: testsets.LoadedTestSet, combined: dict | None = None
) -> str:
    """The align-view page of the best layer (and shift) of each method, best method first, beside the gold;
    with ``combined`` (both directions), the combined alignment first."""
    chosen = sorted(
        (best_row(rows, m) for m in sorted({parse_name(r["hyp"]).method for r in rows})), key=lambda r: r["aer"]
    )
    hyps = {}
    paths = {}
    if combined is not None:
        label = "both directions: " + combined["name"].removesuffix(".align")
        hyps[label] = read_alignments(combined["path"])
        paths[label] = combined["path"]
    for r in chosen:
        hyps[r["hyp"].removesuffix(".align")] = read_alignments(os.path.join(dump, r["hyp"]))
        paths[r["hyp"].removesuffix(".align")] = os.path.join(dump, r["hyp"])
    sig = signature(EvalOptions(), ts)  # the set's gold against Pharaoh files, as written: the defaults
    page = build_page(
        pairs,
        hyps,
        gold,
        title=f"{ts.name} {ts.pair}, {len(pairs)} sentences: "
        + ("both directions combined, then " if combined is not None else "")
        + "the best layer of each method beside the gold (./run demo)",
        sig=sig,
        paths=paths,
    )
    write_text_atomic(path, page)
    return path


def plot_example(model_dir: str, pairs, gold, layer: int, path: str, index: int = 0) -> None:
    """One sentence's word-level score matrices, attention weights next to norms (AWO and AWI), gold marked."""
    import logging

    from fairseq_plugins.hub import NormAligner

    logging.getLogger("matplotlib").setLevel(logging.WARNING)  # fairseq sets the root logger to DEBUG-friendly

    # the first sentence with 8 to 14 words on each side, for a readable picture
    index = next((i for i, (s, t) in enumerate(pairs) if 8 <= len(s) <= 14 and 8 <= len(t) <= 14), index)
    aligner = NormAligner.from_checkpoint(model_dir)
    src = [w.lower() for w in pairs[index][0]]
    tgt = [w.lower() for w in pairs[index][1]]
    panels = {
        f"{m} {sh.upper()} layer {layer}": aligner.score_matrix(src, tgt, m, layer, sh)
        for sh in ("awo", "awi")
        for m in ("attn", "norm")
    }
    draw_example(
        panels,
        src,
        tgt,
        gold.links(index, "sure"),
        gold.links(index, "possible"),
        path,
        f"Hansards sentence {index + 1}",
    )


def draw_example(panels: dict, src: list, tgt: list, sure, possible, path: str, title: str) -> dict:
    """Score matrices ((tgt, src) each) side by side as row shares, one colour bar, axis titles, the gold's
    sure links as solid red squares and its possible links as dashed orange circles; returns the number
    of each mark drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, Rectangle

    n = len(panels)
    fig, axes = plt.subplots(
        1, n, figsize=(2.0 + 0.3 * n * len(src), 2.2 + 0.3 * len(tgt)), layout="constrained", squeeze=False
    )
    axes = axes[0]
    drawn = {"sure": 0, "possible": 0}
    for ax, (label, m) in zip(axes, panels.items()):
        m = np.asarray(m, dtype=np.float64)
        m = m / np.maximum(m.sum(axis=1, keepdims=True), 1e-30)  # rows as shares, comparable across methods
        im = ax.imshow(m, cmap="Blues", vmin=0, vmax=1)
        for s_, t_ in sure:
            ax.add_patch(Rectangle((s_ - 0.45, t_ - 0.45), 0.9, 0.9, fill=False, ec="#d62728", lw=1.6))
            drawn["sure"] += 1
        for s_, t_ in possible:
            ax.add_patch(Circle((s_, t_), 0.3, fill=False, ec="#ff7f0e", lw=1.4, ls="--"))
            drawn["possible"] += 1
        ax.set_title(label, fontsize=9)
        ax.set_xticks(range(len(src)), src, rotation=90, fontsize=7)
        ax.set_yticks(range(len(tgt)), tgt if ax is axes[0] else [""] * len(tgt), fontsize=7)
        ax.set_xlabel("source words", fontsize=8)
    axes[0].set_ylabel("target words", fontsize=8)
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="share of the row (score / row sum)")
    handles = [
        Line2D([], [], marker="s", ls="", mfc="none", mec="#d62728", mew=1.6, ms=9, label="sure gold link"),
        Line2D([], [], marker="o", ls="", mfc="none", mec="#ff7f0e", mew=1.4, ms=7, label="possible gold link"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    fig.suptitle(f"{title}: row-normalized scores", fontsize=9)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn


if __name__ == "__main__":
    sys.exit(main())
