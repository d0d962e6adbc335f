"""Both directions combined, with every choice made on held-out sentences: one direction against both,
hard (atools heuristics) against soft (score matrices combined, then decoded), beside eflomal trained on the
same text and beside published figures. Writes ``OUT/NAME.{md,json}``.

Protocol (as the RWTH experiment's headline): the gold sentences are split in two interleaved halves
(sentence i in half i % 2); every choice (method, layer of each direction, shift, combination, decoder,
threshold) is made by AER on one half and scored on the other, both ways round, and the two scored halves
pooled: every sentence's links come from settings chosen without it. Families of candidates:

- ``forward`` / ``reverse``: one model, each (method, layer, shift), argmax links (the reverse model's
  turned round to source-first); ``forward-decoders``: the forward model alone with the soft family's
  decoders too (its row shares thresholded over the grid, intersect, itermax): one direction at its best;
- ``hard``: the two directions' argmax links of the same shift (any method and layer of each) under each
  atools heuristic of :mod:`align.links.symmetrize`;
- ``soft``: the same pairs of score matrices combined per cell (:mod:`align.links.combine`: hmean, gmean,
  mean of row shares) and decoded (threshold over a grid, intersect, itermax, argmax); ``soft-same``: only
  pairs of the same setting in both directions, what ``align-extract --reverse-model --combine`` writes;
- ``blend``: the same blend in both directions (:mod:`align.links.blend`: the mean of two settings' row
  shares; by default every AWI setting with every AWO setting, ``--blends``), combined and decoded as ``soft``:
  what ``align-extract --reverse-model --blend B --combine C`` writes as ``B.C.align``;
- ``both``: hard and soft together; ``any``: every family above (one direction may win);
- ``calibrated``: a bidirectional link-probability model (:mod:`align.confidence.calibration`) fitted on the other
  half's gold links for each setting, cells with p >= a cutoff (setting and cutoff chosen on that half);
  ``calibrated-forward``: the same with the forward model's scores alone. Both learn from gold links (25 and
  13 weights, on half the sentences): a supervised step the other families do not take.

Bootstrap 95% intervals over sentences, and paired bootstrap tests (same sentences, same resamples) of the
pooled held-out AER against eflomal's forward, reverse, intersect and grow-diag-final-and
(``benchmarks/eflomal_baseline.py`` writes their links) and against the published Mgiza output where
``../shared/data/system_outputs`` has it. The 8-bit score files' cost: the soft search re-run on matrices
quantized as ``align.io.softscores`` stores them (the hard families keep the float matrices' argmax links).

Usage:
  python benchmarks/bidirectional.py -t rwth --forward data/models/deen --reverse data/models/ende --name bidirectional_rwth
  python benchmarks/bidirectional.py -t hansards --forward data/models/enfr --reverse data/models/fren \\
      --name bidirectional_hansards
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.gold import testsets  # noqa: E402
from align.gold.protocol import ProtocolError, add_protocol_argument, describe_halves, protocol_of, read_training_text  # noqa: E402
from align.gold.testsets import shared_data_dir  # noqa: E402
from align.io.atomic import write_text_atomic  # noqa: E402
from align.io.formats import read_alignments  # noqa: E402
from align.io.softscores import quantize_scores  # noqa: E402
from align.links.combine import COMBINERS, combine_scores  # noqa: E402
from align.links.decode import decode_argmax, decode_intersect, decode_itermax, row_shares  # noqa: E402
from align.links.symmetrize import SYMMETRIZERS  # noqa: E402
from align.spec.setting import Blend, Setting, base_name, is_blend  # noqa: E402
from eval.experiment import folds_of, held_out_choice, load_gold, subset  # noqa: E402
from eval.metrics import SentenceCounts, bootstrap_ci, count_matches, paired_bootstrap, score_counts  # noqa: E402

THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
"""The soft threshold decoder's grid: the choice among them is made on held-out sentences, like every other."""
FAMILIES = (
    "forward",
    "forward-decoders",
    "reverse",
    "hard",
    "soft",
    "soft-same",
    "both",
    "blend",
    "any",
    "calibrated-forward",
    "calibrated",
)

