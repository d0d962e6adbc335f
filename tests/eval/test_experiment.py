"""eval.experiment: Holm's adjustment and the cross-validated setting choice, by hand."""

import numpy as np
import pytest

from eval.experiment import folds_of, held_out_choice, holm, subset
from eval.metrics import SentenceCounts, score_counts


def test_holm_by_hand():
    # m = 3: sorted raw 0.01, 0.02, 0.04 -> 3 * 0.01 = 0.03, max(0.03, 2 * 0.02) = 0.04,
    # max(0.04, 1 * 0.04) = 0.04; back in input order
    assert holm([0.04, 0.01, 0.02]) == [0.04, 0.03, 0.04]
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_folds_interleave():
    assert folds_of(5) == [[0, 2, 4], [1, 3]]
    assert folds_of(6, 3) == [[0, 3], [1, 4], [2, 5]]
    with pytest.raises(ValueError, match="2 <= k <= n"):
        folds_of(1)


def _counts(rows):
    """rows: per sentence (|A|, |S|, |A&S|, |A&P|)."""
    a = np.array(rows, dtype=np.int32)
    return SentenceCounts(a[:, 0], a[:, 1], a[:, 2], a[:, 3])


def test_held_out_choice_by_hand():
    # 4 sentences, each with 2 sure links (sure = possible); a sentence is either perfect
    # (2 links, both right: AER 0) or all wrong (2 links, none right: AER 1).
    good, bad = (2, 2, 2, 2), (2, 2, 0, 0)
    counts = {
        "layer0": _counts([good, bad, good, bad]),  # right on even sentences only
        "layer1": _counts([bad, good, bad, good]),
    }  # right on odd sentences only
    out = held_out_choice(counts, ["layer0", "layer1"], folds_of(4))
    # fold 0 (even sentences) is chosen on the odd ones: layer1 (AER 0 there), which fails on the even
    # ones (AER 100); fold 1 likewise picks layer0: every held-out sentence is wrong
    assert [f["chosen"] for f in out["folds"]] == ["layer1", "layer0"]
    assert [f["tune_aer"] for f in out["folds"]] == [0.0, 0.0]
    assert [f["test_aer"] for f in out["folds"]] == [100.0, 100.0]
    assert 100 * score_counts(out["pooled"]).aer == 100.0
    # while "best on all sentences" would have reported 50 for either layer
    assert 100 * score_counts(counts["layer0"]).aer == 50.0


def test_held_out_choice_pools_in_sentence_order_and_breaks_ties_by_order():
    c = _counts([(1, 1, 1, 1), (3, 2, 1, 2), (2, 1, 0, 1), (4, 4, 4, 4), (1, 2, 1, 1)])
    out = held_out_choice({"a": c, "b": c}, ["a", "b"], folds_of(5))
    assert [f["chosen"] for f in out["folds"]] == ["a", "a"]  # equal AER: the first candidate
    for f in ("hyp", "sure", "hyp_sure", "hyp_possible"):
        assert getattr(out["pooled"], f).tolist() == getattr(c, f).tolist()
    assert subset(c, [3, 0]).hyp.tolist() == [4, 1]
    with pytest.raises(ValueError, match="no candidate"):
        held_out_choice({}, [], folds_of(4))
