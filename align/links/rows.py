"""From a decoder's score rows to word links: AWO/AWI row selection, subword->word, decoding (numpy).

A teacher-forced decoder sees ``prev = [EOS, y_0, ..., y_{n-1}]`` and predicts
``target = [y_0, ..., y_{n-1}, EOS]``; its score matrix has one row per decoder step,
``(n + 1, src_len)``. AWO reads target token k at the step that *outputs* it (row k); AWI reads it
at the step where it is the *input* (row k + 1), as in Kobayashi et al. (2020) and Shift-Att
(Chen et al. 2020). The final EOS is never a target word.
"""

from __future__ import annotations

import numpy as np

from ..spec.alignspec import LEVELS, SPECIALS, AlignSpec
from ..spec.setting import SHIFTS
from .decode import decode
from .subwords import SPECIAL, aggregate_scores, n_words, subword_links_to_words


def select_rows(step_scores: np.ndarray, n_target: int, shift: str) -> np.ndarray:
    """Rows of (steps, src_len) decoder scores for the ``n_target`` target tokens before EOS: (n_target, src_len)."""
    if shift not in SHIFTS:
        raise ValueError(f"unknown shift {shift!r}; valid: {', '.join(SHIFTS)}")
    start = 0 if shift == "awo" else 1
    if step_scores.shape[0] < n_target + start:
        raise ValueError(f"{step_scores.shape[0]} decoder steps cannot give {shift} rows for {n_target} target tokens")
    return step_scores[start : start + n_target]


DEFAULT_SPEC = AlignSpec()
"""Word level, argmax, sum over a source word's pieces and mean over a target word's, specials dropped."""


def token_scores_to_links(
    scores: np.ndarray, src_words: np.ndarray, tgt_words: np.ndarray, spec: AlignSpec = DEFAULT_SPEC
) -> list[tuple[int, int]]:
    """Token scores (tgt_tok, src_tok) -> sorted ``(src, tgt)`` links at word or subword level, as ``spec``
    says (its level, decoder and options, reducers and specials policy).

    ``word``: aggregate to words (sum over a source word's pieces, mean over a target word's,
    by default), then decode. ``specials``: ``drop`` removes special tokens (EOS, ...) before
    decoding; ``null`` keeps them as a NULL word, and words decoded to NULL stay unaligned (a
    NULL link is never written). ``subword``: decode the token matrix without special tokens; link
    indices are then token positions among the non-special tokens. ``word-any``: decode at
    subword level, then link two words if any of their pieces are linked (awesome-align).
    """
    level, decoder, specials, opts = spec.level, spec.decoder, spec.specials_policy, dict(spec.decoder_options)
    src_reduce, tgt_reduce = spec.src_reduce, spec.tgt_reduce
    if specials not in SPECIALS:
        raise ValueError(f"unknown specials policy {specials!r}; valid: {', '.join(SPECIALS)}")
    if level == "word":
        if specials == "null":
            ns, nt = n_words(src_words), n_words(tgt_words)
            m = aggregate_scores(scores, src_words, tgt_words, src_reduce, tgt_reduce, null=True)
            return [(s, t) for s, t in decode(m, decoder, **opts) if s < ns and t < nt]
        return decode(aggregate_scores(scores, src_words, tgt_words, src_reduce, tgt_reduce), decoder, **opts)
    keep_s = np.flatnonzero(src_words != SPECIAL)
    keep_t = np.flatnonzero(tgt_words != SPECIAL)
    tok_links = decode(scores[np.ix_(keep_t, keep_s)], decoder, **opts)
    if level == "subword":
        return tok_links
    if level == "word-any":
        return subword_links_to_words(tok_links, src_words[keep_s], tgt_words[keep_t])
    raise ValueError(f"unknown level {level!r}; valid: {', '.join(LEVELS)}")