# Quoted, not recomputed: figures printed by others on the same gold sets (sources named per row).
PUBLISHED = {
    "rwth": [
        ("Mgiza (GIZA++), grow-diagonal-final", 20.6, "lilt/alignment-scripts@4da9bbf:README.md, 'Results'"),
        ("fast_align, grow-diagonal", 27.0, "lilt/alignment-scripts@4da9bbf:README.md, 'Results'"),
        ("Cross-Align (Lai et al. 2022), released output", 13.6, "lisasiyu/Cross-Align@017ba1e:README.md"),
        (
            "Mask-Align (Chen et al. 2021), the README's example test output on De-En",
            14.4,
            "THUNLP-MT/Mask-Align@a04aba5:README.md, 'Test'",
        ),
        (
            "Kobayashi et al. 2020, norm AWI, best layer (own Europarl model)",
            25.0,
            "the authors' notebook: 24.98 (attention 29.77)",
        ),
    ],
    "hansards": [
        ("Mgiza (GIZA++), grow-diagonal", 5.9, "lilt/alignment-scripts@4da9bbf:README.md, 'Results'"),
        ("fast_align, grow-diagonal", 10.5, "lilt/alignment-scripts@4da9bbf:README.md, 'Results'"),
        ("awesome-align, mBERT fine-tuned", 4.1, "neulab/awesome-align@5f150d4:README.md, 'Model performance'"),
        ("Cross-Align (Lai et al. 2022), released output", 3.4, "lisasiyu/Cross-Align@017ba1e:README.md"),
        ("eflomal (its README, large training text)", 8.1, "robertostling/eflomal:README.md"),
    ],
}
# Published system outputs on the same sentences, for paired tests (file under system_outputs, source first).
OUTPUTS = {
    "rwth": [("Mgiza grow-diagonal-final", "mgiza/test.deen.grow-diagonal-final.talp")],
    "hansards": [("Mgiza grow-diagonal", "mgiza/test.enfr.grow-diagonal.talp")],
}
EFLOMAL = {"rwth": "eflomal_deen_x{}", "hansards": "eflomal_enfr_x{}"}
"""eflomal's links (benchmarks/eflomal_baseline.py), the test sentences repeated as often as the protocol's models saw
them: 20 for x20; once for halves (eflomal must see a sentence to align it: lilt's protocol for both halves)."""
PROTOCOL_TEXT = {
    "x20": "the models saw every gold pair twenty times in training (never its links; as their model_config.json's "
    "training_text records, or assumed where it records nothing, as for the models shipped up to 0.2.0)",
    "halves": "the models saw the odd-numbered gold pairs once in training and the even-numbered never "
    "(make_models.sh NAME_half; never any link): figures given per half",
}
HALF_NAMES = ("seen once (odd-numbered)", "never seen (even-numbered)")
"""Fold k of :func:`eval.experiment.folds_of` (0-based lines k, k + 2, ...): fold 0 holds the 1st, 3rd, ... sentences."""
EFLOMAL_SYSTEMS = ("forward", "reverse", "intersect", "grow-diag-final-and")


def load_model(path: str, vocab: str | None, langs: tuple[str, str]):
    """A fairseq model folder or checkpoint (``vocab``: its training folder, with spm.model and the ``langs``'
    dictionaries in it or in its bin/ as data/scripts/make_models.sh leaves them)."""
    from fairseq_plugins.checkpoint import CheckpointError, training_vocab
    from fairseq_plugins.hub import NormAligner

    if vocab:
        try:
            files = training_vocab(vocab, ("spm.model", *(f"dict.{lang}.txt" for lang in langs)))
        except CheckpointError as e:
            raise SystemExit(str(e)) from None
        data_dir = os.path.dirname(files[f"dict.{langs[0]}.txt"])
        return NormAligner.from_checkpoint(path, data_dir=data_dir, spm_model=files["spm.model"])
    return NormAligner.from_checkpoint(path)


