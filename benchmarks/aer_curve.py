"""AER as training goes on: each checkpoint's best layer per method, AWO and AWI, against a gold set, with
the checkpoint's update count and validation loss. Shows when (and whether) alignments emerge.
Writes ``OUT.json`` (one entry per checkpoint, kept across runs: a checkpoint already measured is not
measured again), ``OUT.md`` and ``OUT.png``.

Usage: python benchmarks/aer_curve.py CHECKPOINT [CHECKPOINT ...] --vocab work/deen --src de --tgt en
           [-t rwth] [--testsets-dir DIR] [--out benchmarks/results/aer_curve_deen]
           [--methods attn,norm,attn-res-ln] [--limit N]

``--vocab`` holds the model's ``spm.model`` and its ``dict.SRC.txt``/``dict.TGT.txt`` (beside it or under
``bin/``: a training folder made by data/scripts/prepare.py, or a shipped model folder). The gold's first
side is ``--pair``'s first language; a model translating the other way is run on swapped text and its
links reversed into the gold's orientation.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.gold import testsets  # noqa: E402
from eval.experiment import folds_of, held_out_choice, load_gold, score_all  # noqa: E402
from eval.grid import best, layer_rows, parse_name  # noqa: E402
from eval.metrics import score_counts  # noqa: E402
from fairseq_plugins.pipeline import align_pairs  # noqa: E402


def checkpoint_info(path: str) -> dict:
    """A fairseq checkpoint's update count, epoch and validation loss (base 2, as fairseq logs it; None
    where the checkpoint has none)."""
    from fairseq_plugins.checkpoint import load_checkpoint

    state = load_checkpoint(path)
    hist = state.get("optimizer_history") or [{}]
    extra = state.get("extra_state") or {}
    updates = hist[-1].get("num_updates")
    if updates is None:
        raise ValueError(f"{path}: no optimizer_history[-1].num_updates: not a fairseq training checkpoint")
    val = extra.get("val_loss")
    return {
        "updates": int(updates),
        "epoch": (extra.get("train_iterator") or {}).get("epoch"),
        "val_loss": None if val is None else float(val),
    }


def model_dir_for(checkpoint: str, vocab: str, src: str, tgt: str, into: str) -> str:
    """A model folder (model.pt, spm.model, dictionaries) made of links to ``checkpoint`` and ``vocab``'s files."""
    from fairseq_plugins.checkpoint import CheckpointError, training_vocab

    try:
        found = training_vocab(vocab, ("spm.model", f"dict.{src}.txt", f"dict.{tgt}.txt"))
    except CheckpointError as e:
        raise ValueError(f"--vocab {e}") from None
    found["model.pt"] = os.path.abspath(checkpoint)
    for name, target in found.items():
        os.symlink(target, os.path.join(into, name))
    return into


def curve_point(rows: list[dict], methods: list[str]) -> dict:
    """Scored dump rows of one checkpoint -> {"METHOD-SHIFT": {"aer", "precision", "recall", "layer"}} at the
    best layer of each method and shift."""
    out = {}
    main = layer_rows(rows)
    for method in methods:
        for shift in ("awo", "awi"):
            try:
                b = best([r for r in main if parse_name(r["hyp"]).shift == shift], method)
            except ValueError:
                continue
            out[f"{method}-{shift}"] = {
                "aer": b["aer"],
                "precision": b["precision"],
                "recall": b["recall"],
                "layer": parse_name(b["hyp"]).layer,
            }
    return out


def held_out_point(rows: list[dict], counts: dict, methods: list[str], halves: dict | None = None) -> dict:
    """{"METHOD-SHIFT": AER} with the layer chosen on one half of the sentences (i % 2) and scored on the
    other, both ways round, pooled (``eval.experiment.held_out_choice``): the stopping rule's figure, free of
    the in-sample choice of layer that the best-layer columns make. ``halves`` (filled when given):
    {"METHOD-SHIFT": [AER on the odd-numbered, AER on the even-numbered]}, each with the layer chosen on the other
    (the test-halves models saw the odd-numbered once, the even-numbered never)."""
    out = {}
    names = [r["hyp"] for r in layer_rows(rows)]
    folds = folds_of(len(next(iter(counts.values()))), 2)
    for method in methods:
        for shift in ("awo", "awi"):
            cand = [n for n in names if parse_name(n).method == method and parse_name(n).shift == shift]
            if cand:
                got = held_out_choice(counts, cand, folds)
                out[f"{method}-{shift}"] = 100 * score_counts(got["pooled"]).aer
                if halves is not None:  # folds[k]: chosen on the other half, scored on half k (0: odd-numbered)
                    halves[f"{method}-{shift}"] = [f["test_aer"] for f in got["folds"]]
    return out


