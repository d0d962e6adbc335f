"""Do sentence scores catch the noise real corpora carry, including kinds they were never shown? (issue 49)

For each gold set and its two models (Hansards En-Fr: ``enfr`` forward, ``fren`` reverse; RWTH De-En: ``deen``
and ``ende``), the sentences split into the odd and the even half (``align-calibrate --fit-on odd``'s halves).
From each half's pairs, noisy copies of every kind of :data:`align.confidence.noise.KINDS` (Khayrallah & Koehn
2018's taxonomy and Bicleaner's synthetic negatives; a copy equal to its pair is not noise and is left out).
For every kind K, **leave-one-kind-out**: the sentence score is fitted on one half's clean pairs against that
half's noise of every kind but K, and measured (ROC-AUC, clean against K) on the other half; both halves pooled.
The link probabilities are the other half's cell calibration (``norm``, the AWI layer of least AER on the fit
half), as ``align-calibrate`` fits them. Beside it: the score without the reverse model, the dual conditional
cross-entropy alone (Junczys-Dowmunt 2018) and the length ratio ``-|log(T/S)|``.

Writes ``benchmarks/results/sentence_scores.{md,json}`` and ``sentence_scores.png`` (the score's distribution
per kind). Usage: python benchmarks/sentence_scores.py [--limit N] [--sets hansards,rwth] [--protocol halves
--models-dir DIR]

``--protocol halves``: for the models of the test-halves protocol (issue 46: the odd-numbered gold pairs seen once in
training, the even-numbered never), the score is fitted on the odd-numbered half only and measured on the
even-numbered: pairs the models never saw, as a user's corpus is.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.confidence import noise  # noqa: E402
from align.confidence.calibration import (  # noqa: E402
    ScoredPair,
    fit_calibration,
    fit_sentence_model,
    fold_indices,
    gold_cells,
    sentence_rows,
)
from align.confidence.per_kind import fit_per_kind  # noqa: E402
from align.confidence.sentence import BOTH_FEATURES, FORWARD_FEATURES, SENTENCE_MODELS  # noqa: E402
from align.extraction.engine import LOGPROBS  # noqa: E402
from align.gold import testsets  # noqa: E402
from align.gold.protocol import ProtocolError, add_protocol_argument, protocol_of  # noqa: E402
from align.io.atomic import write_text_atomic  # noqa: E402
from align.links.alignments import Alignments  # noqa: E402
from align.spec.setting import Setting  # noqa: E402
from eval.metrics import roc_auc, score_corpus  # noqa: E402

SETS = {
    # name: (forward model, reverse model, label, third-language text: a FLORES side of another language)
    "hansards": ("enfr", "fren", "Hansards En-Fr", "deen_extra/flores101-devtest/flores101-devtest.de"),
    "rwth": ("deen", "ende", "RWTH De-En", "enfr_extra/flores101-devtest/flores101-devtest.fr"),
}
METHOD = "norm"
PROTOCOL_TEXT = {
    "x20": "the models saw every gold pair twenty times in training (x20), which flatters the clean pairs (their "
    "cross-entropy is lower than a new pair's would be); fitted on each half, measured on the other, both pooled",
    "halves": "the models saw the odd-numbered gold pairs once in training and the even-numbered never (the "
    "test-halves protocol, issue 46): fitted on the odd-numbered half, measured on the even-numbered, **pairs the "
    "models never saw**",
}
FITS = {"x20": (0, 1), "halves": (0,)}
"""The halves each protocol fits on (0: the odd-numbered sentences, 0-based lines 0, 2, ...); each is measured on
the other."""
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def third_language(rel: str, n: int) -> list[list[str]]:
    """The first ``n`` lines of a text of a third language, lowercased and split as the gold sets are."""
    shared = os.environ.get("NORM_ALIGN_SHARED", os.path.join(ROOT, "..", "shared", "data"))
    path = os.path.join(shared, "parallel", rel)
    with open(path, encoding="utf-8") as f:
        return [_TOKEN.findall(line.lower()) for _, line in zip(range(n), f)]


def passes(aligner, pairs, batch_size: int = 32) -> list[tuple[dict, np.ndarray]]:
    """Per pair: {layer: word scores (T, S + 1), NULL last} of METHOD at every layer, and the label log-probs."""
    spec = aligner.spec([METHOD], list(range(aligner.n_layers)), ["awi"])
    items = [(f"pair {k + 1}", s, t) for k, (s, t) in enumerate(pairs)]
    out = []
    for _, se, te, sc in aligner.score_items(items, spec, batch_size, logprobs=True):
        ws = aligner.word_scores(se, te, sc, spec, null=True)
        out.append(({Setting.parse(n).layer: w for n, w in ws.items()}, sc[LOGPROBS]))
    return out


def run_set(
    name: str,
    limit: int,
    seed: int = 1,
    cache: str | None = None,
    models_dir: str = os.path.join(ROOT, "data", "models"),
    protocol: str = "x20",
    suffix: str = "",
) -> dict:
    """Every measurement of one gold set; ``cache``: a pickle of the models' passes (made when missing, made again
    when it holds other models' passes)."""
    import pickle

    from fairseq_plugins.hub import NormAligner

    fwd_name, rev_name, label, third = SETS[name]
    ts = testsets.load(name)
    pairs = [(list(s), list(t)) for s, t in zip(ts.src, ts.tgt)]
    gold = ts.gold
    if limit:
        pairs, gold = pairs[:limit], gold.select(list(range(limit)))
    fwd_name, rev_name = fwd_name + suffix, rev_name + suffix
    fwd = NormAligner.from_checkpoint(os.path.join(models_dir, fwd_name))
    rev = NormAligner.from_checkpoint(os.path.join(models_dir, rev_name))
    identity = {k: v for k, v in fwd.identity().items() if k != "path"}
    models = [identity.get("sha256"), rev.identity().get("sha256")]
    halves = list(fold_indices(len(pairs), "odd"))  # (odd lines, even lines), 0-based indices
    path = f"{cache}.{name}.{limit}.pkl" if cache else None
    got = None
    if path and os.path.exists(path):
        with open(path, "rb") as f:
            got = pickle.load(f)
        if len(got) != 4 or got[3] != models:  # another pair of models' passes (or a file from before the check)
            print(f"{path}: the passes of other models; scoring again", file=sys.stderr)
            got = None
    if got is None:
        got = (*_score(fwd, rev, pairs, halves, third, seed), models)
        if path:
            with open(path, "wb") as f:
                pickle.dump(got, f)
    sets, runs, dropped, _ = got
    out = _evaluate(name, ts, gold, fwd.n_layers, identity, halves, sets, runs, dropped, FITS[protocol])
    out["models"] = [os.path.relpath(os.path.join(models_dir, m), ROOT) for m in (fwd_name, rev_name)]
    out["protocol"] = protocol
    return out


