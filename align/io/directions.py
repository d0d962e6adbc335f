"""The two directions of one corpus read together: a forward and a reverse file (links or soft scores), and
the sentence text when given, checked against each other before anything is combined (numpy only).

Each refusal names a file and, where it is one line's, the line: files of different line counts
(:class:`LineCountError`); a forward (T, S) score matrix whose reverse line is not (S, T); a reverse model's
own score file (lines marked ``"reverse": true``) given as the forward one; and, with the text (``src |||
tgt`` lines), a forward matrix that is not (target words, source words) of its sentence (the reverse's
shape is checked against the forward's) or a link outside its sentence.

Without the text, two files of the same line count can describe other sentences, and two stand-alone
score files (neither marked) given the wrong way round are each other's transpose: nothing in them proves
it, so only the text can (``align-symmetrize --text``).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..links.alignments import Alignments
from ..links.combine import DEFAULT_THRESHOLD, combine
from .errors import AlignmentFormatError, LineCountError
from .formats import format_links, read_alignments
from .lines import display_name, iter_line_chunks
from .softscores import iter_scores_meta
from .text import check_links_in_range, parse_text_pair


def iter_text_lengths(path: str) -> Iterator[tuple[int, int]]:
    """``(source words, target words)`` of each ``src ||| tgt`` line of ``path``, in order (streaming)."""
    name = display_name(path)
    for first, lines in iter_line_chunks(path):
        for i, line in enumerate(lines):
            src, tgt = parse_text_pair(line, name, first + i)
            yield len(src), len(tgt)


def read_link_pair(
    forward: str, reverse: str, reverse_target_first: bool = False, text: str | None = None
) -> tuple[Alignments, Alignments]:
    """The forward and reverse Pharaoh link files of one corpus (``reverse_target_first``: the reverse file
    is written target first), source first, of the same line count; with ``text``, every link of both
    inside its sentence. LineCountError or LinkRangeError naming the file (and line)."""
    fwd = read_alignments(forward, "pharaoh")
    rev = read_alignments(reverse, "pharaoh", reverse=reverse_target_first)
    if text is not None:
        lengths = list(iter_text_lengths(text))
        src, tgt = [s for s, _ in lengths], [t for _, t in lengths]
        for path, al in ((forward, fwd), (reverse, rev)):
            if len(al) != len(lengths):
                raise LineCountError(
                    display_name(path), None, f"{len(al)} lines; expected {len(lengths)} as in the text {text}"
                )
            check_links_in_range(al, src, tgt, display_name(path))
    if len(fwd) != len(rev):
        raise LineCountError(
            display_name(reverse), None, f"{len(rev)} lines; expected {len(fwd)} as in {display_name(forward)}"
        )
    return fwd, rev


def _check_text_shape(m: np.ndarray, lengths: tuple[int, int] | None, path: str, k: int, text: str) -> None:
    if lengths is None:
        raise LineCountError(path, None, f"more than {k - 1} lines; expected {k - 1} as in the text {text}")
    s, t = lengths
    if m.shape != (t, s):
        turned = (
            " (the shape turned round: a reverse model's matrix, or the two files given the wrong way round?)"
            if m.shape == (s, t)
            else " (files of an align-extract --truncate run hold only the words the model kept: give them "
            "without --text)"
            if m.shape[0] <= t and m.shape[1] <= s
            else ""
        )
        raise AlignmentFormatError(
            path,
            k,
            f"a {m.shape[0]}x{m.shape[1]} (tgt x src) matrix; expected {t}x{s}, the word counts of "
            f"sentence {k} in the text {text}{turned}",
        )


def iter_score_pairs(forward: str, reverse: str, text: str | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(forward (T, S), reverse (S, T))`` of each line of a forward and a reverse soft-score file read in
    lockstep (see the module docstring for what is checked; errors name file and line)."""
    fname, rname = display_name(forward), display_name(reverse)
    tname = display_name(text) if text is not None else ""
    rev = (m for m, _ in iter_scores_meta(reverse))
    lengths = iter_text_lengths(text) if text is not None else None
    fwd, k = iter_scores_meta(forward), 0
    for k, (f, marked) in enumerate(fwd, 1):
        if marked:  # a reverse model's file given first: its (S, T) would be read as (T, S)
            raise AlignmentFormatError(
                fname,
                k,
                "a reverse model's matrix (\"reverse\": true); expected the forward model's file first and "
                "the reverse model's second",
            )
        if lengths is not None:
            _check_text_shape(f, next(lengths, None), fname, k, tname)
        r = next(rev, None)
        if r is None:
            n_fwd = k + sum(1 for _ in fwd)
            raise LineCountError(rname, None, f"{k - 1} lines; expected {n_fwd} as in {fname}")
        if r.shape != f.shape[::-1]:
            raise AlignmentFormatError(
                rname,
                k,
                f"a {r.shape[0]}x{r.shape[1]} matrix; expected {f.shape[1]}x{f.shape[0]} (src x tgt): the "
                f"{f.shape[0]}x{f.shape[1]} (tgt x src) of {fname}:{k} turned round",
            )
        yield f, r
    if lengths is not None and next(lengths, None) is not None:
        n_text = k + 1 + sum(1 for _ in lengths)
        raise LineCountError(fname, None, f"{k} lines; expected {n_text} as in the text {tname}")
    if next(rev, None) is not None:
        n_rev = k + 1 + sum(1 for _ in rev)
        raise LineCountError(rname, None, f"{n_rev} lines; expected {k} as in {fname}")


def combine_score_files(
    method: str, forward: str, reverse: str, threshold: float = DEFAULT_THRESHOLD, text: str | None = None
) -> list[str]:
    """Pharaoh lines (no newline) of ``method`` (any name of :mod:`align.links.combine`) on a forward (T, S)
    and a reverse (S, T) soft-score file (and ``text``, checked: :func:`iter_score_pairs`)."""
    return [
        format_links(combine(method, f, r, threshold=threshold)) for f, r in iter_score_pairs(forward, reverse, text)
    ]