def word_matrices(
    aligner, pairs: list, methods: list[str], shifts: list[str], blends: list[str] = ()
) -> dict[str, list[np.ndarray]]:
    """Every setting's (and blend's) word-score matrices of every pair: ``{dump name: [(T, S) per sentence]}``
    (the pair as given: a reverse model gets the pairs turned round and gives (S, T)), each with one more column,
    last: the NULL mass (the word's score on the source's EOS) that the calibrated family reads."""
    spec = aligner.spec(methods, None, shifts, blends=blends)
    items = [(f"sentence {k + 1}", s, t) for k, (s, t) in enumerate(pairs)]
    out: dict[str, list[np.ndarray]] = {}
    for _, se, te, sc in aligner.score_items(items, spec, 32):
        for name, m in aligner.word_scores(se, te, sc, spec, null=True).items():
            out.setdefault(name, []).append(np.asarray(m, dtype=np.float64))  # last column: the NULL mass
    return out


class Counter:
    """Per-sentence AER counts of links given as boolean (T, S) masks, against the gold's sure and possible."""

    def __init__(self, gold, shapes: list[tuple[int, int]]) -> None:
        self.sure, self.poss = [], []
        for k, (t, s) in enumerate(shapes):
            sm, pm = np.zeros((t, s), dtype=bool), np.zeros((t, s), dtype=bool)
            for a, b in gold.links(k, "sure"):
                if a < s and b < t:
                    sm[b, a] = True
            for a, b in gold.links(k, "all"):
                if a < s and b < t:
                    pm[b, a] = True
            self.sure.append(sm)
            self.poss.append(pm)
        # links of the gold outside the shapes (never, for untruncated text) still count as sure links missed
        self.n_sure = np.array([len(gold.links(k, "sure")) for k in range(len(shapes))], dtype=np.int32)

    def counts(self, masks: list[np.ndarray]) -> SentenceCounts:
        hyp = np.array([m.sum() for m in masks], dtype=np.int32)
        hs = np.array([(m & s).sum() for m, s in zip(masks, self.sure)], dtype=np.int32)
        hp = np.array([(m & p).sum() for m, p in zip(masks, self.poss)], dtype=np.int32)
        return SentenceCounts(hyp, self.n_sure, hs, hp)


def mask_of(links, shape: tuple[int, int]) -> np.ndarray:
    m = np.zeros(shape, dtype=bool)
    for s, t in links:
        m[t, s] = True
    return m


def candidates(fwd: dict, rev: dict, counter: Counter, shapes: list, quantize: bool = False) -> dict:
    """``{family: {candidate name: SentenceCounts}}`` of every candidate (see the module docstring)."""
    q = (lambda m: quantize_scores(m).astype(np.float64)) if quantize else (lambda m: m)
    fwd = {n: [m[:, :-1] for m in ms] for n, ms in fwd.items()}  # the NULL column is the calibrated family's
    rev = {n: [m[:, :-1] for m in ms] for n, ms in rev.items()}
    fam: dict[str, dict[str, SentenceCounts]] = {f: {} for f in ("forward", "reverse", "hard", "soft")}
    fl = {n: [decode_argmax(m) for m in ms] for n, ms in fwd.items()}
    rl = {n: [sorted((t, s) for s, t in decode_argmax(m)) for m in ms] for n, ms in rev.items()}
    fam["forward-decoders"] = {}
    for n in fwd:
        fam["forward"][f"fwd:{n}"] = counter.counts([mask_of(x, sh) for x, sh in zip(fl[n], shapes)])
        # one direction with the soft family's decoders: its row shares thresholded, intersect, itermax
        shares = [row_shares(np.maximum(m, 0.0)) for m in fwd[n]]
        for t in THRESHOLDS:
            fam["forward-decoders"][f"fwd:{n}:threshold={t}"] = counter.counts([m >= t for m in shares])
        for d, fn in (("intersect", decode_intersect), ("itermax", decode_itermax)):
            masks = [mask_of(fn(m), sh) for m, sh in zip(shares, shapes)]
            fam["forward-decoders"][f"fwd:{n}:{d}"] = counter.counts(masks)
    for n in rev:
        fam["reverse"][f"rev:{n}"] = counter.counts([mask_of(x, sh) for x, sh in zip(rl[n], shapes)])
    for nf in fwd:
        for nr in rev:
            if Setting.parse(nr).shift != Setting.parse(nf).shift:
                continue  # the same shift in both directions; any method and layer of each
            pair = f"{base_name(nf)}+{base_name(nr)}"
            for h, fn in SYMMETRIZERS.items():
                masks = [mask_of(fn(a, b), sh) for a, b, sh in zip(fl[nf], rl[nr], shapes)]
                fam["hard"][f"{pair}:{h}"] = counter.counts(masks)
            fam["soft"].update(soft_counts(pair, fwd[nf], rev[nr], counter, shapes, q))
    return fam


