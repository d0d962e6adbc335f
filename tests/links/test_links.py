import numpy as np
import pytest

from align.links.alignments import Alignments


def test_from_lists_sorts_dedups_and_prefers_sure():
    al = Alignments.from_lists([[(2, 1), (0, 0), (2, 1)], []], [[(0, 0), (1, 1)], [(3, 3)]])
    assert al.links(0) == [(0, 0), (1, 1), (2, 1)]
    assert al.links(0, "sure") == [(0, 0), (2, 1)]  # (0, 0) given as sure and possible: sure
    assert al.links(0, "possible") == [(1, 1)]
    assert al.links(1, "possible") == [(3, 3)]
    assert list(al.offsets) == [0, 3, 4]


def test_reversed_and_select():
    al = Alignments.from_lists([[(0, 1)], [(2, 0), (1, 3)]])
    assert al.reversed().to_lists() == [[(1, 0)], [(0, 2), (3, 1)]]
    sel = al.select(np.array([1, 1, 0]))
    assert sel.to_lists() == [[(1, 3), (2, 0)], [(1, 3), (2, 0)], [(0, 1)]]


def test_bad_arguments():
    with pytest.raises(ValueError, match=">= 0"):
        Alignments.from_lists([[(-1, 0)]])
    with pytest.raises(ValueError, match="possible"):
        Alignments.from_lists([[]], [[], []])
    with pytest.raises(ValueError, match="invalid link selection|unknown link selection"):
        Alignments.from_lists([[]]).links(0, "maybe")


def test_keys_unique_across_sentences():
    al = Alignments.from_lists([[(0, 0)], [(0, 0)]])
    k = al.keys()
    assert len(set(k.tolist())) == 2 and np.all(np.diff(k) > 0)
