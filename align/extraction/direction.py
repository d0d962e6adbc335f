"""Is a file of pairs in the model's direction? Asked of the model itself, on the first pairs (forced decoding).

A file of ``fr ||| en`` pairs given to an En->Fr model aligns and scores without any error, every pair badly: the
sentence score then rejects a whole clean corpus. The model tells: on a pair in its direction the per-token
cross-entropy of the target is far lower than on the pair turned round.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..io.inputs import PairReader
from .engine import LOGPROBS
from .loading import RunError, one_line

SAMPLE = 64
"""Pairs read from the start of the input."""
MAJORITY = 0.8
"""Share of them the model must find likelier turned round."""
FACTOR = 2.0
"""How much likelier (median per-token cross-entropy as given, over turned round)."""


def _ce(aligner, pairs: Sequence[tuple[list[str], list[str]]], batch_size: int) -> np.ndarray:
    spec = aligner.spec(["attn"], [0], ["awi"])
    items = [(f"pair {k + 1}", s, t) for k, (s, t) in enumerate(pairs)]
    return np.array([-sc[LOGPROBS].mean() for _, _, _, sc in aligner.score_items(items, spec, batch_size, True, True)])


def turned_round(aligner, pairs: Sequence[tuple[list[str], list[str]]], batch_size: int = 32) -> str | None:
    """Why ``pairs`` (the first ones of a file) look like the model's target language first, or None.
    ``(SAMPLE,)`` pairs at most are scored as given and turned round by the model."""
    pairs = [(list(s), list(t)) for s, t in pairs[:SAMPLE] if s and t]
    if not pairs:
        return None
    given = _ce(aligner, pairs, batch_size)
    turned = _ce(aligner, [(t, s) for s, t in pairs], batch_size)
    likelier = int((turned < given).sum())
    if likelier >= MAJORITY * len(pairs) and np.median(given) > FACTOR * np.median(turned):
        return (
            f"its first {len(pairs)} pairs read as the other direction: the model finds {likelier} of them likelier "
            f"turned round (per-token cross-entropy {np.median(turned):.2f} turned round, {np.median(given):.2f} "
            "as given, medians); expected the model's source language first: swap the two sides"
        )
    return None


def check_file(aligner, path: str, batch_size: int) -> None:
    """RunError when the first pairs of the file ``path`` read as the model's target language first: sentence
    scores of a file turned round would reject a whole clean corpus (standard input is not read ahead: it is read
    once, so the caller passes files only)."""
    first = []
    try:
        for _, src, tgt in PairReader(path):
            first.append((src, tgt or []))
            if len(first) >= SAMPLE:
                break
        why = turned_round(aligner, first, batch_size)
    except ValueError as e:  # a bad line (InputError) or one the tokenizer cannot read: file:line, one line
        raise RunError(one_line(e)) from None
    if why:
        raise RunError(f"{path}: {why}")
