"""Subword-to-word maps and aggregation of subword score matrices to word level.

A word map is an int array with one entry per subword token: the 0-based word it belongs to, or
``SPECIAL`` (-1) for tokens that belong to no word (EOS, BOS, language tags). Word ids are
non-decreasing over the non-special tokens and start at 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

SPECIAL = -1
SP_MARKER = "\u2581"  # SentencePiece's word-start marker '▁'
BPE_MARKER = "@@"  # subword-nmt's continuation marker


class WordMapError(ValueError):
    """Subword tokens that do not match the words of their sentence."""


def word_map_sentencepiece(tokens: Sequence[str], marker: str = SP_MARKER, specials: Sequence[str] = ()) -> np.ndarray:
    """Word id per SentencePiece token (n_tokens,): a token starting with ``marker`` opens a word."""
    out = np.empty(len(tokens), dtype=np.int64)
    word = -1
    for i, tok in enumerate(tokens):
        if tok in specials:
            out[i] = SPECIAL
            continue
        if tok.startswith(marker) or word < 0:
            word += 1
        out[i] = word
    return out


def word_map_subword_nmt(tokens: Sequence[str], marker: str = BPE_MARKER, specials: Sequence[str] = ()) -> np.ndarray:
    """Word id per subword-nmt token (n_tokens,): a token ending with ``marker`` continues its word."""
    out = np.empty(len(tokens), dtype=np.int64)
    word = 0
    open_word = False
    for i, tok in enumerate(tokens):
        if tok in specials:
            out[i] = SPECIAL
            continue
        out[i] = word
        open_word = tok.endswith(marker)
        if not open_word:
            word += 1
    if open_word:
        raise WordMapError(f"last token {tokens[-1]!r} ends with {marker!r}: the word never ends")
    return out


def word_map_from_ids(ids: Sequence[int]) -> np.ndarray:
    """Validate an explicit word id per token (``-1`` = special) and return it as an int array."""
    arr = np.asarray(ids, dtype=np.int64).reshape(-1)
    real = arr[arr != SPECIAL]
    if np.any(arr < SPECIAL):
        raise WordMapError(f"word ids must be >= 0 or {SPECIAL} (special); got {arr.tolist()}")
    if len(real) and (real[0] != 0 or np.any(np.diff(real) < 0) or np.any(np.diff(real) > 1)):
        raise WordMapError(f"word ids must start at 0 and rise by 0 or 1; got {arr.tolist()}")
    return arr


WORD_MAPS: dict[str, Callable[..., np.ndarray]] = {
    "sentencepiece": word_map_sentencepiece,
    "subword-nmt": word_map_subword_nmt,
}


def word_map(tokens: Sequence[str], scheme: str, specials: Sequence[str] = ()) -> np.ndarray:
    """Word id per token (n_tokens,) for a named subword ``scheme`` (see ``WORD_MAPS``)."""
    try:
        fn = WORD_MAPS[scheme]
    except KeyError:
        raise ValueError(f"unknown subword scheme {scheme!r}; valid: {', '.join(WORD_MAPS)}") from None
    return fn(tokens, specials=specials)


def n_words(word_ids: np.ndarray) -> int:
    """Number of words in a word map."""
    real = word_ids[word_ids != SPECIAL]
    return int(real.max()) + 1 if len(real) else 0


def check_word_map(
    tokens: Sequence[str], word_ids: np.ndarray, words: Sequence[str], sentence: str = "sentence"
) -> None:
    """Raise WordMapError, showing both sides, unless the tokens make exactly ``len(words)`` words."""
    if n_words(word_ids) != len(words):
        raise WordMapError(
            f"{sentence}: {len(tokens)} subword tokens make {n_words(word_ids)} words "
            f"but the text has {len(words)}\n  subwords: {' '.join(tokens)}\n"
            f"  words:    {' '.join(words)}"
        )


REDUCERS = ("sum", "mean", "max")


def aggregate_scores(
    scores: np.ndarray,
    src_words: np.ndarray,
    tgt_words: np.ndarray,
    src_reduce: str = "sum",
    tgt_reduce: str = "mean",
    null: bool = False,
) -> np.ndarray:
    """Subword scores (tgt_tok, src_tok) -> word scores (tgt_words, src_words); specials dropped.

    Default as in Kobayashi et al. (2020): sum over a source word's pieces (a word's share of the
    attention is the sum of its pieces' shares), mean over a target word's pieces. With ``null``,
    the special tokens of each side are reduced into one extra NULL column (index src_words) and
    row (index tgt_words) instead of dropped, so a decoder can align a word to NULL.
    """
    for r in (src_reduce, tgt_reduce):
        if r not in REDUCERS:
            raise ValueError(f"unknown reducer {r!r}; valid: {', '.join(REDUCERS)}")
    scores = np.asarray(scores)
    if scores.shape != (len(tgt_words), len(src_words)):
        raise ValueError(
            f"scores of shape {scores.shape} do not fit {len(tgt_words)} target and {len(src_words)} source tokens"
        )
    if null:
        # Specials become one more "word" after the last real one on each side.
        src_words = np.where(src_words == SPECIAL, n_words(src_words), src_words)
        tgt_words = np.where(tgt_words == SPECIAL, n_words(tgt_words), tgt_words)
        src_order, tgt_order = np.argsort(src_words, kind="stable"), np.argsort(tgt_words, kind="stable")
        scores = scores[np.ix_(tgt_order, src_order)]
        src_words, tgt_words = src_words[src_order], tgt_words[tgt_order]
    out = _reduce_axis(scores, src_words, src_reduce, axis=1)
    return _reduce_axis(out, tgt_words, tgt_reduce, axis=0)


def _reduce_axis(x: np.ndarray, word_ids: np.ndarray, how: str, axis: int) -> np.ndarray:
    keep = np.flatnonzero(word_ids != SPECIAL)
    ids = word_ids[keep]
    x = np.take(x, keep, axis=axis)
    if len(ids) == 0:
        shape = list(x.shape)
        shape[axis] = 0
        return np.zeros(shape, dtype=x.dtype)
    # Word ids are non-decreasing, so each word is one contiguous run: reduceat at run starts.
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    if how == "max":
        return np.maximum.reduceat(x, starts, axis=axis)
    total = np.add.reduceat(x, starts, axis=axis)
    if how == "sum":
        return total
    counts = np.diff(np.r_[starts, len(ids)])
    shape = [1, 1]
    shape[axis] = len(counts)
    mean: np.ndarray = total / counts.reshape(shape)
    return mean


def subword_links_to_words(
    links: Sequence[tuple[int, int]], src_words: np.ndarray, tgt_words: np.ndarray
) -> list[tuple[int, int]]:
    """Subword links -> word links: two words are linked if any of their pieces are (awesome-align)."""
    out = set()
    for s, t in links:
        ws, wt = int(src_words[s]), int(tgt_words[t])
        if ws != SPECIAL and wt != SPECIAL:
            out.add((ws, wt))
    return sorted(out)