def _score(fwd, rev, pairs, halves, third: str, seed: int) -> tuple[list, list, dict]:
    """The noisy sets of each half and both models' passes over every pair of them."""
    other = third_language(third, 2000)
    # sets[h][kind] = list of (pair index, noisy pair); "clean" = the pairs themselves
    sets: list[dict] = []
    dropped: dict[str, int] = {}
    for h, idx in enumerate(halves):
        base = [pairs[k] for k in idx]
        d = {"clean": list(zip(idx, base))}
        for kind in noise.KINDS:
            noisy = noise.make(base, kind, seed + h, third_language=other)
            kept = [(k, p) for k, p, q in zip(idx, noisy, base) if p != q]
            dropped[kind] = dropped.get(kind, 0) + len(base) - len(kept)
            d[kind] = kept
        sets.append(d)
    # both models over every pair of every set
    runs: list[dict] = []
    for d in sets:
        r = {}
        for kind, items in d.items():
            ps = [p for _, p in items]
            r[kind] = (passes(fwd, ps), passes(rev, [(t, s) for s, t in ps]))
        runs.append(r)
    return sets, runs, dropped


def _evaluate(name, ts, gold, n_layers: int, identity, halves, sets, runs, dropped, fits=(0, 1)) -> dict:
    results: dict = {"set": name, "label": SETS[name][2], "signature": ts.signature(), "sentences": len(gold)}
    features: list[dict] = [{}, {}]  # per half: kind -> (variant -> (n, k) features)
    layers = []
    for h in fits:  # a half not fitted on (halves: the never-seen) is only measured
        fit_idx = halves[h]
        clean_f = runs[h]["clean"][0]
        gfit = gold.select(fit_idx)
        layer = min(range(n_layers), key=lambda la: _aer(gfit, clean_f, la))
        layers.append(layer)
        gc = [gold_cells(gold, k, *clean_f[i][0][layer][:, :-1].shape) for i, k in enumerate(fit_idx)]
        for both, names in ((True, BOTH_FEATURES), (False, FORWARD_FEATURES)):
            pos = _scored(sets, runs, h, "clean", both, layer)
            neg = [p for kind in noise.KINDS for p in _scored(sets, runs, h, kind, both, layer)]
            # exactly as align-calibrate fits it (on every kind); the leave-one-kind-out fits reuse its cells
            cal = fit_calibration([p.matrices for p in pos], gc, neg, identity, {}, {}, pos, names)
            for target_h in (h, 1 - h):
                for kind in runs[target_h]:
                    rows = sentence_rows(cal, _scored(sets, runs, target_h, kind, both, layer), names)
                    features[h].setdefault(target_h, {}).setdefault(kind, [None, None])[0 if both else 1] = rows
    results["layers"] = layers
    results["dropped_equal"] = dropped
    results["auc"] = leave_one_kind_out(features, list(noise.KINDS), fits)
    results["distributions"] = distributions(features, list(noise.KINDS), fits)
    return results


