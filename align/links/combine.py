"""Both directions combined: a forward and a reverse alignment of the same sentence pair -> one set of links.

Two kinds (numpy only), both named by one string so that files, manifests and reports say exactly what ran:

- **hard** (``grow-diag-final-and``, ``intersect``, ...): the atools heuristics of
  :mod:`align.links.symmetrize` on the two directions' links (each direction decoded on its own:
  the forward model's best source word for each target word, the reverse model's best target word
  for each source word).
- **soft** (``COMBINER:DECODER``, e.g. ``hmean:threshold``): the two score matrices combined per cell,
  then decoded. The forward matrix ``F`` (T, S) is turned into row shares ``f`` (each target word's
  scores divided by their sum over the source words: a distribution over source words, as the
  forward model's attention is); the reverse model's matrix ``R`` (S, T), whose rows are source
  words, into its row shares, transposed: ``b`` (T, S), each source word's distribution over target
  words. Combiners (:data:`COMBINERS`), all in [0, 1] and 0 where either is 0 except ``mean``:
  ``hmean`` ``2fb / (f + b)`` (Mask-Align, Chen et al. 2021), ``gmean`` ``sqrt(f b)`` (the product's
  square root: the same links as the product at threshold ``t**2``, on the same scale as the others),
  ``mean`` ``(f + b) / 2``. Decoders (:data:`SOFT_DECODERS`): ``threshold`` (cells >= t; default
  :data:`DEFAULT_THRESHOLD`), ``intersect`` (the argmax of both its row and its column), ``itermax``
  (SimAlign's), ``argmax`` (each target word's best source word).

Shapes: forward ``(tgt_len, src_len)``, reverse ``(src_len, tgt_len)`` as the reverse model wrote it
(its own target-by-source convention); links 0-based ``(src, tgt)`` of the forward pair.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .decode import decode_argmax, decode_argmax_src, decode_intersect, decode_itermax, row_shares
from .symmetrize import SYMMETRIZERS

Links = list[tuple[int, int]]

DEFAULT_THRESHOLD = 0.2
"""The soft ``threshold`` decoder's default cutoff on the combined score: chosen on each held-out half of RWTH De-En
(``benchmarks/bidirectional.py``, with ``gmean``; ``benchmarks/results/bidirectional_rwth.md``)."""


def _hmean(f: np.ndarray, b: np.ndarray) -> np.ndarray:
    total = f + b
    out: np.ndarray = np.divide(2.0 * f * b, total, out=np.zeros_like(total), where=total > 0)
    return out


def _gmean(f: np.ndarray, b: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.sqrt(f * b)
    return out


def _mean(f: np.ndarray, b: np.ndarray) -> np.ndarray:
    out: np.ndarray = (f + b) / 2.0
    return out


COMBINERS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "hmean": _hmean,
    "gmean": _gmean,
    "mean": _mean,
}
"""Per-cell combiners of the forward and the transposed reverse row shares, (T, S) each."""


def _threshold(m: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> Links:
    t, s = np.nonzero(m >= threshold)
    order = np.lexsort((t, s))
    return list(zip(s[order].tolist(), t[order].tolist()))


SOFT_DECODERS: dict[str, Callable[..., Links]] = {
    "threshold": _threshold,
    "intersect": decode_intersect,
    "itermax": decode_itermax,
    "argmax": decode_argmax,
}
"""Decoders of a combined (T, S) matrix; ``threshold`` takes ``threshold=``, the others no option."""


def check_pair(forward: np.ndarray, reverse: np.ndarray, what: str = "sentence") -> None:
    """ValueError unless ``forward`` is (T, S) and ``reverse`` (S, T) of the same pair, finite."""
    f, r = np.asarray(forward), np.asarray(reverse)
    if f.ndim != 2 or r.ndim != 2:
        raise ValueError(f"{what}: score matrices of shapes {f.shape} and {r.shape}; expected 2-D")
    if r.shape != f.shape[::-1]:
        raise ValueError(
            f"{what}: forward scores are {f.shape[0]} target x {f.shape[1]} source words, reverse scores "
            f"{r.shape[0]} x {r.shape[1]}; expected {f.shape[1]} x {f.shape[0]} (the same pair turned round)"
        )
    if not (np.isfinite(f).all() and np.isfinite(r).all()):
        raise ValueError(f"{what}: a score matrix holds NaN or infinity")


def combine_scores(forward: np.ndarray, reverse: np.ndarray, combiner: str = "hmean") -> np.ndarray:
    """Forward (T, S) and reverse (S, T) scores -> combined (T, S) in [0, 1] (see the module docstring)."""
    fn = _lookup(COMBINERS, combiner, "combiner")
    check_pair(forward, reverse)
    f = row_shares(np.maximum(np.asarray(forward, dtype=np.float64), 0.0))
    b = row_shares(np.maximum(np.asarray(reverse, dtype=np.float64), 0.0)).T
    out: np.ndarray = fn(f, b)
    return out


def is_soft(name: str) -> bool:
    """True for a soft combination name ``COMBINER:DECODER``."""
    return ":" in name


def check_combination(name: str) -> str:
    """``name`` if it is a hard heuristic or ``COMBINER:DECODER``; ValueError listing the valid names."""
    if is_soft(name):
        comb, _, dec = name.partition(":")
        _lookup(COMBINERS, comb, "combiner")
        _lookup(SOFT_DECODERS, dec, "soft decoder")
        return name
    if name not in SYMMETRIZERS:
        raise ValueError(
            f"unknown combination {name!r}; valid: {', '.join(SYMMETRIZERS)}, or COMBINER:DECODER with COMBINER "
            f"one of {', '.join(COMBINERS)} and DECODER one of {', '.join(SOFT_DECODERS)} (e.g. hmean:threshold)"
        )
    return name


def combine(name: str, forward: np.ndarray, reverse: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> Links:
    """Links of one pair from forward (T, S) and reverse (S, T) word scores with combination ``name``
    (hard: each direction argmax-decoded, then the atools heuristic; soft: combined, then decoded)."""
    check_combination(name)
    if is_soft(name):
        comb, _, dec = name.partition(":")
        m = combine_scores(forward, reverse, comb)
        return SOFT_DECODERS[dec](m, threshold=threshold) if dec == "threshold" else SOFT_DECODERS[dec](m)
    check_pair(forward, reverse)
    return combine_links(name, decode_argmax(forward), reverse_decode(reverse))


def reverse_links(links: Iterable[tuple[int, int]]) -> Links:
    """The reverse model's ``(its src, its tgt)`` links as ``(src, tgt)`` of the forward pair, sorted."""
    return sorted((t, s) for s, t in links)


def combine_links(name: str, forward: Iterable[tuple[int, int]], reverse: Iterable[tuple[int, int]]) -> Links:
    """Hard combination of the forward and (already turned round) reverse links of one pair."""
    if name not in SYMMETRIZERS:
        check_combination(name)  # names the valid ones
        raise ValueError(f"{name!r} combines score matrices, not links; give two score files")
    return SYMMETRIZERS[name](forward, reverse)


def reverse_decode(reverse: np.ndarray) -> Links:
    """The reverse model's own links from its (S, T) scores, as ``(src, tgt)`` of the forward pair: each
    source word to its best target word (the reverse model's argmax over its source, our target)."""
    return decode_argmax_src(np.asarray(reverse).T)


def _lookup(registry: dict[str, Callable[..., Any]], name: str, what: str) -> Callable[..., Any]:
    try:
        return registry[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r}; valid: {', '.join(registry)}") from None