def soft_counts(prefix: str, fwd: list, rev: list, counter: Counter, shapes: list, q=lambda m: m) -> dict:
    """``{PREFIX:COMBINER:DECODER: SentenceCounts}``: one pair of settings' forward (T, S) and reverse (S, T)
    matrices (``q`` applied to each) combined by every combiner and decoded by every soft decoder."""
    out: dict[str, SentenceCounts] = {}
    for c in COMBINERS:
        combined = [combine_scores(q(a), q(b), c) for a, b in zip(fwd, rev)]
        for t in THRESHOLDS:
            out[f"{prefix}:{c}:threshold={t}"] = counter.counts([m >= t for m in combined])
        for d, fn in (("intersect", decode_intersect), ("itermax", decode_itermax), ("argmax", decode_argmax)):
            out[f"{prefix}:{c}:{d}"] = counter.counts([mask_of(fn(m), sh) for m, sh in zip(combined, shapes)])
    return out


def calibrated(fwd: dict, rev: dict, gold, counter: Counter, n: int, both: bool = True) -> dict[str, Any]:
    """The ``calibrated`` family: per half, for each setting (the same method, layer and shift in both
    directions), a bidirectional cell model (:mod:`align.confidence.calibration`: both matrices' features and
    NULL mass) fitted on the other half's gold cells; the setting and probability cutoff with the lowest AER
    on that other half are then scored on this half. Returns the pooled counts and the choices. ``both=False``:
    the forward model's features alone (``calibrated-forward``, the one-direction counterpart)."""
    from align.confidence.calibration import CELL_FEATURES, REVERSE_FEATURES, cell_features, fit_logistic, pair_features
    from eval.experiment import subset

    folds = folds_of(n, 2)
    feats, cells = {}, []
    for k in range(n):
        t, s = fwd[next(iter(fwd))][k].shape[0], fwd[next(iter(fwd))][k].shape[1] - 1
        c = np.zeros((t, s))
        for a, b in gold.links(k, "all"):
            if a < s and b < t:
                c[b, a] = 1.0
        cells.append(c.ravel())
    for name in fwd:
        if not both:
            feats[name] = [cell_features(f[:, :-1], f[:, -1]) for f in fwd[name]]
        elif name in rev:
            feats[name] = [
                pair_features(f[:, :-1], f[:, -1], r[:, :-1], r[:, -1]) for f, r in zip(fwd[name], rev[name])
            ]
    names = CELL_FEATURES + REVERSE_FEATURES if both else CELL_FEATURES
    cuts = (0.3, 0.4, 0.5, 0.6)
    fields = {f: np.zeros(n, dtype=np.int32) for f in ("hyp", "sure", "hyp_sure", "hyp_possible")}
    choices = []
    for i, test in enumerate(folds):
        tune = [k for j, f in enumerate(folds) if j != i for k in f]
        best = None
        for name, x in feats.items():
            model = fit_logistic(
                np.vstack([x[k] for k in tune]),
                np.concatenate([cells[k] for k in tune]),
                names,
            )
            probs = [model.predict(xk).reshape(fwd[name][k].shape[0], -1) for k, xk in enumerate(x)]
            for cut in cuts:
                c = counter.counts([p >= cut for p in probs])
                aer = score_counts(subset(c, tune)).aer
                if best is None or aer < best[0]:
                    best = (aer, f"{name.removesuffix('.align')}:p>={cut}", c)
        assert best is not None
        choices.append(
            {"chosen": best[1], "tune_aer": 100 * best[0], "test_aer": 100 * score_counts(subset(best[2], test)).aer}
        )
        for f, arr in fields.items():
            arr[test] = getattr(best[2], f)[test]
    return {"folds": choices, "pooled": SentenceCounts(**fields), "candidates": len(feats) * len(cuts)}