def _aer(gold, clean_f: list, layer: int) -> float:
    """AER of the argmax links of METHOD at ``layer`` (forward model) against ``gold``."""
    links = [[(int(np.argmax(m[layer][i, :-1])), i) for i in range(m[layer].shape[0])] for m, _ in clean_f]
    return score_corpus(gold, Alignments.from_lists(links)).aer


def _scored(sets: list, runs: list, h: int, kind: str, both: bool, layer: int) -> list[ScoredPair]:
    """Half ``h``'s pairs of ``kind`` as align-calibrate scores them, at ``layer`` (with the reverse model's
    matrices when ``both``)."""
    rf, rr = runs[h][kind]
    out = []
    for (_, (src, tgt)), (mf, lf), (mr, lr) in zip(sets[h][kind], rf, rr):
        m = (mf[layer][:, :-1], mf[layer][:, -1])
        out.append(ScoredPair(m + (mr[layer][:, :-1], mr[layer][:, -1]) if both else m, src, tgt, lf, lr))
    return out


BALANCE = {"on": True}
"""Whether the fits balance the classes per length bin, as align-calibrate does (``--plain-weights`` turns it off)."""


ROWS = (BOTH_FEATURES, FORWARD_FEATURES)
"""The features of the rows computed per pair: with the reverse model (variant 0), without it (1)."""
DEFAULT = "per-kind"
"""align-calibrate's default sentence model (``--sentence-model``)."""
SCORES = {
    "score": (0, DEFAULT),
    "score_fwd": (1, DEFAULT),
    "score_compact": (0, "compact"),
    "score_full": (0, "full"),
}
"""Column -> (rows variant, the sentence model of :data:`SENTENCE_MODELS`): align-calibrate's default with and
without the reverse model, and its --sentence-model compact (the default before) and full."""


class _Fitted:
    """A sentence model fitted on some columns of the rows, predicting from whole rows."""

    def __init__(self, model, cols: list[int]) -> None:
        self.model, self.cols = model, cols

    def predict(self, rows: np.ndarray) -> np.ndarray:
        return self.model.predict(rows[:, self.cols])


