"""The sentence model ``per-kind`` (numpy only): one logistic regression per kind of noise, and a pair as suspect
as the most suspicious of them.

Why: one logistic regression fitted on translations against every kind of noise at once weighs the features by how
well they separate those kinds *on average*, and a kind it was never shown falls between them. Leave-one-kind-out
(``benchmarks/sentence_scores.py``: the kind measured is never among the negatives), Hansards, models that never
saw the pairs (half models of 4,500 / 4,000 updates): the one regression over ``compact``'s features has mean
ROC-AUC 0.950 and worst 0.801 (two adjacent words swapped twice); one detector per kind over
:data:`~align.confidence.sentence.PER_KIND_BOTH_FEATURES`, 0.974 and 0.877. A detector fitted on translations
against one kind alone keeps that kind's own evidence (a cut sentence: the end-of-sentence surprise; a sentence
appended: the links per source word), and a new kind is usually caught by the detector of the kind it resembles.

A pair's log-odds is the **lowest** of the detectors' (noise of any kind makes a pair not a translation: the
detector that finds it least likely speaks for all), and a last logistic regression over that one number (Platt
scaling) makes the value P(the pair is a translation) on the data it was fitted on, translations and noise
weighing the same, as the one-regression models' value is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .length_weights import class_weights
from .logistic import Logistic, fit_logistic

LOWEST = "lowest_kind_log_odds"
"""The one feature of :attr:`PerKind.combine`: the lowest log-odds any kind's detector gives the pair."""


@dataclass(frozen=True)
class PerKind:
    """Detectors (one :class:`Logistic` per kind of noise, translations against that kind, over ``features``) and
    ``combine``, the logistic regression over their lowest log-odds (:data:`LOWEST`) that gives P(translation)."""

    features: tuple[str, ...]
    kinds: tuple[str, ...]
    detectors: tuple[Logistic, ...]
    combine: Logistic

    def lowest(self, x: np.ndarray) -> np.ndarray:
        """(n, n_features) -> (n,) the lowest log-odds of any kind's detector."""
        return np.asarray(np.min([d.log_odds(x) for d in self.detectors], axis=0))

    def predict(self, x: np.ndarray) -> np.ndarray:
        """(n, n_features) -> (n,) P(the pair is a translation)."""
        return np.asarray(self.combine.predict(self.lowest(x)[:, None]))

    def to_dict(self) -> dict[str, Any]:
        """The file's ``sentence`` object (:mod:`align.confidence.schema`, version 3)."""
        detectors = [{"kind": k, **{f: d.to_dict()[f] for f in ("mean", "scale", "weights")}}
                     for k, d in zip(self.kinds, self.detectors)]  # fmt: skip
        return {"features": list(self.features), "detectors": detectors, "combine": self.combine.to_dict()}


def fit_per_kind(
    pos: np.ndarray,
    neg: Mapping[str, np.ndarray],
    features: Sequence[str],
    l2: float = 1.0,
    lengths: tuple[np.ndarray, Mapping[str, np.ndarray]] | None = None,
) -> PerKind:
    """:class:`PerKind` from (n_pos, k) features of translations and, per kind, (n_kind, k) features of its noisy
    pairs (a kind without pairs is left out). ``lengths``: each pair's shorter side in words, (n_pos,) and per kind
    (n_kind,): the classes then weigh the same in every length bin (:func:`~.length_weights.length_weights`).
    ValueError without
    translations or without any noisy pair."""
    kinds = [k for k, rows in neg.items() if len(rows)]
    if not len(pos) or not kinds:
        raise ValueError(f"{len(pos)} pairs and noisy pairs of {len(kinds)} kinds; the sentence model needs both")
    pos_len, neg_len = lengths if lengths is not None else (None, {})
    if lengths is not None and any(k not in neg_len or len(neg_len[k]) != len(neg[k]) for k in kinds):
        raise ValueError("lengths: expected one length per noisy pair of every kind")
    detectors = []
    for k in kinds:
        w = class_weights(pos_len, neg_len.get(k), len(pos), len(neg[k]))
        y = np.r_[np.ones(len(pos)), np.zeros(len(neg[k]))]
        detectors.append(fit_logistic(np.vstack([pos, neg[k]]), y, features, l2=l2, weights=w))
    model = PerKind(tuple(features), tuple(kinds), tuple(detectors), Logistic((LOWEST,), np.zeros(1), np.ones(1),
                                                                              np.zeros(2)))  # fmt: skip
    every = np.vstack([neg[k] for k in kinds])
    every_len = np.concatenate([neg_len[k] for k in kinds]) if lengths is not None else None
    w = class_weights(pos_len, every_len, len(pos), len(every))
    lowest = np.r_[model.lowest(pos), model.lowest(every)][:, None]
    combine = fit_logistic(lowest, np.r_[np.ones(len(pos)), np.zeros(len(every))], (LOWEST,), l2=l2, weights=w)
    return PerKind(model.features, model.kinds, model.detectors, combine)
