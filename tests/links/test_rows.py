import numpy as np
import pytest

from align.links.rows import select_rows, token_scores_to_links
from align.spec.alignspec import AlignSpec
from align.spec.setting import Setting


def test_select_rows_awo_awi():
    # 3 target tokens + EOS -> 4 decoder steps; AWO reads rows 0..2, AWI rows 1..3.
    steps = np.arange(8).reshape(4, 2)
    assert select_rows(steps, 3, "awo").tolist() == [[0, 1], [2, 3], [4, 5]]
    assert select_rows(steps, 3, "awi").tolist() == [[2, 3], [4, 5], [6, 7]]
    with pytest.raises(ValueError, match="valid: awo, awi"):
        select_rows(steps, 3, "shift")
    with pytest.raises(ValueError, match="cannot give awi rows"):
        select_rows(steps[:3], 3, "awi")


def test_levels_by_hand():
    # target tokens t0 t1 (one word), t2; source tokens s0 s1 (one word), s2, EOS.
    scores = np.array([[0.1, 0.1, 0.5, 0.3], [0.4, 0.1, 0.2, 0.3], [0.3, 0.3, 0.1, 0.3]])
    src = np.array([0, 0, 1, -1])
    tgt = np.array([0, 0, 1])
    # word: source sums -> [[.2, .5], [.5, .2], [.6, .1]]; target mean -> [[.35, .35], [.6, .1]]
    # tie in word 0's row goes to the lower index: links (0, 0), (0, 1)
    assert token_scores_to_links(scores, src, tgt) == [(0, 0), (0, 1)]
    # subword: argmax over the 3 real source tokens per target token: s2, s0, s0
    assert token_scores_to_links(scores, src, tgt, AlignSpec(level="subword")) == [(0, 1), (0, 2), (2, 0)]
    # word-any: subword links mapped to words: (1,0), (0,0), (0,1)
    assert token_scores_to_links(scores, src, tgt, AlignSpec(level="word-any")) == [(0, 0), (0, 1), (1, 0)]
    with pytest.raises(ValueError, match="valid: word, subword, word-any"):
        token_scores_to_links(scores, src, tgt, AlignSpec(level="char"))


def test_dump_file_name():
    assert Setting("norm", "awi", 3).file == "norm-awi-layer3.align"
    assert Setting("norm-head", "awo", 0, 2).file == "norm-head-awo-layer0-head2.align"


def test_specials_as_null():
    # target words w0, w1; source words v0, v1 and EOS. w1's mass is on EOS.
    scores = np.array([[0.6, 0.1, 0.3], [0.2, 0.3, 0.5]])
    src = np.array([0, 1, -1])
    tgt = np.array([0, 1])
    # drop: EOS removed, w1 -> v1 (0.3 > 0.2)
    assert token_scores_to_links(scores, src, tgt) == [(0, 0), (1, 1)]
    # null: w1's argmax is NULL (0.5): it stays unaligned
    assert token_scores_to_links(scores, src, tgt, AlignSpec(specials_policy="null")) == [(0, 0)]
    with pytest.raises(ValueError, match="valid: drop, null"):
        token_scores_to_links(scores, src, tgt, AlignSpec(specials_policy="keep"))