def _fit(own: dict, kinds: list[str], v: int, name: str) -> _Fitted:
    """Sentence model ``name`` from rows of variant ``v`` (:data:`ROWS`): ``own``'s clean pairs against its noise
    of ``kinds``, as align-calibrate fits it (per kind for a per-kind model; the classes weighing the same in every
    length bin unless --plain-weights)."""
    model, order = SENTENCE_MODELS[name], ROWS[v]
    names = model.features(v == 0)
    cols = [order.index(n) for n in names]
    i, j = order.index("log_src_words"), order.index("log_tgt_words")

    def shorter(x: np.ndarray) -> np.ndarray:  # the shorter side's words, back from the log-length features
        return np.rint(np.exp(np.minimum(x[:, i], x[:, j]))).astype(np.int64)

    pos, negs = own["clean"][v], {k: own[k][v] for k in kinds if len(own[k][v])}
    if model.per_kind:
        lengths = (shorter(pos), {k: shorter(x) for k, x in negs.items()}) if BALANCE["on"] else None
        return _Fitted(fit_per_kind(pos[:, cols], {k: x[:, cols] for k, x in negs.items()}, names, lengths=lengths),
                       cols)  # fmt: skip
    neg = np.vstack(list(negs.values()))
    lengths2 = (shorter(pos), shorter(neg)) if BALANCE["on"] else None
    return _Fitted(fit_sentence_model(pos[:, cols], neg[:, cols], names, lengths=lengths2), cols)


def leave_one_kind_out(features: list[dict], kinds: list[str], fits=(0, 1)) -> dict:
    """{kind: {score: ROC-AUC}}: each score fitted on one half without the kind, measured on the other half (each
    half of ``fits`` fitted on, their measurements pooled)."""
    out: dict = {}
    i_dcce, i_len = BOTH_FEATURES.index("dcce"), BOTH_FEATURES.index("abs_log_length_ratio")
    for kind in kinds:
        keys = (*SCORES, "score_family", "score_all", "dcce", "length")
        parts: dict[str, tuple[list, list]] = {s: ([], []) for s in keys}
        twins = set(noise.FAMILIES[noise.family(kind)]) if kind in noise.KINDS else {kind}
        for h in fits:
            own, held = features[h][h], features[h][1 - h]
            if not len(held[kind][0]):
                continue
            for key, (v, name) in SCORES.items():
                model = _fit(own, [k for k in kinds if k != kind], v, name)
                parts[key][0].extend(model.predict(held["clean"][v]))
                parts[key][1].extend(model.predict(held[kind][v]))
            # leave-one-family-out: none of the kinds made the way this one is (noise.FAMILIES) in fitting
            model = _fit(own, [k for k in kinds if k not in twins], 0, DEFAULT)
            parts["score_family"][0].extend(model.predict(held["clean"][0]))
            parts["score_family"][1].extend(model.predict(held[kind][0]))
            model = _fit(own, kinds, 0, DEFAULT)
            parts["score_all"][0].extend(model.predict(held["clean"][0]))
            parts["score_all"][1].extend(model.predict(held[kind][0]))
            parts["dcce"][0].extend(-held["clean"][0][:, i_dcce])
            parts["dcce"][1].extend(-held[kind][0][:, i_dcce])
            parts["length"][0].extend(-held["clean"][0][:, i_len])
            parts["length"][1].extend(-held[kind][0][:, i_len])
        out[kind] = {k: roc_auc(*v) for k, v in parts.items() if v[0] and v[1]}
    return out


def distributions(features: list[dict], kinds: list[str], fits=(0, 1)) -> dict:
    """{kind: held-out scores} of the default score fitted on every kind (for the plot), the halves of ``fits``
    pooled."""
    out: dict = {}
    for h in fits:
        own, held = features[h][h], features[h][1 - h]
        model = _fit(own, kinds, 0, DEFAULT)
        for kind in ["clean"] + kinds:
            if len(held[kind][0]):
                out.setdefault(kind, []).extend(round(float(x), 4) for x in model.predict(held[kind][0]))
    return out