def blend_candidates(fwd: dict, rev: dict, counter: Counter, shapes: list, quantize: bool = False) -> dict:
    """The ``blend`` family: the same blend (:mod:`align.links.blend`) in both directions, its two matrices
    combined and decoded as the soft family's are: ``{candidate name: SentenceCounts}``."""
    q = (lambda m: quantize_scores(m).astype(np.float64)) if quantize else (lambda m: m)
    out: dict[str, SentenceCounts] = {}
    for nb in fwd:  # drop NULL: the row shares of the rest are the blend itself
        f, r = [m[:, :-1] for m in fwd[nb]], [m[:, :-1] for m in rev[nb]]
        out.update(soft_counts(f"blend:{nb.removesuffix('.align')}", f, r, counter, shapes, q))
    return out


def auto_blends(names: list[str]) -> list[str]:
    """Every blend of one AWI and one AWO setting among the dump ``names`` (the two steps of a target word)."""
    settings = [Setting.parse(n) for n in names]
    awi = [s for s in settings if s.shift == "awi"]
    awo = [s for s in settings if s.shift == "awo"]
    return [Blend((a, b)).name for a in awi for b in awo]


def _same(name: str) -> bool:
    """A soft candidate that pairs a setting with the same setting of the reverse model."""
    a, _, b = name.partition(":")[0].partition("+")
    return a == b


def held_out(fam: dict, n: int, n_samples: int, cal: dict[str, dict] | None = None) -> dict[str, Any]:
    """Each family's cross-validated choice (two interleaved halves), pooled AER, bootstrap interval."""
    folds = folds_of(n, 2)
    pools = {
        "forward": fam["forward"],
        "forward-decoders": {**fam["forward"], **fam["forward-decoders"]},
        "reverse": fam["reverse"],
        "hard": fam["hard"],
        "soft": fam["soft"],
        "soft-same": {k: v for k, v in fam["soft"].items() if _same(k)},
        "both": {**fam["hard"], **fam["soft"]},
        "blend": fam.get("blend", {}),
        "any": {
            **fam["forward"],
            **fam["forward-decoders"],
            **fam["reverse"],
            **fam["hard"],
            **fam["soft"],
            **fam.get("blend", {}),
        },
    }
    out = {}
    for name, pool in pools.items():
        if not pool:
            continue  # no blends asked
        h = held_out_choice(pool, list(pool), folds)
        out[name] = summary(h, len(pool), n_samples)
    for name, c in (cal or {}).items():
        out[name] = summary(c, c["candidates"], n_samples)
    return out


def summary(h: dict, candidates: int, n_samples: int) -> dict[str, Any]:
    """A family's pooled held-out figures, each half's (``halves``: fold k scored with the setting chosen on the
    other), and its pooled counts under ``_pooled``, for the paired tests."""
    s = score_counts(h["pooled"])
    ci = bootstrap_ci(h["pooled"], n_samples)
    halves = []
    for fold in folds_of(len(h["pooled"]), 2):
        part = subset(h["pooled"], fold)
        hs = score_counts(part)
        halves.append({"sentences": len(fold), "aer": 100 * hs.aer, "precision": 100 * hs.precision,
                       "recall": 100 * hs.recall, "ci95_aer": [100 * x for x in bootstrap_ci(part, n_samples)["aer"]]})  # fmt: skip
    return {
        "aer": 100 * s.aer,
        "precision": 100 * s.precision,
        "recall": 100 * s.recall,
        "ci95_aer": [100 * x for x in ci["aer"]],
        "halves": halves,
        "folds": h["folds"],
        "candidates": candidates,
        "_pooled": h["pooled"],
    }


