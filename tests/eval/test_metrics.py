import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from align.links.alignments import Alignments
from eval.metrics import (
    SentenceCounts,
    bootstrap_ci,
    count_matches,
    paired_bootstrap,
    rates,
    score_corpus,
    score_counts,
    score_sentences,
    score_totals,
)


def test_by_hand():
    # Sentence 0: S = {0-0, 1-1}, P = S + {2-2}; A = {0-0, 2-2, 3-3}
    # Sentence 1: S = {0-1}; A = {0-1}
    # |A| = 4, |S| = 3, |A&S| = 2, |A&P| = 3
    # precision = 3/4, recall = 2/3, AER = 1 - (2 + 3)/(4 + 3) = 2/7, F1 = 2*.75*(2/3)/(.75+2/3) = 12/17
    gold = Alignments.from_lists([[(0, 0), (1, 1)], [(0, 1)]], [[(2, 2)], []])
    hyp = Alignments.from_lists([[(0, 0), (2, 2), (3, 3)], [(0, 1)]])
    s = score_corpus(gold, hyp)
    assert s.precision == pytest.approx(3 / 4) and s.recall == pytest.approx(2 / 3)
    assert s.aer == pytest.approx(2 / 7) and s.f1 == pytest.approx(12 / 17)
    assert (s.links, s.sentences, s.sure, s.matched_sure, s.matched_possible) == (4, 2, 3, 2, 3)
    # per sentence: sent 0: P=2/3, R=1/2, AER = 1 - (1+2)/(3+2) = 0.4 ; sent 1: all 1 / AER 0
    per = score_sentences(gold, hyp)
    np.testing.assert_allclose(per[0], [0.4, 2 / 3, 0.5, 2 * (2 / 3) * 0.5 / (2 / 3 + 0.5)])
    np.testing.assert_allclose(per[1], [0, 1, 1, 1])


def test_empty_cases_are_defined():
    # nothing to align and nothing aligned: perfect
    np.testing.assert_allclose(rates(np.array([0, 0, 0, 0])), [0, 1, 1, 1])
    # empty hypothesis against a non-empty gold: AER 1, recall 0
    np.testing.assert_allclose(rates(np.array([0, 5, 0, 0])), [1, 1, 0, 0])
    # only possible gold links: recall 1, AER = 1 - precision
    np.testing.assert_allclose(rates(np.array([4, 0, 0, 2])), [0.5, 0.5, 1, 2 / 3])
    assert score_corpus(Alignments.empty(0), Alignments.empty(0)).aer == 0.0


def test_length_mismatch():
    with pytest.raises(ValueError, match="gold has 1 sentences but hypothesis has 2"):
        count_matches(Alignments.empty(1), Alignments.empty(2))


corpora = st.lists(
    st.tuples(
        st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=8),
        st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=5),
        st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=8),
    ),
    min_size=1,
    max_size=6,
)


def _loop_score(gold_s, gold_p, hyp):
    # lilt/alignment-scripts aer.py: sets per sentence, P includes S
    a = s = a_s = a_p = 0
    for S, P, A in zip(gold_s, gold_p, hyp):
        S, A = set(S), set(A)
        P = set(P) | S
        a, s, a_s, a_p = a + len(A), s + len(S), a_s + len(A & S), a_p + len(A & P)
    return a, s, a_s, a_p


@settings(max_examples=150, deadline=None)
@given(corpora)
def test_matches_plain_loop_and_properties(corpus):
    gs, gp, h = ([c[i] for c in corpus] for i in range(3))
    gold = Alignments.from_lists(gs, gp)
    hyp = Alignments.from_lists(h)
    counts = count_matches(gold, hyp)
    assert tuple(counts.totals().tolist()) == _loop_score(gs, gp, h)
    # exact match of the sure links gives AER 0
    assert score_corpus(gold, Alignments.from_lists(gs)).aer == pytest.approx(0.0)
    # reversing both sides leaves every score unchanged
    a, b = score_corpus(gold, hyp), score_corpus(gold.reversed(), hyp.reversed())
    assert (a.aer, a.precision, a.recall, a.f1) == pytest.approx((b.aer, b.precision, b.recall, b.f1))
    assert 0.0 <= a.aer <= 1.0


def test_bootstrap_ci_contains_point_and_is_reproducible():
    rng = np.random.default_rng(0)
    gold = Alignments.from_lists([[(i, i) for i in range(10)] for _ in range(200)])
    hyp = Alignments.from_lists([[(i, i if rng.random() < 0.8 else i + 1) for i in range(10)] for _ in range(200)])
    c = count_matches(gold, hyp)
    ci = bootstrap_ci(c, 500, seed=1)
    s = score_corpus(gold, hyp)
    assert ci["aer"][0] <= s.aer <= ci["aer"][1]
    assert ci["aer"][1] - ci["aer"][0] < 0.1
    assert bootstrap_ci(c, 500, seed=1) == ci


def test_paired_bootstrap_detects_a_clear_win_and_not_a_tie():
    gold = Alignments.from_lists([[(i, i) for i in range(10)] for _ in range(100)])
    good = Alignments.from_lists([[(i, i) for i in range(10)] for _ in range(100)])
    bad = Alignments.from_lists(
        [[(i, (i + 1) % 10) for i in range(10)] if k % 2 else [(i, i) for i in range(10)] for k in range(100)]
    )
    win = paired_bootstrap(count_matches(gold, bad), count_matches(gold, good), 300)
    assert win["p_value"] < 0.01 and win["delta"] < 0
    tie = paired_bootstrap(count_matches(gold, good), count_matches(gold, good), 300)
    assert tie["p_value"] == 1.0 and tie["p_one_sided"] == 1.0 and tie["delta"] == 0.0
    # a clear loss is as significant two-sided as a clear win; one-sided ("lower AER") it is not
    loss = paired_bootstrap(count_matches(gold, good), count_matches(gold, bad), 300)
    assert loss["delta"] > 0 and loss["delta_ci"][0] > 0
    assert loss["p_value"] < 0.01 and loss["p_one_sided"] == 1.0
    assert win["p_one_sided"] < 0.01


