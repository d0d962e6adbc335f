"""Symmetrization of a forward and a reverse alignment, with fast_align ``atools``' definitions.

Both inputs are 0-based ``(src, tgt)`` links of the same sentence, source first in both.
``grow-diag`` starts from the intersection and, in repeated passes over the union's remaining
links in ``(src, tgt)`` order, adds a link when one of its words is still unaligned and one of its
8 neighbours is already in the result (Koehn et al. 2003). ``-final`` then adds the forward's and
then the reverse's links whose source or target word is unaligned (``-final-and``: both unaligned).
Each link's test sees the links added before it in the same pass, as in atools.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .alignments import Alignments

Links = list[tuple[int, int]]
_NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1))


def intersect(forward: Iterable[tuple[int, int]], reverse: Iterable[tuple[int, int]]) -> Links:
    """Links in both alignments, sorted."""
    return sorted(set(forward) & set(reverse))


def union(forward: Iterable[tuple[int, int]], reverse: Iterable[tuple[int, int]]) -> Links:
    """Links in either alignment, sorted."""
    return sorted(set(forward) | set(reverse))


class _Grower:
    def __init__(self, forward: set[tuple[int, int]], reverse: set[tuple[int, int]]) -> None:
        self.res: set[tuple[int, int]] = set()
        self.src_aligned: set[int] = set()
        self.tgt_aligned: set[int] = set()
        for link in forward & reverse:
            self.add(link)

    def add(self, link: tuple[int, int]) -> None:
        self.res.add(link)
        self.src_aligned.add(link[0])
        self.tgt_aligned.add(link[1])

    def one_or_both_unaligned(self, i: int, j: int) -> bool:
        return i not in self.src_aligned or j not in self.tgt_aligned

    def neither_aligned(self, i: int, j: int) -> bool:
        return i not in self.src_aligned and j not in self.tgt_aligned

    def koehn(self, i: int, j: int) -> bool:
        return self.one_or_both_unaligned(i, j) and any((i + di, j + dj) in self.res for di, dj in _NEIGHBOURS)

    def grow_diag(self, candidates: set[tuple[int, int]]) -> None:
        pending = sorted(candidates - self.res)
        while pending:
            added = []
            for link in pending:
                if self.koehn(*link):
                    self.add(link)
                    added.append(link)
            if not added:
                break
            done = set(added)
            pending = [link for link in pending if link not in done]

    def final(self, adds: set[tuple[int, int]], pred: Callable[[int, int], bool]) -> None:
        for link in sorted(adds):
            if link not in self.res and pred(*link):
                self.add(link)


def _grow(forward: Iterable[tuple[int, int]], reverse: Iterable[tuple[int, int]], final: str | None) -> Links:
    """grow-diag, then (``final`` naming the _Grower predicate) the final step over forward, then reverse."""
    f, r = set(forward), set(reverse)
    g = _Grower(f, r)
    g.grow_diag(f | r)
    if final is not None:
        for links in (f, r):
            g.final(links, getattr(g, final))
    return sorted(g.res)


def grow_diag(forward: Iterable[tuple[int, int]], reverse: Iterable[tuple[int, int]]) -> Links:
    """atools ``grow-diag``."""
    return _grow(forward, reverse, None)


def grow_diag_final(forward: Iterable[tuple[int, int]], reverse: Iterable[tuple[int, int]]) -> Links:
    """atools ``grow-diag-final``: unaligned-word links of either direction added after growing."""
    return _grow(forward, reverse, "one_or_both_unaligned")


def grow_diag_final_and(forward: Iterable[tuple[int, int]], reverse: Iterable[tuple[int, int]]) -> Links:
    """atools ``grow-diag-final-and``: as grow-diag-final, but only links whose words are both unaligned."""
    return _grow(forward, reverse, "neither_aligned")


SYMMETRIZERS: dict[str, Callable[[Iterable[tuple[int, int]], Iterable[tuple[int, int]]], Links]] = {
    "intersect": intersect,
    "union": union,
    "grow-diag": grow_diag,
    "grow-diag-final": grow_diag_final,
    "grow-diag-final-and": grow_diag_final_and,
}


def symmetrize(
    forward: Iterable[tuple[int, int]], reverse: Iterable[tuple[int, int]], method: str = "grow-diag-final-and"
) -> Links:
    """Symmetrize one sentence's forward and reverse ``(src, tgt)`` links (see ``SYMMETRIZERS``)."""
    return _get(method)(forward, reverse)


def symmetrize_corpus(forward: Alignments, reverse: Alignments, method: str = "grow-diag-final-and") -> Alignments:
    """Symmetrize every sentence of two corpora of equal length (sure links only, as atools)."""
    fn = _get(method)
    if len(forward) != len(reverse):
        raise ValueError(f"forward has {len(forward)} sentences, reverse {len(reverse)}")
    return Alignments.from_lists([fn(forward.links(k), reverse.links(k)) for k in range(len(forward))])


def _get(method: str) -> Callable[[Iterable[tuple[int, int]], Iterable[tuple[int, int]]], Links]:
    try:
        return SYMMETRIZERS[method]
    except KeyError:
        raise ValueError(f"unknown symmetrization {method!r}; valid: {', '.join(SYMMETRIZERS)}") from None