def paired_tests(res: dict, baselines: dict[str, SentenceCounts], n_samples: int) -> list[dict[str, Any]]:
    """Paired bootstrap tests of each family (pooled held-out) against each baseline on the same sentences: the
    whole set (``half`` None) and each half alone (``half`` 0: the odd-numbered sentences, 1: the even)."""
    tests = []
    for fam_name in (f for f in FAMILIES if f != "reverse" and f in res):  # the reverse model alone: no test
        ours = res[fam_name]["_pooled"]
        for b, bc in baselines.items():
            for half, idx in [(None, None)] + list(enumerate(folds_of(len(ours), 2))):
                o, c = (ours, bc) if idx is None else (subset(ours, idx), subset(bc, idx))
                t = paired_bootstrap(c, o, n_samples)
                tests.append({"ours": fam_name, "baseline": b, "half": half, "baseline_aer": 100 * score_counts(c).aer,
                              **t})  # fmt: skip
    return tests


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-t", "--test-set", default="rwth", choices=sorted(EFLOMAL))
    ap.add_argument("--testsets-dir")
    ap.add_argument("--forward", default="data/models/deen")
    ap.add_argument("--reverse", default="data/models/ende")
    ap.add_argument(
        "--forward-vocab", help="the forward checkpoint's training folder: spm.model, dict.*.txt (or in bin/)"
    )
    ap.add_argument(
        "--reverse-vocab", help="the reverse checkpoint's training folder: spm.model, dict.*.txt (or in bin/)"
    )
    ap.add_argument("--methods", default="attn,norm,alti,alti-rollout")
    ap.add_argument("--shifts", default="awo,awi")
    ap.add_argument(
        "--blends",
        default="auto",
        help="comma-separated blends for the blend family; auto: every AWI setting with every AWO setting; none",
    )
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--shared", help="the shared data folder (default $NORM_ALIGN_SHARED)")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    ap.add_argument("--name", help="default bidirectional_<test set>")
    add_protocol_argument(
        ap,
        "Names eflomal's run to test against, labels the report and its default name (halves: "
        "bidirectional_SET_halves).",
    )
    args = ap.parse_args(argv)
    args.shared = shared_data_dir(args.shared)
    t0 = time.time()
    try:  # the report's labels are the models' own record: "never seen" only of models that never saw them
        args.protocol = protocol_of([args.forward, args.reverse], args.protocol)
    except ProtocolError as e:
        raise SystemExit(str(e)) from None
    # the x20 tables stay what they are: a halves run is written beside them
    name = args.name or f"bidirectional_{args.test_set}" + ("_halves" if args.protocol == "halves" else "")
    pairs, gold = load_gold(args.test_set, args.limit, args.testsets_dir)
    n = len(pairs)
    methods, shifts = args.methods.split(","), args.shifts.split(",")
    langs = testsets.get(args.test_set).langs  # the forward model's (source, target)
    fwd_model = load_model(args.forward, args.forward_vocab, langs)
    rev_model = load_model(args.reverse, args.reverse_vocab, langs[::-1])
    singles = fwd_model.output_names(fwd_model.spec(methods, None, shifts))
    blends = auto_blends(singles) if args.blends == "auto" else [] if args.blends == "none" else args.blends.split(",")
    fwd = word_matrices(fwd_model, pairs, methods, shifts, blends)
    rev = word_matrices(rev_model, [(t, s) for s, t in pairs], methods, shifts, blends)
    fwd_b, rev_b = ({n: d.pop(n) for n in list(d) if is_blend(n)} for d in (fwd, rev))
    t_scores = time.time() - t0
    shapes = [(m.shape[0], m.shape[1] - 1) for m in next(iter(fwd.values()))]
    for nm, ms in rev.items():
        bad = [k for k, (m, sh) in enumerate(zip(ms, shapes)) if (m.shape[0], m.shape[1] - 1) != sh[::-1]]
        if bad:
            raise SystemExit(f"{args.reverse}: {nm}: sentence {bad[0] + 1} has other word counts than the forward's")
    counter = Counter(gold, shapes)
    fam = candidates(fwd, rev, counter, shapes)
    fam["blend"] = blend_candidates(fwd_b, rev_b, counter, shapes)
    cal = {"calibrated-forward": calibrated(fwd, rev, gold, counter, n, both=False),
           "calibrated": calibrated(fwd, rev, gold, counter, n)}  # fmt: skip
    res = held_out(fam, n, args.bootstrap, cal)
    # the 8-bit files' cost: the whole search again on quantized matrices (soft family only differs)
    fam8 = candidates(fwd, rev, counter, shapes, quantize=True)
    fam8["blend"] = blend_candidates(fwd_b, rev_b, counter, shapes, quantize=True)
    res8 = held_out({**fam, "soft": fam8["soft"], "blend": fam8["blend"]}, n, args.bootstrap)
    baselines: dict[str, SentenceCounts] = {}
    efl_run = EFLOMAL[args.test_set].format(1 if args.protocol == "halves" else 20)
    efl_dir = os.path.join(ROOT, "benchmarks", "results", efl_run)

    def first_n(links):  # with --limit, the baseline's links of the same first n sentences
        return links.select(list(range(n))) if args.limit and len(links) >= n else links

    for s in EFLOMAL_SYSTEMS:
        p = os.path.join(efl_dir, f"{s}.align")
        if os.path.exists(p):
            baselines[f"eflomal {s}"] = count_matches(gold, first_n(read_alignments(p, "pharaoh")))
    for label, rel in OUTPUTS[args.test_set]:
        p = os.path.join(args.shared, "system_outputs", rel)
        if os.path.exists(p):  # 0-based, source first
            baselines[label] = count_matches(gold, first_n(read_alignments(p, "pharaoh", 0)))
    tests = paired_tests(res, baselines, args.bootstrap)
    record = read_training_text(args.forward).get("test_halves")
    meta = {
        "protocol": args.protocol,
        "protocol_text": PROTOCOL_TEXT[args.protocol]
        + (f" (the models' record: {describe_halves(record)})" if record else ""),
        "eflomal": os.path.basename(efl_dir),
        "test_set": args.test_set,
        "sentences": n,
        "forward": args.forward,
        "reverse": args.reverse,
        "methods": methods,
        "shifts": shifts,
        "blends": blends,
        "blends_rule": args.blends if args.blends in ("auto", "none") else "list",
        "thresholds": list(THRESHOLDS),
        "seconds_scoring": round(t_scores, 1),
        "seconds": round(time.time() - t0, 1),
        "command": "python benchmarks/bidirectional.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    clean = {k: {kk: vv for kk, vv in v.items() if kk != "_pooled"} for k, v in res.items()}
    clean8 = {k: {kk: vv for kk, vv in v.items() if kk != "_pooled"} for k, v in res8.items()}
    report = {
        "meta": meta,
        "held_out": clean,
        "held_out_8bit": {k: clean8[k] for k in ("soft", "soft-same", "both", "blend", "any") if k in clean8},
        "tests": tests,
        "published": [{"system": s, "aer": a, "source": src} for s, a, src in PUBLISHED[args.test_set]],
    }
    os.makedirs(args.out, exist_ok=True)
    write_text_atomic(os.path.join(args.out, f"{name}.json"), json.dumps(report, indent=1))
    md = markdown(report)
    write_text_atomic(os.path.join(args.out, f"{name}.md"), md)
    print(md)
    return 0


def _p(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def markdown(r: dict) -> str:
    m = r["meta"]
    lines = [
        f"# Both directions combined: {m['test_set']} ({m['sentences']} sentences)",
        "",
        f"Forward `{m['forward']}`, reverse `{m['reverse']}`; methods {', '.join(m['methods'])}, shifts "
        f"{', '.join(m['shifts'])}, every layer of each direction"
        + (
            f"; {len(m['blends'])} blends"
            + (" (each AWI setting with each AWO setting)" if m.get("blends_rule") == "auto" else "")
            if m.get("blends")
            else ""
        )
        + ". Every choice made on one half of the sentences "
        "(sentence i in half i % 2) and scored on the other, both ways round, pooled. "
        f"Printed by `{m['command']}` in {m['seconds']} s ({m['seconds_scoring']} s scoring both models).",
        "",
    ]
    halves = m.get("protocol") == "halves"
    if m.get("protocol"):
        lines += [f"**Protocol `{m['protocol']}`**: {m['protocol_text']}; eflomal: `{m['eflomal']}`.", ""]
    if halves:  # sentence numbers 1-based here: the odd-numbered are 0-based half 0
        lines += [
            f"| family | {HALF_NAMES[0]}: AER (95% CI) | {HALF_NAMES[1]}: AER (95% CI) | both pooled | candidates "
            "| chosen on the even-numbered (for the odd) / on the odd-numbered (for the even) |",
            "|---|---|---|---|---|---|",
        ]
    else:
        lines += [
            "| family | held-out AER | 95% CI | P | R | candidates | chosen on odd half / on even half |",
            "|---|---|---|---|---|---|---|",
        ]
    for f in (f for f in FAMILIES if f in r["held_out"]):
        h = r["held_out"][f]
        chosen = " / ".join(f"`{x['chosen']}`" for x in h["folds"])
        if halves:
            a, b = (f"{x['aer']:.1f} ({x['ci95_aer'][0]:.1f}–{x['ci95_aer'][1]:.1f})" for x in h["halves"])
            lines.append(f"| {f} | {a} | {b} | {h['aer']:.1f} | {h['candidates']} | {chosen} |")
            continue
        lines.append(
            f"| {f} | {h['aer']:.1f} | {h['ci95_aer'][0]:.1f}–{h['ci95_aer'][1]:.1f} | {h['precision']:.1f} | "
            f"{h['recall']:.1f} | {h['candidates']} | {chosen} |"
        )
    lines += [
        "",
        "Soft combinations read from 8-bit score files (`.scores.jsonl`, each row scaled to its maximum): "
        + ", ".join(
            f"{f} {r['held_out_8bit'][f]['aer']:.1f} (float {r['held_out'][f]['aer']:.1f})" for f in r["held_out_8bit"]
        )
        + ".",
        "",
        "## Paired tests on the same sentences (ours: held-out pooled; Δ = ours − baseline, AER points)",
        "",
        "| ours | baseline | sentences | baseline AER | Δ | 95% CI of Δ | p (two-sided) | p (ours lower) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    where = {None: "all", 0: HALF_NAMES[0], 1: HALF_NAMES[1]}
    for t in r["tests"]:
        if t.get("half") is not None and not halves:
            continue  # x20: the whole set (the halves are in the JSON)
        ci = "—" if t["delta_ci"] is None else f"{100 * t['delta_ci'][0]:+.1f} to {100 * t['delta_ci'][1]:+.1f}"
        lines.append(
            f"| {t['ours']} | {t['baseline']} | {where[t.get('half')]} | {t['baseline_aer']:.1f} | "
            f"{100 * t['delta']:+.1f} | {ci} | {_p(t['p_value'])} | {_p(t['p_one_sided'])} |"
        )
    lines += [
        "",
        "## Published figures on this gold set (quoted, not recomputed)",
        "",
        "| system | AER | source |",
        "|---|---|---|",
    ]
    lines += [f"| {p['system']} | {p['aer']:.1f} | {p['source']} |" for p in r["published"]]
    lines += [
        "",
        "Chen et al. (EMNLP 2020, Shift-Att and Shift-AET) print their tables only in the paper; its abstract (arXiv "
        "2004.14837) says Shift-AET beats GIZA++ by 1.4-4.8 AER on De-En, En-Fr and Ro-En; their repository "
        "(sufe-nlp/transformer-alignment) has no table to quote, so no figure of theirs is given here.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
