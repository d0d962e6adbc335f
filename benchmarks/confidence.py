"""How good are the link probabilities and sentence scores of align-calibrate? Measured on held-out gold.

For each gold set and model (Hansards with ``data/models/enfr``, RWTH De-En with ``data/models/deen``) and each
method, both ways round: the layer (AWI) is chosen by AER on one half of the sentences, the calibration
is fitted on that half, and everything is measured on the other half; the two halves pooled:

- expected calibration error of the link probabilities (10 equal bins) and a reliability diagram;
- AER of the links of probability >= 0.5 beside the argmax links of the same layer;
- Spearman correlation between the sentence score and the per-sentence F1 of the argmax links;
- ROC-AUC of the sentence score for telling the held-out gold pairs from corrupted copies of them
  (target shuffled among pairs, cut to its first half, another pair's target appended), beside the
  length-ratio baseline ``-|log(len(tgt) / len(src))|``. This sentence score is the one of version 1 calibration
  files (link probabilities and lengths: ``LINK_FEATURES``), fitted on these three corruptions; the score
  ``align-calibrate`` fits now (both models' log-probabilities, every kind of noise) is measured by
  ``benchmarks/sentence_scores.py``, leave-one-kind-out.

Writes ``benchmarks/results/confidence.{md,json}`` and ``confidence_reliability.png``.
Usage: python benchmarks/confidence.py [--methods attn,norm,alti] [--limit N] [--out benchmarks/results/confidence]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.confidence.calibration import (  # noqa: E402
    CORRUPTIONS,
    ScoredPair,
    corrupt,
    fit_calibration,
    gold_cells,  # noqa: E402
)
from align.extraction.calibrated import calibration_setting  # noqa: E402
from align.gold import testsets  # noqa: E402
from align.gold.protocol import ProtocolError, add_protocol_argument, protocol_of  # noqa: E402
from align.io.atomic import write_text_atomic  # noqa: E402
from align.links.alignments import Alignments  # noqa: E402
from align.spec.setting import Setting  # noqa: E402
from eval.experiment import folds_of  # noqa: E402
from eval.metrics import expected_calibration_error, reliability, roc_auc, score_corpus, score_sentences, spearman  # noqa: E402

SETS = [("hansards", "enfr", "Hansards En-Fr"), ("rwth", "deen", "RWTH De-En")]


def all_matrices(aligner, pairs, methods, batch_size: int) -> dict:
    """{(method, layer): [(scores (T, S), NULL (T,)) per pair]} at AWI, every layer."""
    spec = aligner.spec(methods, list(range(aligner.n_layers)), ["awi"])
    items = [(f"sentence {k + 1}", s, t) for k, (s, t) in enumerate(pairs)]
    out: dict = {}
    for _, se, te, sc in aligner.score_items(items, spec, batch_size):
        for name, w in aligner.word_scores(se, te, sc, spec, null=True).items():
            k = Setting.parse(name)
            out.setdefault((k.method, k.layer), []).append((w[:, :-1], w[:, -1]))
    return out


def argmax_links(mats) -> Alignments:
    """Each target word linked to its best source word (the argmax decoder)."""
    return Alignments.from_lists(
        [[(int(np.argmax(m[i])), i) for i in range(m.shape[0])] if m.shape[1] else [] for m, _ in mats]
    )


def threshold_links(probs, threshold: float = 0.5) -> Alignments:
    return Alignments.from_lists([[(int(s), int(t)) for t, s in zip(*np.nonzero(p >= threshold))] for p in probs])


def run_set(
    name: str, model: str, methods: list[str], limit: int, batch_size: int, seed: int = 1, fits: tuple = (0, 1)
) -> dict:
    """Every measurement of one gold set and model: fitted on each half of ``fits`` (0: the odd-numbered sentences,
    0-based lines 0, 2, ...), measured on the other, pooled (the test-halves protocol fits on 0 only: measured on
    the never-seen half)."""
    from fairseq_plugins.hub import NormAligner

    ts = testsets.load(name)
    pairs = list(zip(ts.src, ts.tgt))
    gold = ts.gold
    if limit:
        pairs, gold = pairs[:limit], gold.select(list(range(limit)))
    aligner = NormAligner.from_checkpoint(os.path.join(ROOT, "data", "models", model))
    identity = {k: v for k, v in aligner.identity().items() if k != "path"}
    clean = all_matrices(aligner, pairs, methods, batch_size)
    folds = folds_of(len(pairs))
    corrupted = {}  # (kind, fold) -> matrices of the corrupted copies of that fold's pairs
    for f, idx in enumerate(folds):
        for kind in CORRUPTIONS:
            corrupted[kind, f] = all_matrices(
                aligner, corrupt([pairs[k] for k in idx], kind, seed + f), methods, batch_size
            )
    cells = [gold_cells(gold, k, *clean[methods[0], 0][k][0].shape) for k in range(len(pairs))]
    spec = aligner.spec(methods, [0], ["awi"])
    out = {}
    for method in methods:
        probs = [None] * len(pairs)
        chosen, sent_scores, auc_parts = [], np.zeros(len(pairs)), {k: ([], []) for k in CORRUPTIONS}
        base_parts = {k: ([], []) for k in CORRUPTIONS}
        argmax_all = [None] * len(pairs)
        for f in fits:
            fit, held = folds[f], folds[1 - f]
            gfit = gold.select(fit)
            layer = min(
                range(aligner.n_layers),
                key=lambda la: score_corpus(gfit, argmax_links([clean[method, la][k] for k in fit])).aer,
            )
            chosen.append(layer)
            mats = clean[method, layer]
            cal = fit_calibration(
                [mats[k] for k in fit],
                [cells[k] for k in fit],
                [ScoredPair(m) for kind in CORRUPTIONS for m in corrupted[kind, f][method, layer]],
                identity,
                calibration_setting(spec, method, layer, "awi"),
                {"fold": f},
            )
            for k in held:
                probs[k] = cal.probabilities(*mats[k])
                sent_scores[k] = cal.sentence_score(probs[k])
                argmax_all[k] = mats[k]
            # the held-out half's corrupted copies: made from the held-out pairs (fold 1 - f)
            for kind in CORRUPTIONS:
                bad = [cal.sentence_score(cal.probabilities(*m)) for m in corrupted[kind, 1 - f][method, layer]]
                auc_parts[kind][0].extend(sent_scores[k] for k in held)
                auc_parts[kind][1].extend(bad)
                bad_len = [
                    -abs(math.log(m.shape[0] / m.shape[1])) if 0 not in m.shape else -1e9
                    for m, _ in corrupted[kind, 1 - f][method, layer]
                ]
                base_parts[kind][0].extend(-abs(math.log(len(pairs[k][1]) / len(pairs[k][0]))) for k in held)
                base_parts[kind][1].extend(bad_len)
        measured = sorted(k for f in fits for k in folds[1 - f])  # every sentence, or the never-seen half
        p = np.concatenate([probs[k].ravel() for k in measured])
        y = np.concatenate([cells[k].ravel() for k in measured])
        g = gold.select(measured)
        argmax = argmax_links([argmax_all[k] for k in measured])
        f1 = score_sentences(g, argmax)[:, 3]
        out[method] = {
            "layers": chosen,
            "ece": expected_calibration_error(p, y),
            "reliability": reliability(p, y),
            "cells": int(len(p)),
            "gold_rate": float(y.mean()),
            "aer_argmax": 100 * score_corpus(g, argmax).aer,
            "aer_p05": 100 * score_corpus(g, threshold_links([probs[k] for k in measured])).aer,
            "spearman_f1": spearman(sent_scores[measured], f1),
            "auc": {k: roc_auc(*auc_parts[k]) for k in CORRUPTIONS},
            "auc_length_ratio": {k: roc_auc(*base_parts[k]) for k in CORRUPTIONS},
        }
    return {
        "set": name,
        "signature": ts.signature(),
        "model": f"data/models/{model}",
        "sentences": len(pairs),
        "measured": len(measured),
        "methods": out,
    }


def plot(results: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 4), squeeze=False)
    for ax, res in zip(axes[0], results):
        ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--", label="perfect")
        for method, r in res["methods"].items():
            pts = [(b["mean_probability"], b["positive_rate"]) for b in r["reliability"] if b["count"]]
            ax.plot(*zip(*pts), marker="o", ms=3, label=f"{method} (ECE {r['ece']:.3f})")
        ax.set(
            title=f"{res['label']}, held-out halves",
            xlabel="predicted P(gold link)",
            ylabel="share of gold links",
            xlim=(0, 1),
            ylim=(0, 1),
        )
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def markdown(results: list[dict], meta: dict) -> str:
    lines = [
        "# Confidence: calibrated link probabilities and sentence scores",
        "",
        (
            "Each set split into two interleaved halves; for each half the AWI layer is chosen by AER and "
            "`align-calibrate`'s models are fitted on it, then everything is measured on the other half; the two "
            "halves pooled (protocol x20: the models saw every gold pair twenty times in training). "
            if meta.get("protocol", "x20") == "x20"
            else "Protocol halves (the models saw the odd-numbered gold pairs once, the even-numbered never): the AWI "
            "layer chosen by AER and `align-calibrate`'s models fitted on the odd-numbered sentences, everything "
            "measured on the even-numbered: **pairs the models never saw**. "
        )
        + "ECE: expected calibration error of P(cell is a gold link, sure or possible), 10 equal "
        "bins. `AER p>=0.5`: the links of probability at least 0.5, beside the argmax links of the same layer. "
        "Spearman: sentence score against the per-sentence F1 of the argmax links. AUC: ROC-AUC of the "
        "sentence score for telling held-out gold pairs from corrupted copies of them; `len`: the length-ratio "
        "baseline `-|log(T/S)|`. The negatives the sentence model was fitted on are corrupted copies of the "
        "*other* half's pairs, of the same three kinds: the AUCs measure held-out pairs, not held-out kinds "
        "of corruption.",
        "",
        f"`{meta['command']}` ({meta['seconds']} s).",
        "",
    ]
    for res in results:
        lines += [
            f"## {res['label']} ({res.get('measured', res['sentences'])} of {res['sentences']} sentences measured, "
            f"`{res['model']}`, {res['signature']})",
            "",
            "| method | layers | ECE | AER argmax | AER p>=0.5 | Spearman | AUC shuffled (len) | "
            "AUC truncated (len) | AUC appended (len) |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for method, r in res["methods"].items():
            aucs = " | ".join(f"{r['auc'][k]:.3f} ({r['auc_length_ratio'][k]:.3f})" for k in CORRUPTIONS)
            lines.append(
                f"| {method} | {','.join(map(str, r['layers']))} | {r['ece']:.4f} | {r['aer_argmax']:.1f} | "
                f"{r['aer_p05']:.1f} | {r['spearman_f1']:.3f} | {aucs} |"
            )
        lines.append("")
    lines += ["![reliability](confidence_reliability.png)", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", default="attn,norm,attn-res-ln,alti")
    ap.add_argument("--sets", default="hansards,rwth", help="of: " + ", ".join(s for s, _, _ in SETS))
    ap.add_argument("--limit", type=int, default=0, help="only the first N sentences of each set (a quick look)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--out", help="PREFIX of the outputs (default benchmarks/results/confidence[_halves])")
    add_protocol_argument(
        ap,
        "x20: fit on each half, measure on the other, pooled; halves: fit on the odd-numbered (seen "
        "once), measure on the even-numbered (never seen).",
    )
    args = ap.parse_args(argv)
    chosen = [model for name, model, _ in SETS if name in args.sets.split(",")]
    try:
        args.protocol = protocol_of([os.path.join(ROOT, "data", "models", m) for m in chosen], args.protocol)
    except ProtocolError as e:
        print(f"confidence: {e}", file=sys.stderr)
        return 1
    fits = (0,) if args.protocol == "halves" else (0, 1)
    args.out = args.out or os.path.join(
        ROOT, "benchmarks", "results", "confidence" + ("_halves" if fits == (0,) else "")
    )
    t0 = time.time()
    methods = [m for m in args.methods.split(",") if m]
    results = []
    for name, model, label in SETS:
        if name not in args.sets.split(","):
            continue
        try:
            res = run_set(name, model, methods, args.limit, args.batch_size, fits=fits)
        except testsets.TestSetError as e:
            print(f"confidence: {e}: {label} left out", file=sys.stderr)
            continue
        res["label"] = label
        results.append(res)
        print(f"{label}: " + "; ".join(f"{m} ECE {r['ece']:.4f}" for m, r in res["methods"].items()), file=sys.stderr)
    if not results:
        print("confidence: no set measured", file=sys.stderr)
        return 1
    given = sys.argv[1:] if argv is None else list(argv)
    meta = {"command": shlex.join(["python", "benchmarks/confidence.py", *given]), "seconds": round(time.time() - t0),
            "protocol": args.protocol}  # fmt: skip
    write_text_atomic(args.out + ".json", json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    plot(results, args.out + "_reliability.png")
    text = markdown(results, meta)
    write_text_atomic(args.out + ".md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
