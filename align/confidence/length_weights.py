"""Example weights that keep length from deciding a sentence model (numpy only).

Noise made by cutting (``short``, ``truncated``) is shorter than the pairs it comes from: a sentence model free to
learn "short means noise" reads a real corpus's correct headings as noise. :func:`length_weights` weighs the two
classes the same in every length bin, so that length alone says nothing of the class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

LENGTH_BINS = (1, 2, 3, 4, 6, 9, 14, 22, 35)
"""Lower edges (words of the shorter side) of the length bins :func:`length_weights` balances the classes in."""

MIN_PER_BIN = 5
"""Fewest pairs of each class a length bin holds; a bin with fewer is merged with its longer neighbour."""


def length_weights(pos_len: np.ndarray, neg_len: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n_pos,), (n_neg,) example weights from each pair's shorter side in words: each class sums to half the
    examples, and within every length bin (:data:`LENGTH_BINS`, merged until each holds :data:`MIN_PER_BIN` of
    both classes) the noisy pairs weigh what the translations do, so the negatives take the translations'
    length distribution. Why: noise made by cutting (``short``, ``truncated``) is shorter than the pairs it came
    from, and a model free to learn "short means noise" reads a real corpus's correct headings
    (``sitting resumed ||| reprise de la séance``) as noise; with the classes balanced in every bin, length alone
    says nothing of the class and the score must find the noise in what the models say about the pair."""
    edges = np.asarray(LENGTH_BINS)
    pb, nb = np.searchsorted(edges, pos_len, "right") - 1, np.searchsorted(edges, neg_len, "right") - 1

    def small(g: list[int]) -> bool:
        return bool(np.isin(pb, g).sum() < MIN_PER_BIN or np.isin(nb, g).sum() < MIN_PER_BIN)

    groups: list[list[int]] = []  # bins merged from the shortest up until each has enough of both classes
    for b in range(len(edges)):
        if groups and small(groups[-1]):
            groups[-1].append(b)
        else:
            groups.append([b])
    while len(groups) > 1 and small(groups[-1]):
        last = groups.pop()  # the longest group too small: merged into the one before it
        groups[-1] += last
    half = 0.5 * (len(pos_len) + len(neg_len))
    wp, wn = np.zeros(len(pos_len)), np.zeros(len(neg_len))
    for g in groups:
        ip, i_n = np.isin(pb, g), np.isin(nb, g)
        if not ip.any() or not i_n.any():
            continue  # one group only, and a class is missing from it: cannot happen with both classes present
        share = half * ip.sum() / len(pos_len)  # the bin's weight follows the translations' lengths
        wp[ip], wn[i_n] = share / ip.sum(), share / i_n.sum()
    return wp, wn


def class_weights(pos_len: np.ndarray | None, neg_len: np.ndarray | None, n_pos: int, n_neg: int) -> np.ndarray:
    """(n_pos + n_neg,) example weights, translations first: each class sums to half the examples, and in every
    length bin too (:func:`length_weights`) when both classes' lengths ((n_pos,), (n_neg,)) are given."""
    if pos_len is not None and neg_len is not None:
        return np.asarray(np.concatenate(length_weights(pos_len, neg_len)))
    n = n_pos + n_neg
    return np.asarray(np.r_[np.full(n_pos, 0.5 * n / n_pos), np.full(n_neg, 0.5 * n / n_neg)])


def pair_lengths(pairs: Sequence[Any]) -> np.ndarray:
    """(n,) the shorter side's words of each :class:`~align.confidence.calibration.ScoredPair` whose sides are not
    empty (those :func:`~align.confidence.calibration.sentence_rows` keeps; the sides the models scored)."""
    shapes = [np.shape(p.matrices[0]) for p in pairs]
    return np.array([min(s) for s in shapes if 0 not in s], dtype=np.int64)
