import pytest
from hypothesis import given, settings, strategies as st

from align.links.alignments import Alignments
from align.links.symmetrize import SYMMETRIZERS, symmetrize, symmetrize_corpus


def _atools_reference(a_links, b_links, method):
    """Literal transliteration of fast_align's atools.cc (Array2D grids, loops in (i, j) order)."""

    def grid(links):
        w = max((i for i, _ in links), default=-1) + 1
        h = max((j for _, j in links), default=-1) + 1
        g = [[False] * h for _ in range(w)]
        for i, j in links:
            g[i][j] = True
        return g

    a, b = grid(a_links), grid(b_links)
    W = max(len(a), len(b))
    H = max((len(a[0]) if a else 0), (len(b[0]) if b else 0))

    def safe(g, i, j):
        return 0 <= i < len(g) and 0 <= j < (len(g[0]) if g else 0) and g[i][j]

    res = [[False] * H for _ in range(W)]
    if method in ("intersect", "union"):
        op = (lambda x, y: x and y) if method == "intersect" else (lambda x, y: x or y)
        return sorted((i, j) for i in range(W) for j in range(H) if op(safe(a, i, j), safe(b, i, j)))
    ia, ja = [False] * W, [False] * H

    def align(i, j):
        res[i][j] = True
        ia[i] = True
        ja[j] = True

    un = [[safe(a, i, j) or safe(b, i, j) for j in range(H)] for i in range(W)]
    for i in range(W):
        for j in range(H):
            if safe(a, i, j) and safe(b, i, j):
                align(i, j)
    nb = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1)]

    def koehn(i, j):
        return not (ia[i] and ja[j]) and any(safe(res, i + di, j + dj) for di, dj in nb)

    p = sorted((i, j) for i in range(W) for j in range(H) if un[i][j] and not res[i][j])
    keep = bool(p)
    while keep:
        keep = False
        added = []
        for i, j in p:
            if koehn(i, j):
                align(i, j)
                added.append((i, j))
                keep = True
        p = [x for x in p if x not in added]
    if method != "grow-diag":
        pred = (
            (lambda i, j: not (ia[i] and ja[j])) if method == "grow-diag-final" else (lambda i, j: not (ia[i] or ja[j]))
        )
        for g in (a, b):
            for i in range(len(g)):
                for j in range(len(g[0]) if g else 0):
                    if g[i][j] and not res[i][j] and pred(i, j):
                        align(i, j)
    return sorted((i, j) for i in range(W) for j in range(H) if res[i][j])


links = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=14)


@settings(max_examples=300, deadline=None)
@given(links, links, st.sampled_from(list(SYMMETRIZERS)))
def test_matches_atools_reference(f, r, method):
    assert symmetrize(f, r, method) == _atools_reference(f, r, method)


@settings(max_examples=200, deadline=None)
@given(links, links)
def test_symmetrization_laws(f, r):
    inter, uni = set(symmetrize(f, r, "intersect")), set(symmetrize(f, r, "union"))
    gd = set(symmetrize(f, r, "grow-diag"))
    gdf, gdfa = set(symmetrize(f, r, "grow-diag-final")), set(symmetrize(f, r, "grow-diag-final-and"))
    # -final and -final-and both extend grow-diag, but neither contains the other: their final
    # passes are greedy and order-dependent (f=[], r=[0-0 0-1 1-0 1-1] gives gdf {0-0 0-1 1-0},
    # gdfa {0-0 1-1}).
    assert inter <= gd <= gdfa <= uni
    assert gd <= gdf <= uni
    assert set(symmetrize(f, f, "grow-diag-final")) == set(f)


def test_grow_diag_by_hand():
    # forward: 0-0 1-1 2-1 ; reverse: 0-0 1-1 1-2
    # intersection {0-0, 1-1}; union adds 1-2 (tgt 2 unaligned, neighbour 1-1) and 2-1
    # (src 2 unaligned, neighbour 1-1): grow-diag keeps all 5.
    f, r = [(0, 0), (1, 1), (2, 1)], [(0, 0), (1, 1), (1, 2)]
    assert symmetrize(f, r, "grow-diag") == [(0, 0), (1, 1), (1, 2), (2, 1)]
    # a far link 5-5 in forward only has no neighbour: grow-diag drops it, -final adds it (both
    # words unaligned), -final-and adds it too.
    f2 = f + [(5, 5)]
    assert (5, 5) not in symmetrize(f2, r, "grow-diag")
    assert (5, 5) in symmetrize(f2, r, "grow-diag-final-and")
    # 3-1 in forward: src 3 unaligned but tgt 1 aligned: -final adds it, -final-and does not.
    f3 = f + [(4, 1)]
    assert (4, 1) in symmetrize(f3, r, "grow-diag-final")
    assert (4, 1) not in symmetrize(f3, r, "grow-diag-final-and")


def test_registry_and_corpus():
    with pytest.raises(ValueError, match="valid: intersect, union, grow-diag"):
        symmetrize([], [], "grow")
    fw = Alignments.from_lists([[(0, 0)], [(1, 1)]])
    rv = Alignments.from_lists([[(0, 0)], [(0, 1)]])
    assert symmetrize_corpus(fw, rv, "union").to_lists() == [[(0, 0)], [(0, 1), (1, 1)]]
    with pytest.raises(ValueError, match="2 sentences"):
        symmetrize_corpus(fw, Alignments.empty(1))
