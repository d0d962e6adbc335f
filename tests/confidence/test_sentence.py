"""align.confidence.sentence: each feature by hand, the registry and what a feature needs."""

import math

import numpy as np
import pytest

from align.confidence import sentence as S

# A pair of 2 target words x 3 source words, its link probabilities:
PROBS = np.array([[0.8, 0.1, 0.0], [0.0, 0.2, 0.6]])
# forward log-probabilities of 3 target tokens and the end token; reverse of 4 source tokens and the end token
FWD = np.log(np.array([0.5, 0.25, 0.5, 0.125]))
REV = np.log(np.array([0.5, 0.5, 0.5, 0.25, 0.5]))
PAIR = S.PairEvidence(PROBS, ["the", "house", "2"], ["la", "2"], FWD, REV)


def f(name, e=PAIR):
    return S.FEATURES[name].compute(e)


def test_link_features_by_hand():
    # best link per target row: 0.8, 0.6 -> 0.7; per source column: 0.8, 0.2, 0.6 -> 1.6 / 3
    assert f("tgt_coverage") == pytest.approx(0.7)
    assert f("src_coverage") == pytest.approx(1.6 / 3)
    assert f("coverage_hmean") == pytest.approx(2 * 0.7 * (1.6 / 3) / (0.7 + 1.6 / 3))
    assert f("links_per_tgt_word") == pytest.approx(1.7 / 2) and f("links_per_src_word") == pytest.approx(1.7 / 3)
    assert f("log_length_ratio") == pytest.approx(math.log(2 / 3)) and f("abs_log_length_ratio") == pytest.approx(
        math.log(3 / 2)
    )
    # row 0: best source 0, |0.25 - 1/6| = 1/12, weight 0.8; row 1: best source 2, |0.75 - 5/6| = 1/12, weight 0.6
    assert f("diagonal_distance") == pytest.approx(1 / 12)


def test_word_features_by_hand():
    assert f("log_src_words") == pytest.approx(math.log(3)) and f("log_tgt_words") == pytest.approx(math.log(2))
    assert f("copied") == 0.5  # "2" is on both sides, "la" is not
    assert f("copied", S.PairEvidence(PROBS, ["The", "House"], ["the", "house"])) == 1.0  # lowercased


def test_model_features_by_hand():
    # forward cross-entropies: ln 2, ln 4, ln 2, ln 8 = (1, 2, 1, 3) ln 2
    ln2 = math.log(2)
    assert f("fwd_ce") == pytest.approx(7 / 4 * ln2)
    assert f("fwd_ce_worst") == pytest.approx(3 * ln2) and f("fwd_ce_end") == pytest.approx(3 * ln2)
    assert f("fwd_ce_top3") == pytest.approx(2 * ln2)  # 3, 2 and 1 (ln 2)
    assert f("fwd_ce_tail") == pytest.approx(ln2 * ((2 + 1) / 2 - 1))  # tokens (1 | 2, 1), the end apart
    # reverse: (1, 1, 1, 2, 1) ln 2
    assert f("rev_ce") == pytest.approx(6 / 5 * ln2) and f("rev_ce_end") == pytest.approx(ln2)
    assert f("rev_ce_worst") == pytest.approx(2 * ln2) and f("rev_ce_tail") == pytest.approx(ln2 * (1.5 - 1))
    assert f("ce_gap") == pytest.approx((7 / 4 - 6 / 5) * ln2)
    # Junczys-Dowmunt (2018): |H_f - H_r| + (H_f + H_r) / 2
    assert f("dcce") == pytest.approx((7 / 4 - 6 / 5) * ln2 + (7 / 4 + 6 / 5) / 2 * ln2)


def test_feature_lists_are_registered_and_say_what_they_need():
    assert set(S.BOTH_FEATURES) <= set(S.FEATURES) and S.FORWARD_FEATURES[: len(S.LINK_FEATURES)] == S.LINK_FEATURES
    assert S.needs_of(S.LINK_FEATURES) == {"links"}
    assert "reverse" not in S.needs_of(S.FORWARD_FEATURES) and "reverse" in S.needs_of(S.BOTH_FEATURES)
    x = S.feature_vector(PAIR, S.BOTH_FEATURES)
    assert x.shape == (len(S.BOTH_FEATURES),) and x[S.BOTH_FEATURES.index("copied")] == 0.5


def test_every_feature_list_is_computed_the_same_one_by_one_or_all_at_once():
    # Calibration.sentence_features takes the score's features from available_features' dict; sentence_score from
    # feature_vector: the two must agree bit for bit, for every list a calibration may have, on random pairs
    rng = np.random.default_rng(3)
    for _ in range(50):
        t, s = rng.integers(1, 7, size=2)
        words = (["w"] * int(s), ["x"] * int(t))
        e = S.PairEvidence(rng.random((t, s)), *words, np.log(rng.random(t + 2)), np.log(rng.random(s + 2)))
        got = S.available_features(e)
        for names in S.SENTENCE_CHOICES:
            np.testing.assert_array_equal(S.feature_vector(e, names), np.array([got[n] for n in names]))
    assert S.sentence_choices(False) == (
        S.LINK_FEATURES, S.FORWARD_FEATURES, S.COMPACT_FORWARD_FEATURES, S.PER_KIND_FORWARD_FEATURES
    )  # fmt: skip
    assert set(S.sentence_choices(True)) == set(S.SENTENCE_CHOICES)


def test_unknown_feature_and_missing_evidence_are_errors():
    with pytest.raises(ValueError, match="unknown sentence feature 'nope'; valid: tgt_coverage, "):
        S.needs_of(["nope"])
    with pytest.raises(ValueError, match="need 'reverse', which this pair does not carry"):
        S.feature_vector(S.PairEvidence(PROBS, ["a"], ["b"], FWD, None), S.BOTH_FEATURES)
    with pytest.raises(ValueError, match="valid needs: links, words, forward, reverse"):
        S.register("x", "a feature", "links gpu")
    with pytest.raises(ValueError, match="already"):
        S.register("dcce", "again", "forward")(lambda e: 0.0)
