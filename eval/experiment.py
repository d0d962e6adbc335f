"""Shared pieces of the RWTH experiment and the AER curves: gold loading, scoring many
hypotheses, Holm's correction, cross-validated setting choice (numpy, no torch)."""

from __future__ import annotations

from typing import Any

import numpy as np

from align.gold import testsets
from align.links.alignments import Alignments

from .metrics import SentenceCounts, count_matches, score_counts


def load_gold(
    name: str, limit: int = 0, folder: str | None = None
) -> tuple[list[tuple[list[str], list[str]]], Alignments]:
    """Named test set ``name`` (:mod:`align.gold.testsets`, in its own direction; ``folder``: where the sets
    that are not shipped are): lowercased word pairs, first side first, and the gold; the first ``limit``
    sentences if ``limit``. ValueError (TestSetError) if the set is missing or its files changed."""
    ts = testsets.load(name, folder=folder)
    pairs = [([w.lower() for w in s], [w.lower() for w in t]) for s, t in zip(ts.src, ts.tgt)]
    gold = ts.gold
    if limit:
        pairs, gold = pairs[:limit], gold.select(np.arange(min(limit, len(gold))))
    return pairs, gold


def score_all(gold: Alignments, hyps: dict[str, Alignments]) -> tuple[list[dict[str, Any]], dict[str, SentenceCounts]]:
    """Score every hypothesis (already in the gold's orientation): rows for tables and per-sentence counts."""
    rows: list[dict[str, Any]] = []
    counts: dict[str, SentenceCounts] = {}
    for name, hyp in hyps.items():
        c = count_matches(gold, hyp)
        counts[name] = c
        rows.append(score_counts(c).as_dict(name))
    return rows, counts


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (Holm 1979): the k-th smallest raw p
    is multiplied by (m - k), running maximum, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [0.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p_values[i]))
        out[i] = running
    return out


def folds_of(n: int, k: int = 2) -> list[list[int]]:
    """``k`` fixed folds of ``n`` sentences, sentence ``i`` in fold ``i % k`` (interleaved: any
    ordering of the set, by length or by source document, is split evenly)."""
    if k < 2 or n < k:
        raise ValueError(f"need 2 <= k <= n for {k} folds of {n} sentences")
    return [list(range(f, n, k)) for f in range(k)]


def subset(counts: SentenceCounts, idx: list[int]) -> SentenceCounts:
    """The counts of the sentences ``idx``, in that order."""
    return SentenceCounts(*(getattr(counts, f)[idx] for f in ("hyp", "sure", "hyp_sure", "hyp_possible")))


def held_out_choice(counts: dict[str, SentenceCounts], candidates: list[str], folds: list[list[int]]) -> dict[str, Any]:
    """Cross-validated setting choice: for each fold, the candidate with the lowest AER on the other
    folds' sentences (ties: the first in ``candidates``), scored on that fold's sentences only.

    Returns ``{"folds": [{"chosen", "tune_aer", "test_aer"}, ...], "pooled": SentenceCounts}``, where
    ``pooled`` holds every sentence's counts under the setting chosen without it (sentence order),
    for AER and paired tests over the whole set; ValueError without candidates.
    """
    if not candidates:
        raise ValueError("no candidate settings to choose from")
    n = len(counts[candidates[0]])
    fields = {f: np.zeros(n, dtype=np.int32) for f in ("hyp", "sure", "hyp_sure", "hyp_possible")}
    out = []
    for k, test_idx in enumerate(folds):
        tune_idx = [i for j, f in enumerate(folds) if j != k for i in f]
        tune = [(100 * score_counts(subset(counts[c], tune_idx)).aer, r, c) for r, c in enumerate(candidates)]
        aer, _, chosen = min(tune)
        out.append(
            {"chosen": chosen, "tune_aer": aer, "test_aer": 100 * score_counts(subset(counts[chosen], test_idx)).aer}
        )
        for f, arr in fields.items():
            arr[test_idx] = getattr(counts[chosen], f)[test_idx]
    return {"folds": out, "pooled": SentenceCounts(**fields)}
