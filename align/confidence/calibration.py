"""Link probabilities and a sentence alignment score from attribution scores (numpy only).

An attention weight, a norm or an ALTI+ share is not a probability: the same value means different
things for different methods, layers and models. A :class:`Calibration` maps what one setting
(model, method, layer, shift) gives a cell to P(the cell is a gold link), fitted on gold sentences:

- cell features (:data:`CELL_FEATURES`, from the word-level ``(tgt_len, src_len)`` score matrix and each
  target word's score on the special tokens (EOS), the "NULL" mass): the cell's share of its row and
  column, its ratio to the row and column maximum, whether it is the row's and the column's argmax,
  the shares relative to uniform (log), the sentence lengths (log) and the row's NULL share;
- a logistic regression over them (:class:`Logistic`, fitted by Newton's method with a small L2
  penalty). Why logistic regression and not isotonic regression: the features are many and the
  model must carry between sentences of different lengths; isotonic regression maps one score
  monotonically and would need one fit per length. A dozen weights store in a small JSON file, and the
  fitted probabilities are calibrated by construction where the features describe the cells (the
  score equations of logistic regression make the mean prediction equal the rate of gold links in
  every direction of the features).

The label is "the cell is a gold link, sure or possible" (the ``P`` set of Och & Ney 2003, what
precision counts).

A sentence score in ``[0, 1]`` says whether the pair is a translation at all: logistic regression (one per kind
of noise by default, :mod:`align.confidence.per_kind`; or one over every kind) over the pair's features
(:mod:`align.confidence.sentence`: what the forward model and, with a reverse model,
the reverse model say about the pair under forced decoding, the link probabilities' coverage and shape, the
lengths, the words copied), fitted on the gold pairs against noisy copies of them of every kind of
:data:`align.confidence.noise.KINDS`, the two classes weighing the same: P(the pair is a translation) where
half the pairs are translations and half are noise of those kinds (the per-kind model: its lowest detector's
log-odds scaled to that probability). Files of version 1 hold a sentence model
over the link probabilities alone (:data:`~align.confidence.sentence.LINK_FEATURES`) and read as they did.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..links.alignments import Alignments
from ..spec.signature import HOW_ASKED
from .length_weights import class_weights, pair_lengths
from .logistic import Logistic, fit_logistic
from .per_kind import PerKind, fit_per_kind
from .sentence import (
    LINK_FEATURES,
    PairEvidence,
    available_features,
    feature_vector,
    needs_of,
    sentence_choices,
)

CELL_FEATURES = (
    "row_share",
    "col_share",
    "row_ratio",
    "col_ratio",
    "row_argmax",
    "col_argmax",
    "both_argmax",
    "log_row_vs_uniform",
    "log_col_vs_uniform",
    "log_src_len",
    "log_tgt_len",
    "null_share",
)
"""What each cell is described by, in order (see :func:`cell_features`)."""

REVERSE_FEATURES = tuple(f"rev_{name}" for name in CELL_FEATURES)
"""The same features of the cell in the reverse model's matrix (a bidirectional calibration has both)."""

SENTENCE_FEATURES = LINK_FEATURES
"""The sentence features of version 1 files (the link probabilities only; see :func:`sentence_features`)."""

_Pairs = Sequence[tuple[list[str], list[str]]]

