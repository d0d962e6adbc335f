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


def test_a_corpus_of_millions_of_sentences_keeps_every_link():
    # positions take the bits the largest needs (here 2), so 3 million sentence ids fit; packed in 21 bits a
    # position, sentence 2**20 on overflowed the int64 key and links of different sentences merged
    n = 3_000_000
    sent = np.array([0, n - 2, n - 1, n - 1])
    al = Alignments.from_arrays(sent, np.array([0, 1, 2, 3]), np.array([3, 2, 1, 0]), None, n)
    assert al.n_links == 4 and al.links(n - 1) == [(2, 1), (3, 0)] and al.links(n - 2) == [(1, 2)]
    from eval.metrics import score_corpus

    assert score_corpus(al, al).aer == 0.0


def test_keys_that_cannot_fit_an_int64_are_an_error():
    # 2**21 - 1 needs 21 bits a position: 42 bits, and 2**21 + 1 sentences need 22 more
    n = (1 << 21) + 1
    with pytest.raises(ValueError, match="more than an int64 holds; split the corpus"):
        Alignments.from_arrays(np.array([n - 1]), np.array([(1 << 21) - 1]), np.array([0]), None, n)
