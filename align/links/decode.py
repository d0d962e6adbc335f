"""Decoders: a word-level score matrix (tgt_len, src_len) -> sorted 0-based ``(src, tgt)`` links.

Ties go to the lowest index (numpy's argmax), so every decoder is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Links = list[tuple[int, int]]


def _check(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2:
        raise ValueError(f"expected a (tgt_len, src_len) matrix; got shape {scores.shape}")
    if np.isnan(scores).any():
        raise ValueError("score matrix contains NaN")
    return scores


def _to_links(mask: np.ndarray) -> Links:
    t, s = np.nonzero(mask)
    order = np.lexsort((t, s))
    return list(zip(s[order].tolist(), t[order].tolist()))


def _argmax_mask(scores: np.ndarray, axis: int) -> np.ndarray:
    mask = np.zeros(scores.shape, dtype=bool)
    if scores.size == 0:
        return mask
    idx = scores.argmax(axis=axis)
    if axis == 1:
        mask[np.arange(scores.shape[0]), idx] = True
    else:
        mask[idx, np.arange(scores.shape[1])] = True
    return mask


def decode_argmax(scores: np.ndarray) -> Links:
    """Each target word to its highest-scoring source word (Kobayashi et al. 2020; Li et al. 2019)."""
    return _to_links(_argmax_mask(_check(scores), axis=1))


def decode_argmax_src(scores: np.ndarray) -> Links:
    """Each source word to its highest-scoring target word."""
    return _to_links(_argmax_mask(_check(scores), axis=0))


def decode_intersect(scores: np.ndarray) -> Links:
    """Links that are the argmax of both their row and their column."""
    s = _check(scores)
    return _to_links(_argmax_mask(s, 1) & _argmax_mask(s, 0))


def row_shares(scores: np.ndarray) -> np.ndarray:
    """Each row divided by its sum (rows of zeros stay zero): scores of any method as shares of a
    target word's total, so one cutoff means the same for attention weights and norms."""
    s = _check(scores)
    total = s.sum(axis=1, keepdims=True)
    shares: np.ndarray = np.divide(s, total, out=np.zeros_like(s), where=total > 0)
    return shares


def decode_threshold(scores: np.ndarray, threshold: float = 0.1) -> Links:
    """Every cell whose share of its row (``row_shares``) is >= ``threshold``; any method's scores."""
    return _to_links(row_shares(scores) >= threshold)


def decode_relative_threshold(scores: np.ndarray, ratio: float = 0.5) -> Links:
    """Every cell with score >= ``ratio`` times its row's maximum (rows with max <= 0 get none)."""
    s = _check(scores)
    if s.size == 0:
        return []
    row_max = s.max(axis=1, keepdims=True)
    return _to_links((s >= ratio * row_max) & (row_max > 0))


def decode_itermax(scores: np.ndarray, max_count: int = 2, alpha_ratio: float = 0.9) -> Links:
    """IterMax of SimAlign (Jalili Sabet et al. 2020): argmax intersection, then rounds that let
    words still unaligned on one side pick among the rest, their scores damped by ``alpha_ratio``."""
    s = _check(scores)
    m, n = s.shape
    if m == 0 or n == 0:
        return []
    inter = (_argmax_mask(s, 1) & _argmax_mask(s, 0)).astype(np.float64)
    if min(m, n) <= 2:
        return _to_links(inter > 0)
    count = 1
    while count < max_count:
        mask_x = 1.0 - np.clip(inter.sum(1, keepdims=True), 0.0, 1.0) * np.ones((1, n))
        mask_y = 1.0 - np.clip(inter.sum(0, keepdims=True), 0.0, 1.0) * np.ones((m, 1))
        mask = np.clip(alpha_ratio * mask_x + alpha_ratio * mask_y, 0.0, 1.0)
        mask_zeros = 1.0 - (1.0 - mask_x) * (1.0 - mask_y)
        if mask_x.sum() < 1.0 or mask_y.sum() < 1.0:
            mask = mask * 0.0
            mask_zeros = mask_zeros * 0.0
        new = s * mask
        fwd = _argmax_mask(new, 1) * mask_zeros
        bwd = _argmax_mask(new, 0) * mask_zeros
        new_inter = fwd * bwd
        if np.array_equal(inter + new_inter, inter):
            break
        inter = inter + new_inter
        count += 1
    return _to_links(inter > 0)


DECODERS: dict[str, Callable[..., Links]] = {
    "argmax": decode_argmax,
    "argmax-src": decode_argmax_src,
    "intersect": decode_intersect,
    "threshold": decode_threshold,
    "relative-threshold": decode_relative_threshold,
    "itermax": decode_itermax,
}


def decode(scores: np.ndarray, method: str = "argmax", **options: float) -> Links:
    """Decode (tgt_len, src_len) scores with the named decoder (see ``DECODERS``)."""
    try:
        fn = DECODERS[method]
    except KeyError:
        raise ValueError(f"unknown decoder {method!r}; valid: {', '.join(DECODERS)}") from None
    return fn(scores, **options)