CORRUPTIONS: dict[str, Callable[[_Pairs, list[int]], list[tuple[list[str], list[str]]]]] = {
    # each takes the pairs and, for each, another pair's index (never its own when there are two or more)
    "shuffled": lambda pairs, other: [(s, pairs[other[i]][1]) for i, (s, _) in enumerate(pairs)],
    "truncated": lambda pairs, other: [(s, t[: max(1, len(t) // 2)]) for s, t in pairs],
    "appended": lambda pairs, other: [(s, t + pairs[other[i]][1]) for i, (s, t) in enumerate(pairs)],
}
"""How the negatives of the version-1 sentence model were made from gold pairs (see :func:`corrupt`; the noise kinds
of :mod:`align.confidence.noise` replaced them)."""

FORMAT = "norm-align/calibration"
"""The file's ``format`` field (its schema, bounds and versions: :mod:`align.confidence.schema`)."""
VERSION = 4
"""The file version this release writes (3: the sentence model may be :class:`~align.confidence.per_kind.PerKind`;
4: the setting records how the model read the pairs, ``lowercase`` and ``languages``)
(:data:`align.confidence.schema.VERSIONS`: those it reads)."""
FOLDS = ("all", "odd", "even")
"""Which gold sentences a calibration is fitted on (see :func:`fold_indices`)."""
MIN_LINKS = 50
"""Fewest gold links (and as many non-links) a cell model is fitted on."""
MIN_SENTENCES = 10
"""Fewest gold sentences a calibration is fitted on (each gives one positive and three negatives)."""

_EPS = 1e-12


class CalibrationError(ValueError):
    """A calibration file that is malformed, or used with another model or setting than it was fitted on."""


def cell_features(scores: np.ndarray, null: np.ndarray | None = None) -> np.ndarray:
    """(T, S) word scores and (T,) NULL mass -> (T * S, len(CELL_FEATURES)) features, cells row-major.

    Negative scores count as 0. A row or column of zeros has shares and ratios 0 and no argmax.
    """
    m = np.maximum(np.asarray(scores, dtype=np.float64), 0.0)
    t, s = m.shape
    if t == 0 or s == 0:
        return np.zeros((0, len(CELL_FEATURES)))
    row_sum, col_sum = m.sum(1, keepdims=True), m.sum(0, keepdims=True)
    row_max, col_max = m.max(1, keepdims=True), m.max(0, keepdims=True)
    rs, cs = m / (row_sum + _EPS), m / (col_sum + _EPS)
    ra = ((m == row_max) & (row_max > 0)).astype(np.float64)
    ca = ((m == col_max) & (col_max > 0)).astype(np.float64)
    nul = np.zeros((t, 1)) if null is None else np.maximum(np.asarray(null, dtype=np.float64), 0.0).reshape(t, 1)
    cols = [
        rs,
        cs,
        m / (row_max + _EPS),
        m / (col_max + _EPS),
        ra,
        ca,
        ra * ca,
        np.log(rs * s + 1e-4),
        np.log(cs * t + 1e-4),
        np.full_like(m, math.log(s)),
        np.full_like(m, math.log(t)),
        np.broadcast_to(nul / (row_sum + nul + _EPS), m.shape),
    ]
    return np.stack([c.ravel() for c in cols], axis=1)


def pair_features(
    scores: np.ndarray, null: np.ndarray | None, reverse: np.ndarray, reverse_null: np.ndarray | None
) -> np.ndarray:
    """Forward (T, S) and reverse (S, T) scores (each with its NULL mass) -> (T * S, 2 * len(CELL_FEATURES)):
    each cell's forward features, then the same cell's features in the reverse model's matrix."""
    t, s = np.shape(scores)
    if np.shape(reverse) != (s, t):
        raise CalibrationError(
            f"reverse scores of shape {np.shape(reverse)}; expected {(s, t)}, the forward "
            f"(tgt, src) = {(t, s)} transposed (the same words, the other way round)"
        )
    rev = cell_features(reverse, reverse_null).reshape(s, t, -1).transpose(1, 0, 2).reshape(t * s, -1)
    return np.concatenate([cell_features(scores, null), rev], axis=1)


def sentence_features(probs: np.ndarray) -> np.ndarray:
    """(T, S) link probabilities -> (len(SENTENCE_FEATURES),) features of the pair (zeros for an empty side)."""
    p = np.asarray(probs, dtype=np.float64)
    t, s = p.shape
    if t == 0 or s == 0:
        return np.zeros(len(SENTENCE_FEATURES))
    ct, cs = p.max(1).mean(), p.max(0).mean()
    ratio = math.log(t / s)
    return np.array([ct, cs, 2 * ct * cs / (ct + cs + _EPS), p.sum() / t, p.sum() / s, abs(ratio), ratio])


@dataclass(frozen=True)
class ScoredPair:
    """One sentence pair as the models scored it: ``matrices`` as :meth:`Calibration.probabilities` takes them
    ((scores, NULL), and the reverse model's (scores, NULL) for a bidirectional calibration), the words, and
    the forward and reverse models' forced-decoding log-probabilities per label (None when not computed)."""

    matrices: tuple[Any, ...]
    src: Sequence[str] = ()
    tgt: Sequence[str] = ()
    forward: np.ndarray | None = None
    reverse: np.ndarray | None = None


def corrupt(
    pairs: Sequence[tuple[list[str], list[str]]], kind: str, seed: int = 1
) -> list[tuple[list[str], list[str]]]:
    """Corrupted copies of sentence pairs: ``shuffled`` (each target replaced by another pair's), ``truncated``
    (the target cut to its first half, at least one word) or ``appended`` (another pair's target appended)."""
    if kind not in CORRUPTIONS:
        raise ValueError(f"unknown corruption {kind!r}; valid: {', '.join(CORRUPTIONS)}")
    n = len(pairs)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    other = [order[i] if order[i] != i or n == 1 else order[(i + 1) % n] for i in range(n)]
    return CORRUPTIONS[kind](pairs, other)


@dataclass
class Calibration:
    """A fitted calibration of one setting of one model: link probabilities and a sentence score."""

    model: dict[str, Any]
    setting: dict[str, Any]
    cells: Logistic
    sentence: Logistic | PerKind
    fitted_on: dict[str, Any] = field(default_factory=dict)
    measured: dict[str, Any] = field(default_factory=dict)

    @property
    def bidirectional(self) -> bool:
        """Whether the cell model also reads the reverse model's scores (``probabilities(..., reverse=...)``)."""
        return len(self.cells.features) > len(CELL_FEATURES)

    def probabilities(
        self,
        scores: np.ndarray,
        null: np.ndarray | None = None,
        reverse: np.ndarray | None = None,
        reverse_null: np.ndarray | None = None,
    ) -> np.ndarray:
        """(T, S) word scores (and (T,) NULL mass; for a bidirectional calibration also the reverse model's
        (S, T) scores and (S,) NULL mass) -> (T, S) P(gold link)."""
        t, s = np.shape(scores)
        if self.bidirectional != (reverse is not None):
            raise CalibrationError(
                "a bidirectional calibration needs the reverse model's scores, and only it takes them"
                if self.bidirectional
                else "this calibration is of one direction: no reverse scores"
            )
        if t == 0 or s == 0:
            return np.zeros((t, s))
        x = cell_features(scores, null) if reverse is None else pair_features(scores, null, reverse, reverse_null)
        return self.cells.predict(x).reshape(t, s)

    @property
    def sentence_needs(self) -> frozenset[str]:
        """What the sentence score needs (:data:`align.confidence.sentence.NEEDS`): ``forward`` and ``reverse``
        name the models' log-probabilities."""
        return needs_of(self.sentence.features)

    def sentence_score(
        self,
        probs: np.ndarray,
        src: Sequence[str] = (),
        tgt: Sequence[str] = (),
        forward: np.ndarray | None = None,
        reverse: np.ndarray | None = None,
    ) -> float:
        """(T, S) link probabilities, the words, and the forward (n_t,) and reverse (n_s,) log-probabilities of
        the labels -> P(the pair is a translation) in [0, 1] (0 for an empty side). CalibrationError naming what
        the score needs and was not given."""
        return self.sentence_features(probs, src, tgt, forward, reverse, every=False)[0]

    def sentence_features(
        self,
        probs: np.ndarray,
        src: Sequence[str] = (),
        tgt: Sequence[str] = (),
        forward: np.ndarray | None = None,
        reverse: np.ndarray | None = None,
        every: bool = True,
    ) -> tuple[float, dict[str, float]]:
        """The arguments of :meth:`sentence_score` -> (its score, every sentence feature the evidence allows, the
        score's own and the rest, by name, rounded to 6 decimals; {} unless ``every``): each computed once."""
        if 0 in np.shape(probs):
            return 0.0, {}
        evidence = PairEvidence(np.asarray(probs), src, tgt, forward, reverse)
        names = self.sentence.features
        try:
            got = available_features(evidence) if every else {}
            x = np.array([got[n] for n in names]) if set(names) <= set(got) else feature_vector(evidence, names)
        except ValueError as e:
            raise CalibrationError(f"{e} (the calibration's sentence score uses {', '.join(names)})") from None
        return float(self.sentence.predict(x[None])[0]), {k: round(v, 6) for k, v in got.items()}

    def check(self, model: dict[str, Any], setting: dict[str, Any], path: str = "calibration") -> None:
        """CalibrationError naming the first field in which ``model`` or ``setting`` differs from the fitted ones."""
        for what, want, got in (("model", self.model, model), ("setting", self.setting, setting)):
            for key in sorted(set(want) | set(got)):
                if what == "model" and key in HOW_ASKED:
                    continue
                if want.get(key) != got.get(key):
                    raise CalibrationError(
                        f"{path}: fitted on {what} {key}={want.get(key)!r}; this run has "
                        f"{key}={got.get(key)!r} (a calibration holds for one model and setting)"
                    )

    def to_json(self) -> str:
        from .. import __version__

        return (
            json.dumps(
                {
                    "format": FORMAT,
                    "version": VERSION,
                    "package": __version__,
                    "model": self.model,
                    "setting": self.setting,
                    "cells": self.cells.to_dict(),
                    "sentence": self.sentence.to_dict(),
                    "fitted_on": self.fitted_on,
                    "measured": self.measured,
                },
                indent=1,
            )
            + "\n"
        )


def read_calibration(path: str) -> Calibration:
    """Read a calibration file, every field checked (:mod:`align.confidence.schema`); CalibrationError
    ``FILE: FIELD: found X; expected Y`` for the first one that is not as it must be."""
    from .schema import read_calibration_file

    return read_calibration_file(os.fspath(path))


def write_calibration(path: str, calibration: Calibration) -> None:
    """Write atomically (no partial file is ever left); CalibrationError, and nothing written, if the file would
    not read back (a field outside the schema: :mod:`align.confidence.schema`)."""
    from ..io.atomic import write_text_atomic
    from .schema import calibration_from_dict

    text = calibration.to_json()
    calibration_from_dict(json.loads(text), os.fspath(path))
    write_text_atomic(os.fspath(path), text)


def fit_calibration(
    matrices: Sequence[tuple[Any, ...]],
    gold_cells: Sequence[np.ndarray],
    negatives: Sequence[ScoredPair],
    model: dict[str, Any],
    setting: dict[str, Any],
    fitted_on: dict[str, Any],
    positives: Sequence[ScoredPair] | None = None,
    features: Sequence[str] = LINK_FEATURES,
    l2: float = 1.0,
    negative_kinds: Sequence[str] | None = None,
) -> Calibration:
    """Fit a calibration from the gold sentences' (scores, NULL mass) and their (T, S) 0/1 gold cells, and the
    sentence model on ``positives`` (default: the gold sentences, matrices only) against ``negatives`` (noisy
    pairs), the two classes weighing the same, over ``features`` (:mod:`align.confidence.sentence`). Tuples of
    four, (scores, NULL, reverse scores (S, T), reverse NULL), fit a bidirectional calibration.
    ``negative_kinds`` (one kind of noise per negative): the sentence model is ``per-kind``
    (:func:`~align.confidence.per_kind.fit_per_kind`: one detector per kind) instead of one regression.
    CalibrationError if there are too few gold sentences or links to fit (:data:`MIN_SENTENCES`,
    :data:`MIN_LINKS`)."""
    if len(matrices) != len(gold_cells):
        raise CalibrationError(
            f"{len(matrices)} score matrices but {len(gold_cells)} gold sentences; expected one each"
        )
    both = bool(matrices) and len(matrices[0]) == 4
    if tuple(features) not in sentence_choices(both):
        raise CalibrationError(
            f"sentence features {list(features)}: expected one of the lists of SENTENCE_CHOICES, both models' "
            "only with a bidirectional calibration (the reverse model's scores)"
        )
    x = [pair_features(*m) if both else cell_features(*m) for m in matrices]
    y = [np.asarray(g, dtype=np.float64).ravel() for g in gold_cells]
    for k, (m, g) in enumerate(zip((mm[0] for mm in matrices), gold_cells)):
        if np.shape(m) != np.shape(g):
            raise CalibrationError(
                f"sentence {k + 1}: scores of shape {np.shape(m)} but gold cells of shape "
                f"{np.shape(g)}; expected the same (tgt_len, src_len)"
            )
    labels = np.concatenate(y) if y else np.zeros(0)
    links, cells = int(labels.sum()), len(labels)
    if len(matrices) < MIN_SENTENCES or links < MIN_LINKS or cells - links < MIN_LINKS:
        raise CalibrationError(
            f"{len(matrices)} sentences with {links} gold links in {cells} cells; fitting needs at "
            f"least {MIN_SENTENCES} sentences, {MIN_LINKS} gold links and {MIN_LINKS} other cells"
        )
    cell_model = fit_logistic(np.vstack(x), labels, CELL_FEATURES + REVERSE_FEATURES if both else CELL_FEATURES)
    n = len(features)
    cal = Calibration(model, setting, cell_model, Logistic(tuple(features), np.zeros(n), np.ones(n), np.zeros(n + 1)))
    if positives is None:
        if tuple(features) != LINK_FEATURES:
            raise CalibrationError(
                "the sentence features beyond the link probabilities need the positive pairs' words and "
                "log-probabilities: give positives"
            )
        positives = [ScoredPair(m) for m in matrices]
    pos = sentence_rows(cal, positives, features)
    if negative_kinds is None:
        neg = sentence_rows(cal, negatives, features)
        cal.sentence = fit_sentence_model(pos, neg, features, l2, (pair_lengths(positives), pair_lengths(negatives)))
        n_neg = len(neg)
    else:
        cal.sentence, n_neg = _fit_per_kind(cal, pos, positives, negatives, negative_kinds, features, l2)
    cal.fitted_on = {
        **fitted_on,
        "sentences": len(matrices),
        "cells": cells,
        "gold_links": links,
        "negatives": n_neg,
        "sentence_weights": "length-balanced",
    }
    return cal


def sentence_rows(cal: Calibration, pairs: Sequence[ScoredPair], features: Sequence[str]) -> np.ndarray:
    """(n, len(features)) the sentence features of each pair whose sides are not empty, under ``cal``'s cell model."""
    out = []
    for p in pairs:
        probs = cal.probabilities(*p.matrices)
        if 0 in probs.shape:
            continue  # an empty side scores 0 without a model: nothing to fit
        out.append(feature_vector(PairEvidence(probs, p.src, p.tgt, p.forward, p.reverse), features))
    return np.array(out).reshape(len(out), len(features))


def fit_sentence_model(
    pos: np.ndarray,
    neg: np.ndarray,
    features: Sequence[str],
    l2: float = 1.0,
    lengths: tuple[np.ndarray, np.ndarray] | None = None,
) -> Logistic:
    """The sentence model from (n_pos, k) features of translations and (n_neg, k) of noisy pairs, the two classes
    weighing the same (each sums to half the examples): P(translation) at even odds. ``lengths``: each pair's
    shorter side in words ((n_pos,), (n_neg,)): the classes then weigh the same in every length bin too
    (:func:`~.length_weights.length_weights`). CalibrationError without both classes."""
    if not len(pos) or not len(neg):
        raise CalibrationError(f"{len(pos)} pairs and {len(neg)} noisy pairs; the sentence model needs both")
    pos_len, neg_len = lengths if lengths is not None else (None, None)
    w = class_weights(pos_len, neg_len, len(pos), len(neg))
    return fit_logistic(np.vstack([pos, neg]), np.r_[np.ones(len(pos)), np.zeros(len(neg))], features, l2=l2, weights=w)


def _fit_per_kind(
    cal: Calibration,
    pos: np.ndarray,
    positives: Sequence[ScoredPair],
    negatives: Sequence[ScoredPair],
    kinds: Sequence[str],
    features: Sequence[str],
    l2: float,
) -> tuple[PerKind, int]:
    """The ``per-kind`` sentence model from ``negatives`` grouped by their ``kinds`` (one each, in order), and how
    many noisy pairs it was fitted on (those with no empty side)."""
    if len(kinds) != len(negatives):
        raise CalibrationError(f"{len(negatives)} noisy pairs but {len(kinds)} kinds; expected one kind each")
    groups: dict[str, list[ScoredPair]] = {}
    for p, k in zip(negatives, kinds):
        groups.setdefault(k, []).append(p)
    rows = {k: sentence_rows(cal, g, features) for k, g in groups.items()}
    lengths = (pair_lengths(positives), {k: pair_lengths(g) for k, g in groups.items()})
    try:
        return fit_per_kind(pos, rows, features, l2, lengths), sum(len(r) for r in rows.values())
    except ValueError as e:
        raise CalibrationError(str(e)) from None


def gold_cells(gold: Alignments, k: int, t: int, s: int) -> np.ndarray:
    """(T, S) 0/1 matrix of sentence ``k``'s gold links, sure and possible."""
    cells = np.zeros((t, s))
    for a, b in gold.links(k, "all"):
        cells[b, a] = 1.0
    return cells


def fold_indices(n: int, fit_on: str) -> tuple[list[int], list[int]]:
    """0-based sentence indices to fit on and to hold out: ``odd`` = lines 1, 3, ... (indices 0, 2, ...)."""
    if fit_on == "all":
        return list(range(n)), []
    first = 0 if fit_on == "odd" else 1
    fit = list(range(first, n, 2))
    return fit, [k for k in range(n) if k % 2 != first]