def format_curve(points: list[dict]) -> str:
    """Markdown: one row per checkpoint (by update count): validation loss (label-smoothed, base 2, as
    fairseq-train logs it), best-layer AER (layer) per method and shift."""
    cols = sorted({c for p in points for c in p["best"]}, key=lambda c: (c.endswith("awi"), c))
    held = "norm-awi" if any("norm-awi" in p.get("held_out", {}) for p in points) else None
    by_half = held if any(held in p.get("held_out_halves", {}) for p in points) else None
    head = (
        "| updates | valid loss | "
        + " | ".join(cols)
        + (f" | {held} held-out |" if held else " |")
        + (" odd / even |" if by_half else "")
    )
    lines = [head, "|---:|---:|" + "---:|" * (len(cols) + bool(held) + bool(by_half))]
    for p in sorted(points, key=lambda p: p["updates"]):
        loss = "" if p.get("val_loss") is None else f"{p['val_loss']:.3f}"
        cells = [f"{p['best'][c]['aer']:.1f} (L{p['best'][c]['layer']})" if c in p["best"] else "" for c in cols]
        if held:
            v = p.get("held_out", {}).get(held)
            cells.append("" if v is None else f"{v:.1f}")
        if by_half:
            h = p.get("held_out_halves", {}).get(by_half)
            cells.append("" if h is None else f"{h[0]:.1f} / {h[1]:.1f}")
        lines.append(f"| {p['updates']} | {loss} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def stopping_rule(points: list[dict], min_updates: int, window: int = 2000, delta: float = 0.5) -> str:
    """The model cards' stopping rule on the ``norm-awi`` held-out column, in one line: stop once the run has at
    least ``min_updates`` and the last ``window`` updates lowered the best held-out AER by less than ``delta``
    points (the x20 cards: min 0; the test-halves protocol, halves_protocol.md: 6,000)."""
    got = {p["updates"]: p["held_out"]["norm-awi"] for p in points if "norm-awi" in p.get("held_out", {})}
    if not got:
        return "stopping rule: no held-out norm-awi figure yet"
    last = max(got)

    def best_upto(u: int) -> float:
        return min(v for k, v in got.items() if k <= u)

    now = best_upto(last)
    head = f"stopping rule (at least {min_updates} updates; {window} more lowering the best held-out norm-awi AER by "
    head += f"less than {delta}): at {last} updates the best is {now:.1f}"
    fired = rule_fired_at(points, min_updates, window, delta)
    if fired is not None and fired < last:  # scored on past it: the run stopped where the rule first fired
        return head + f"; the rule fired at {fired} updates: stop (ship the lowest validation loss)"
    if last < min_updates:
        return head + f"; {min_updates - last} updates before the rule applies: go on"
    if last - window not in got:
        return head + f"; no point at {last - window} updates to compare with: go on"
    verdict = "stop (ship the lowest validation loss)" if fired == last else "go on"  # the rule, coded once
    return head + f", {best_upto(last - window) - now:.1f} below the best at {last - window}: {verdict}"


def rule_fired_at(points: list[dict], min_updates: int, window: int = 2000, delta: float = 0.5) -> int | None:
    """The first scored update count at which :func:`stopping_rule` says stop (the run stops there), or None."""
    got = {p["updates"]: p["held_out"]["norm-awi"] for p in points if "norm-awi" in p.get("held_out", {})}
    for u in sorted(got):
        if u >= min_updates and u - window in got:
            before = min(v for k, v in got.items() if k <= u - window)
            if before - min(v for k, v in got.items() if k <= u) < delta:
                return u
    return None


def plot_curve(points: list[dict], path: str, title: str) -> None:
    """AER of each method/shift's best layer against updates."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = sorted(points, key=lambda p: p["updates"])
    cols = sorted({c for p in pts for c in p["best"]})
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for c in cols:
        xs = [p["updates"] for p in pts if c in p["best"]]
        ax.plot(
            xs,
            [p["best"][c]["aer"] for p in pts if c in p["best"]],
            marker="o",
            linestyle="--" if c.endswith("awi") else "-",
            label=c,
        )
    ax.set_xlabel("updates")
    ax.set_ylabel("AER (%), best layer")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def _write(out: str, points: list[dict], title: str, rule: int | None = None) -> None:
    verdict = f"\n\n{stopping_rule(points, rule)}." if rule is not None else ""
    md = (
        f"# {title}\n\nBest layer per method and shift; AER (%) against the gold (sure + possible), word level. "
        "`norm-awi held-out`: the layer chosen on one half of the sentences (i % 2) and scored on the other, both "
        "ways round, pooled: the figure of the model card's stopping rule; `odd / even`: the same on the "
        "odd-numbered sentences (seen once by the test-halves models) and on the even-numbered (never seen) apart."
        f"\n\n{format_curve(points)}{verdict}\n\n![AER against updates]({os.path.basename(out)}.png)\n"
    )
    for ext, body in ((".json", json.dumps({"title": title, "points": points}, indent=1)), (".md", md)):
        with open(out + ext + ".tmp", "w", encoding="utf-8") as f:
            f.write(body)
        os.replace(out + ext + ".tmp", out + ext)
    plot_curve(points, out + ".png", title)


def measure(args: argparse.Namespace, out: str) -> list[dict]:
    """The points already in ``OUT.json`` plus one per checkpoint of ``args`` not measured yet; ValueError on
    bad input (gold, checkpoint, vocabulary, or an ``OUT.json`` measured on other sentences or methods)."""
    pairs, gold = load_gold(args.test_set, args.limit, args.testsets_dir)
    from fairseq_plugins.checkpoint import CheckpointError, fairseq_checkpoint

    for c in args.checkpoints:
        if not os.path.exists(c):
            raise ValueError(f"{c}: no such checkpoint")
    # a shipped model folder (safetensors only) counts as the .pt fairseq reads (written once into the cache);
    # a .pt stays as it is
    try:
        args.checkpoints = [fairseq_checkpoint(c) for c in args.checkpoints]
    except (CheckpointError, OSError) as e:
        raise ValueError(str(e)) from None
    points = []
    if os.path.exists(out + ".json"):
        with open(out + ".json") as f:
            points = json.load(f)["points"]
    if any(p.get("sentences") != len(pairs) or p.get("methods") != args.methods for p in points):
        raise ValueError(f"{out}.json holds points measured on other sentences or methods; use another --out")
    # a point without the held-out columns is measured again
    done = {p["updates"] for p in points if "held_out" in p and "held_out_halves" in p}
    swap = args.src != args.pair[:2]
    sent = [(b, a) for a, b in pairs] if swap else pairs
    for ckpt in args.checkpoints:
        info = checkpoint_info(ckpt)
        if info["updates"] in done:
            print(f"aer_curve: update {info['updates']} already in {out}.json", file=sys.stderr)
            continue
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            model = model_dir_for(ckpt, args.vocab, args.src, args.tgt, tmp)
            hyps = align_pairs(model, sent, args.methods.split(","), args.batch_size)
        if swap:
            hyps = {n: h.reversed() for n, h in hyps.items()}
        rows, counts = score_all(gold, hyps)
        before = [p for p in points if p["updates"] == info["updates"]]
        if before and info.get("val_loss") is None:  # a shipped model folder carries no validation loss: keep it
            info["val_loss"] = before[0].get("val_loss")
        points = [p for p in points if p["updates"] != info["updates"]]
        point = {
            **info,
            "checkpoint": os.path.basename(ckpt),
            "sentences": len(pairs),
            "methods": args.methods,
            "best": curve_point(rows, args.methods.split(",")),
            "held_out": held_out_point(rows, counts, args.methods.split(","), halves := {}),
            "held_out_halves": halves,
            "seconds": round(time.time() - t0, 1),
        }
        points.append(point)
        done.add(info["updates"])
        print(
            f"update {info['updates']}: " + ", ".join(f"{k} {v['aer']:.1f}" for k, v in point["best"].items()),
            file=sys.stderr,
            flush=True,
        )
    return points


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--vocab", required=True, help="folder with spm.model and dict.SRC/TGT.txt (or bin/)")
    ap.add_argument("--src", required=True)
    ap.add_argument("--tgt", required=True)
    ap.add_argument(
        "-t",
        "--test-set",
        default="rwth",
        help="named test set (align-eval --list; default rwth); its first language is the gold's source",
    )
    ap.add_argument(
        "--testsets-dir",
        help="folder of the sets that are not shipped (default $NORM_ALIGN_TESTSETS, else ../shared/data/gold)",
    )
    ap.add_argument("--out", default=None, help="output stem (default benchmarks/results/aer_curve_SRCTGT)")
    ap.add_argument("--methods", default="attn,norm,attn-res-ln")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument(
        "--stopping-rule",
        type=int,
        metavar="MIN_UPDATES",
        help="say under the table whether the cards' stopping rule fired, applying from MIN_UPDATES (the "
        "test-halves protocol: 6000; the x20 cards: 0)",
    )
    args = ap.parse_args(argv)
    try:
        langs = testsets.get(args.test_set).langs
    except ValueError as e:
        ap.error(str(e))
    args.pair = "".join(langs)
    if {(args.src, args.tgt), (args.tgt, args.src)} != {langs, langs[::-1]}:
        ap.error(
            f"--src {args.src} --tgt {args.tgt} are not the languages of test set {args.test_set} ({'-'.join(langs)})"
        )
    out = args.out or os.path.join(ROOT, "benchmarks", "results", f"aer_curve_{args.src}{args.tgt}")
    try:
        points = measure(args, out)
    except ValueError as e:
        print(f"aer_curve: {e}", file=sys.stderr)
        return 1
    title = (
        f"{args.src.title()}->{args.tgt.title()} on test set {args.test_set} "
        f"({points[-1]['sentences'] if points else 0} sentences)"
    )
    _write(out, points, title, args.stopping_rule)
    print(format_curve(points))
    if args.stopping_rule is not None:
        print(stopping_rule(points, args.stopping_rule))
    return 0


if __name__ == "__main__":
    sys.exit(main())
