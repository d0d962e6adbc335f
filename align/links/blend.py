"""Blends: several settings of one direction averaged into one word-score matrix (numpy only).

A blend is named by its settings joined with ``+``, each a dump name without ``.align``
(``alti-awi-layer0+attn-awo-layer2``; parsed and named by :class:`align.spec.setting.Blend`). Its matrix is the mean
of the settings' row shares: each
setting's ``(tgt_words, src_words)`` word scores, negatives clipped to 0, each target word's row
divided by its sum (a distribution over source words, as in :mod:`align.links.combine`), then
averaged cell by cell. Rows stay distributions, so a blend decodes, saves and combines with a reverse
model like any single setting.

Why: a target word's evidence is spread over two decoder steps. ``awi`` reads the step where the word
is the input, which already looks ahead to the next word (so a word before the final full stop is
drawn to the source's full stop); ``awo`` reads the step that predicts the word. Their mean keeps what
both agree on: on Hansards En-Fr both directions' ``alti-awi-layer0+attn-awo-layer2`` combined by
``mean:intersect`` gives 8.1 AER on the 447 sentences where ``alti-awi-layer0`` alone gives 9.7
(``benchmarks/bidirectional.py``, family ``blend``, with every choice made on held-out halves).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..spec.setting import Blend, is_blend
from .decode import row_shares

__all__ = ["Blend", "blend_scores", "is_blend"]


def blend_scores(matrices: Sequence[np.ndarray], null: bool = False) -> np.ndarray:
    """Word scores of the settings, each ``(T, S)`` -> their mean row shares ``(T, S)``.

    Each row is the mean of the settings' distributions over source words (a setting whose row is all 0
    adds 0). With ``null`` each matrix has a last NULL column (the target word's score on the source's
    specials): the result keeps one, the mean of the settings' NULL shares ``n``, and scales the word
    columns by ``1 - n``; dropping it and taking row shares again gives the blend without ``null``
    wherever no setting's word row is all 0.
    """
    if len(matrices) < 2:
        raise ValueError(f"a blend needs two or more score matrices; got {len(matrices)}")
    shape = np.shape(matrices[0])
    if any(np.shape(m) != shape for m in matrices):
        raise ValueError(f"blend: score matrices of different shapes {sorted({np.shape(m) for m in matrices})}")
    mats = [np.maximum(np.asarray(m, dtype=np.float64), 0.0) for m in matrices]
    if not null:
        out: np.ndarray = np.mean([row_shares(m) for m in mats], axis=0)
        return out
    words = np.mean([row_shares(m[:, :-1]) for m in mats], axis=0)
    n = np.mean([row_shares(m)[:, -1] for m in mats], axis=0)
    return np.concatenate([words * (1.0 - n)[:, None], n[:, None]], axis=1)
