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
from .loading import RunError

SAMPLE = 64
"""Pairs read from the start of the input."""
MAJORITY = 0.8
"""Share of them the model must find likelier turned round."""
FACTOR = 2.0
"""How much likelier (median per-token cross-entropy as given, over turned round)."""


def _ce(aligner, pairs: Sequence[tuple[list[str], list[str]]], batch_size: int, names: Sequence[str]) -> np.ndarray:
    spec = aligner.spec(["attn"], [0], ["awi"])
    items = [(name, s, t) for name, (s, t) in zip(names, pairs)]
    return np.array([-sc[LOGPROBS].mean() for _, _, _, sc in aligner.score_items(items, spec, batch_size, True, True)])


def turned_round(
    aligner, pairs: Sequence[tuple[list[str], list[str]]], batch_size: int = 32, names: Sequence[str] | None = None
) -> str | None:
    """Why ``pairs`` (the first ones of a file) look like the model's target language first, or None.
    ``(SAMPLE,)`` pairs at most are scored as given and turned round by the model; ``names``: each pair's
    ``file:line`` (default ``pair K``). A pair the model cannot read, as given or turned round (a tokenizer of the
    source language only), leaves the direction unchecked (None): the run itself reports a bad line."""
    names = list(names) if names is not None else [f"pair {k + 1}" for k in range(len(pairs))]
    kept = [(n, (list(s), list(t))) for n, (s, t) in zip(names[:SAMPLE], pairs[:SAMPLE]) if s and t]
    if not kept:
        return None
    names, pairs = [n for n, _ in kept], [p for _, p in kept]
    try:
        given = _ce(aligner, pairs, batch_size, names)
        turned = _ce(aligner, [(t, s) for s, t in pairs], batch_size, [f"{n} (turned round)" for n in names])
    except ValueError:  # a line the run itself refuses, with its own message: the direction is left unchecked
        return None
    likelier = int((turned < given).sum())
    if likelier >= MAJORITY * len(pairs) and np.median(given) > FACTOR * np.median(turned):
        return (
            f"its first {len(pairs)} pairs read as the other direction: the model finds {likelier} of them likelier "
            f"turned round (per-token cross-entropy {np.median(turned):.2f} turned round, {np.median(given):.2f} "
            "as given, medians); expected the model's source language first: swap the two sides"
        )
    return None


def check_file(aligner, path: str, batch_size: int) -> None:
    """RunError when the first pairs of the file ``path`` read as the model's target language first: every link
    of a file turned round is wrong without any error, and its sentence scores would reject a whole clean corpus
    (standard input is not read ahead: it is read once, so the caller passes files only)."""
    first, names = [], []
    try:
        for k, src, tgt in PairReader(path):
            first.append((src, tgt or []))
            names.append(f"{path}:{k + 1}")
            if len(first) >= SAMPLE:
                break
    except ValueError:  # a bad line (InputError): the run reports it, file:line, before anything is written
        return
    why = turned_round(aligner, first, batch_size, names)
    if why:
        raise RunError(f"{path}: {why}")