def test_paired_bootstrap_two_sided_p_by_hand():
    # 4 sentences of one gold link each; the baseline gets sentence 0 wrong, the system sentences 0 and
    # 1: observed AER 0.25 -> 0.5, delta +0.25. Resampled deltas are (#0 + #1 - #0) / 4 = #1 / 4 where
    # #1 counts draws of sentence 1 among 4 (Binomial(4, 1/4)); centred at the observed 0.25, |d - 0.25| >= 0.25 holds
    # for #1 = 0 or #1 >= 2: P = 0.75^4 + 1 - 0.75^4 - 4 * 0.25 * 0.75^3 = 1 - 0.421875 = 0.578125.
    gold = Alignments.from_lists([[(0, 0)]] * 4)
    base = Alignments.from_lists([[(0, 1)], [(0, 0)], [(0, 0)], [(0, 0)]])
    system = Alignments.from_lists([[(0, 1)], [(0, 1)], [(0, 0)], [(0, 0)]])
    t = paired_bootstrap(count_matches(gold, base), count_matches(gold, system), 20000, seed=3)
    assert t["delta"] == 0.25
    assert abs(t["p_value"] - 0.578) < 0.01


def test_block_counts_concatenate_to_the_corpus_counts():
    # the by-hand corpus of test_by_hand, counted in two blocks of one sentence each
    gold = Alignments.from_lists([[(0, 0), (1, 1)], [(0, 1)]], [[(2, 2)], []])
    hyp = Alignments.from_lists([[(0, 0), (2, 2), (3, 3)], [(0, 1)]])
    parts = [count_matches(gold.select([k]), hyp.select([k])) for k in range(2)]
    joined = SentenceCounts.concatenate(parts)
    whole = count_matches(gold, hyp)
    assert joined.stacked().tolist() == whole.stacked().tolist() == [[3, 1], [2, 1], [1, 1], [2, 1]]
    assert len(SentenceCounts.concatenate([])) == 0
    # |A| = 4, |S| = 3, |A&S| = 2, |A&P| = 3 over 2 sentences: AER 2/7, as test_by_hand
    s = score_totals(np.array([4, 3, 2, 3]), 2)
    assert s == score_counts(joined) and s.aer == pytest.approx(2 / 7) and s.sentences == 2


def test_calibration_error_and_reliability_by_hand():
    from eval.metrics import expected_calibration_error, reliability

    # bin 0: p 0.05, y 0 -> |0.05 - 0| = 0.05, weight 1/3; bin 9: p 0.95 (mean), y 0.5 -> 0.45, weight 2/3
    assert expected_calibration_error([0.05, 0.95, 0.95], [0, 1, 0]) == pytest.approx(0.05 / 3 + 0.45 * 2 / 3)
    bins = reliability([0.05, 0.95, 0.95], [0, 1, 0])
    assert bins[0]["count"] == 1 and bins[9]["positive_rate"] == 0.5 and bins[5]["mean_probability"] is None
    assert expected_calibration_error([1.0], [1]) == 0.0  # p = 1 falls in the last bin


def test_roc_auc_and_spearman_by_hand():
    from eval.metrics import roc_auc, spearman

    # pairs (3,1) (3,2) (2,1) win, (2,2) ties: 3.5 / 4
    assert roc_auc([3, 2], [1, 2]) == 0.875 and roc_auc([1], [2]) == 0.0
    # d = 0, 1, 1, 0: 1 - 6 * 2 / (4 * 15) = 0.8
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="at least one positive"):
        roc_auc([], [1])


def test_infinities_tie_and_nan_is_refused():
    from eval.metrics import roc_auc, spearman

    inf = float("inf")
    # equal infinities are a tie (one half), whichever list comes first: inf - inf is NaN, not "different"
    assert roc_auc([inf], [inf]) == 0.5 and roc_auc([-inf], [-inf]) == 0.5
    assert spearman([1, inf, inf], [1, 2, 3]) == pytest.approx(spearman([1, 2, 2], [1, 2, 3]))
    with pytest.raises(ValueError, match="1 NaN value"):
        roc_auc([float("nan")], [1.0])


def test_paired_bootstrap_cannot_decide_on_one_sentence_or_without_variance():
    gold = Alignments.from_lists([[(0, 0), (1, 1)]])
    a, b = Alignments.from_lists([[(0, 0), (1, 1)]]), Alignments.from_lists([[(0, 1)]])
    t = paired_bootstrap(count_matches(gold, a), count_matches(gold, b), 1000)
    assert t["p_value"] is None and t["p_one_sided"] is None and "1 sentence" in t["undecided"] and t["delta"] > 0
    # two copies of one sentence: every resample is the observed difference
    gold2, a2, b2 = (Alignments.from_lists([x.to_lists()[0]] * 2) for x in (gold, a, b))
    t = paired_bootstrap(count_matches(gold2, a2), count_matches(gold2, b2), 1000)
    assert t["p_value"] is None and "no variance" in t["undecided"]
    assert bootstrap_ci(count_matches(gold, a), 100) == {}  # no interval of zero width either
