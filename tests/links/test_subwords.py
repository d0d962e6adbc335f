import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from align.links.subwords import (
    SPECIAL,
    WordMapError,
    aggregate_scores,
    check_word_map,
    subword_links_to_words,
    word_map,
    word_map_from_ids,
    word_map_sentencepiece,
    word_map_subword_nmt,
)


def test_sentencepiece_map():
    toks = ["\u2581Das", "\u2581stim", "mt", "\u2581", "(", "x", "</s>"]
    assert word_map_sentencepiece(toks, specials=["</s>"]).tolist() == [0, 1, 1, 2, 2, 2, SPECIAL]
    # a first token without the marker still opens word 0; '▁' inside a token is not a word start
    assert word_map_sentencepiece(["a\u2581b", "\u2581c"]).tolist() == [0, 1]


def test_subword_nmt_map():
    toks = ["stim@@", "mt", "nicht", "@@", "x", "</s>"]
    assert word_map_subword_nmt(toks, specials=["</s>"]).tolist() == [0, 0, 1, 2, 2, SPECIAL]
    with pytest.raises(WordMapError, match="never ends"):
        word_map_subword_nmt(["ab@@"])


def test_word_map_registry_and_ids():
    with pytest.raises(ValueError, match="valid: sentencepiece, subword-nmt"):
        word_map(["a"], "wordpiece")
    assert word_map_from_ids([0, 0, 1, -1]).tolist() == [0, 0, 1, -1]
    with pytest.raises(WordMapError):
        word_map_from_ids([0, 2])
    with pytest.raises(WordMapError):
        word_map_from_ids([1, 1])


def test_check_word_map_shows_both_sides():
    toks = ["\u2581a", "b", "\u2581c"]
    check_word_map(toks, word_map_sentencepiece(toks), ["ab", "c"])
    with pytest.raises(WordMapError, match=r"line 7: 3 subword tokens make 2 words but the text has 3") as e:
        check_word_map(toks, word_map_sentencepiece(toks), ["a", "b", "c"], sentence="line 7")
    assert "subwords: \u2581a b \u2581c" in str(e.value) and "words:    a b c" in str(e.value)


def test_aggregate_by_hand():
    # target tokens: [w0 w0 w1 EOS], source tokens: [v0 v1 v1 EOS]
    scores = np.array([[1.0, 2.0, 3.0, 9.0], [3.0, 4.0, 5.0, 9.0], [5.0, 6.0, 7.0, 9.0], [9.0, 9.0, 9.0, 9.0]])
    tgt = np.array([0, 0, 1, -1])
    src = np.array([0, 1, 1, -1])
    # sum over source pieces: rows -> [1, 5], [3, 9], [5, 13]; mean over target pieces: [2, 7], [5, 13]
    assert aggregate_scores(scores, src, tgt).tolist() == [[2.0, 7.0], [5.0, 13.0]]
    # max over both: [[3, 5], [5, 7]]
    assert aggregate_scores(scores, src, tgt, "max", "max").tolist() == [[3.0, 5.0], [5.0, 7.0]]
    with pytest.raises(ValueError, match="valid: sum, mean, max"):
        aggregate_scores(scores, src, tgt, "median")
    with pytest.raises(ValueError, match="do not fit"):
        aggregate_scores(scores[:3], src, tgt)


def _loop_aggregate(scores, src, tgt, sr, tr):
    red = {"sum": np.sum, "mean": np.mean, "max": np.max}
    ns, nt = max(src.max(initial=-1) + 1, 0), max(tgt.max(initial=-1) + 1, 0)
    out = np.zeros((nt, ns))
    for t in range(nt):
        for s in range(ns):
            rows = [r for r in range(len(tgt)) if tgt[r] == t]
            per_row = [red[sr]([scores[r, c] for c in range(len(src)) if src[c] == s]) for r in rows]
            out[t, s] = red[tr](per_row)
    return out


def _word_ids(draw_counts):
    ids = []
    for w, c in enumerate(draw_counts):
        ids += [w] * c
    return np.array(ids, dtype=np.int64)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=5),
    st.lists(st.integers(1, 3), min_size=1, max_size=5),
    st.sampled_from(["sum", "mean", "max"]),
    st.sampled_from(["sum", "mean", "max"]),
    st.integers(0, 2**31),
)
def test_aggregate_matches_loop(sc, tc, sr, tr, seed):
    src, tgt = _word_ids(sc), _word_ids(tc)
    src = np.r_[src, SPECIAL]
    scores = np.random.default_rng(seed).random((len(tgt), len(src)))
    np.testing.assert_allclose(aggregate_scores(scores, src, tgt, sr, tr), _loop_aggregate(scores, src, tgt, sr, tr))


def test_subword_links_any_pair_rule():
    src = np.array([0, 0, 1, -1])
    tgt = np.array([0, 1, 1])
    assert subword_links_to_words([(0, 0), (1, 0), (1, 2), (2, 1), (3, 2)], src, tgt) == [(0, 0), (0, 1), (1, 1)]


def test_aggregate_null_column_and_row():
    # source tokens: EOS first then v0 v0; target tokens: w0, EOS
    scores = np.array([[0.5, 0.2, 0.1], [0.9, 0.0, 0.3]])
    src = np.array([-1, 0, 0])
    tgt = np.array([0, -1])
    # columns: v0 = sum(.2,.1) = .3, NULL = .5 ; rows: w0, NULL
    np.testing.assert_allclose(aggregate_scores(scores, src, tgt, null=True), [[0.3, 0.5], [0.3, 0.9]])