COLUMNS = (
    ("score", "score (both models)"),
    ("score_family", "score, its family left out too"),
    ("score_fwd", "score (forward model only)"),
    ("score_compact", "one regression, 5 features (`--sentence-model compact`)"),
    ("score_full", "one regression, every feature (`full`)"),
    ("dcce", "DCCE alone"),
    ("length", "length ratio"),
    ("score_all", "score, kind seen in fitting"),
)


def markdown(results: list[dict], meta: dict) -> str:
    lines = [
        "# Sentence scores against the noise real corpora carry (leave-one-kind-out)",
        "",
        "ROC-AUC of telling a held-out gold pair from a noisy copy of a held-out gold pair, per kind of noise "
        "(`align.confidence.noise`: Khayrallah & Koehn 2018's taxonomy, then Bicleaner's synthetic negatives). "
        "The score is fitted on one half of the gold set (odd or even sentences: clean pairs against noisy copies "
        "of **every kind but the one measured**) and measured on the other half (which halves: the protocol below). "
        "`score (both models)`: `align-calibrate --reverse-model`'s sentence score (`--sentence-model per-kind`, "
        "the default: one detector per kind of noise over DCCE, each model's cross-entropy, length ratio, coverage, "
        "links per word of each side and each model's end-of-sentence cross-entropy, the lowest log-odds scaled to "
        "a probability); `--sentence-model compact`: one regression over DCCE, length ratio, coverage and the end "
        "cross-entropies (the default before); `full`: one regression over all 23 features; `forward model only`: "
        "without `--reverse-model`; `DCCE alone`: dual conditional cross-entropy (Junczys-Dowmunt 2018), lower "
        "is better; `length ratio`: `-|log(T/S)|`; the last column fits on every kind, the one measured "
        "included (what leave-one-kind-out gives up). `its family left out too`: the default score fitted without "
        "any kind made the way the measured one is (leave-one-family-out, `align.confidence.noise.FAMILIES`: "
        + "; ".join(f"{f}: {', '.join(ks)}" for f, ks in noise.FAMILIES.items())
        + "), what it finds of noise unlike any it was shown. A noisy copy equal to its pair is left out (`equal`).",
        "",
        f"**Protocol of the models** (`{meta.get('protocol', 'x20')}`): {PROTOCOL_TEXT[meta.get('protocol', 'x20')]}."
        + (
            " The figures on pairs the models never saw come with the models of the test-halves protocol "
            "(issue 46: `--protocol halves`)."
            if meta.get("protocol", "x20") == "x20"
            else ""
        ),
        "",
        f"`{meta['command']}` ({meta['seconds']} s"
        + (
            "; the models' passes read from the cache, made by the same command without it in about 6 minutes "
            "of 2 shared cores"
            if "--cache" in meta["command"]
            else ""
        )
        + ").",  # fmt: skip
        "",
    ]
    from align.confidence.noise import KINDS

    for r in results:
        lines += [
            f"## {r['label']} ({r['sentences']} sentences, "
            + " and ".join(f"`{m}`" for m in r.get("models", [f"data/models/{x}" for x in SETS[r["set"]][:2]]))
            + f", {r['signature']}, `{METHOD}` layer {r['layers']})",
            "",
            "| kind | from | equal | " + " | ".join(c for _, c in COLUMNS) + " |",
            "|---|---|---:|" + "---:|" * len(COLUMNS),
        ]
        for kind, a in r["auc"].items():
            src = "K&K 2018" if KINDS[kind].source.startswith("Khayrallah") else "Bicleaner"
            cells = " | ".join(_cell(a.get(k), k) for k, _ in COLUMNS)
            lines.append(f"| {kind} | {src} | {r['dropped_equal'].get(kind, 0)} | {cells} |")
        mean = {k: float(np.mean([a[k] for a in r["auc"].values()])) for k, _ in COLUMNS}
        worst = {k: float(np.min([a[k] for a in r["auc"].values()])) for k, _ in COLUMNS}
        lines.append("| **mean** | | | " + " | ".join(f"**{mean[k]:.3f}**" for k, _ in COLUMNS) + " |")
        lines.append("| **worst** | | | " + " | ".join(f"**{worst[k]:.3f}**" for k, _ in COLUMNS) + " |")
        lines.append("")
    lines += [f"![distributions]({meta.get('plot', 'sentence_scores.png')})", ""]
    return "\n".join(lines)


