"""benchmarks/alignment_layer.py's corpus sample: seeded, in corpus order, bad lines left out, extra lines last."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def al():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import alignment_layer

    return alignment_layer


def test_the_sample_leaves_bad_lines_out_and_adds_the_gold_pairs_last(al, tmp_path):
    # 5 pairs: line 2 has an empty target, line 4 a zero-width space; all taken (n = 0): 3 written, 2 left out,
    # then the 2 extra lines (the gold's odd-numbered pairs in the test-halves protocol)
    (tmp_path / "c.en").write_text("a\nb\nc\nd\u200b\ne\n", encoding="utf-8")
    (tmp_path / "c.fr").write_text("A\n\nC\nD\nE\n", encoding="utf-8")
    out = tmp_path / "corpus.txt"
    n, left = al.sample_corpus(str(tmp_path / "c"), "en", "fr", 0, str(out), extra=["g1 ||| G1", "g3 ||| G3\n"])
    assert (n, left) == (5, 2)
    assert out.read_text(encoding="utf-8").splitlines() == ["a ||| A", "c ||| C", "e ||| E", "g1 ||| G1", "g3 ||| G3"]


def test_a_corpus_pair_equal_to_a_never_seen_gold_pair_is_left_out(al, tmp_path):
    (tmp_path / "c.en").write_text("The  House\nb\n", encoding="utf-8")
    (tmp_path / "c.fr").write_text("la chambre\nB\n", encoding="utf-8")
    out = tmp_path / "corpus.txt"
    n, left = al.sample_corpus(str(tmp_path / "c"), "en", "fr", 0, str(out), never=["the house ||| la Chambre"])
    assert (n, left) == (1, 1) and out.read_text(encoding="utf-8") == "b ||| B\n"