def _cell(v, key: str) -> str:
    if v is None:
        return "-"
    return f"**{v:.3f}**" if key == "score" and v >= 0.95 else f"{v:.3f}"


def plot(results: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 1, figsize=(10, 3.4 * len(results)), squeeze=False)
    for ax, r in zip(axes[:, 0], results):
        names = list(r["distributions"])
        ax.boxplot([r["distributions"][n] for n in names], whis=(5, 95), showfliers=False)
        ax.set_xticks(range(1, len(names) + 1), names, rotation=35, ha="right", fontsize=8)
        ax.set(title=f"{r['label']}: sentence score of held-out pairs (fitted on every kind)", ylabel="score")
        ax.set_ylim(-0.02, 1.02)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="hansards,rwth")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--cache", help="keep the models' passes in CACHE.SET.LIMIT.pkl and reuse them")
    ap.add_argument("--out", help="PREFIX of the .json/.md/.png (default benchmarks/results/sentence_scores[_halves])")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "data", "models"), help="where the four models are")
    ap.add_argument("--model-suffix", default="", help="the models' folder names end with it (e.g. _half: enfr_half)")
    add_protocol_argument(
        ap,
        "x20: fit and measure on each half, pooled; halves: fit on the odd-numbered (seen once), "
        "measure on the even-numbered (never seen).",
    )
    ap.add_argument(
        "--plain-weights",
        action="store_true",
        help="fit the sentence models with the classes balanced overall only (as 0.2 did: not per length bin)",
    )
    args = ap.parse_args(argv)
    BALANCE["on"] = not args.plain_weights
    unknown = [s for s in args.sets.split(",") if s not in SETS]
    if unknown:
        ap.error(f"--sets: unknown {', '.join(unknown)}; valid: {', '.join(SETS)}")
    models = [os.path.join(args.models_dir, m + args.model_suffix) for s in args.sets.split(",") for m in SETS[s][:2]]
    try:  # "pairs the models never saw" only of models that never saw them; every model of the run alike
        args.protocol = protocol_of(models, args.protocol)
    except ProtocolError as e:
        raise SystemExit(str(e)) from None
    name = "sentence_scores" + ("_halves" if args.protocol == "halves" else "")  # the x20 figures stay as they are
    args.out = args.out or os.path.join(ROOT, "benchmarks", "results", name)
    t0 = time.time()
    results = [run_set(s, args.limit, cache=args.cache, models_dir=args.models_dir, protocol=args.protocol,
                       suffix=args.model_suffix) for s in args.sets.split(",")]  # fmt: skip
    meta = {"command": "python benchmarks/sentence_scores.py " + shlex.join(argv or sys.argv[1:]),
            "seconds": round(time.time() - t0), "protocol": args.protocol}  # fmt: skip
    write_text_atomic(args.out + ".json", json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    meta["plot"] = os.path.basename(args.out) + ".png"  # beside the .md
    write_text_atomic(args.out + ".md", markdown(results, meta) + "\n")
    plot(results, args.out + ".png")
    for r in results:
        print(r["label"], "layers", r["layers"])
        print(
            f"{'kind':22s} "
            + " ".join(f"{k:>9s}" for k in ("score", "score_family", "score_fwd", "score_all", "dcce", "length"))
        )
        for kind, a in r["auc"].items():
            print(
                f"{kind:22s} "
                + " ".join(
                    f"{a.get(k, math.nan):9.3f}"
                    for k in ("score", "score_family", "score_fwd", "score_all", "dcce", "length")
                )
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
