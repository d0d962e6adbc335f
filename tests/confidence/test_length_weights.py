"""align.confidence.length_weights: the classes weighed the same per length bin, by hand."""

import numpy as np
import pytest

from align.confidence.calibration import ScoredPair
from align.confidence.length_weights import class_weights, length_weights, pair_lengths


def test_length_weights_by_hand():
    # 5 translations of 1 word and 5 of 10; noisy pairs: 5 of 1 word, 15 of 10 words. Bins: {1} holds 5 of each
    # class; every bin above it is merged into one (only 9-13 holds pairs). Half the examples: (10 + 20) / 2 = 15,
    # shared by the bins as the translations are (5 of 10 each: 7.5): translations 7.5 / 5 = 1.5 each in both;
    # noisy pairs 7.5 / 5 = 1.5 (1 word) and 7.5 / 15 = 0.5 (10 words).
    wp, wn = length_weights(np.array([1] * 5 + [10] * 5), np.array([1] * 5 + [10] * 15))
    np.testing.assert_allclose(wp, [1.5] * 10)
    np.testing.assert_allclose(wn, [1.5] * 5 + [0.5] * 15)


def test_length_weights_merge_small_bins_upward():
    # 2 translations of 1 word and 1 of 2 words are too few for a bin of their own: {1, 2, 3} merged with the
    # bins above until the group holds 5 of each class (at 4-5 words); 6 translations of 20 words close the list
    pos, neg = np.array([1, 1, 2, 4, 5, 20, 20, 20, 20, 20, 20]), np.array([1] * 5 + [20] * 5)
    wp, wn = length_weights(pos, neg)
    # two groups: {1..5 words} (5 translations, 5 noisy) and {6+} (6 translations, 5 noisy); half = 10.5
    # shares 10.5 * 5/11 and 10.5 * 6/11; translations 10.5/11 each; noisy 10.5/11 (short) and 10.5*6/55
    np.testing.assert_allclose(wp, [10.5 / 11] * 11)
    np.testing.assert_allclose(wn, [10.5 / 11] * 5 + [10.5 * 6 / 55] * 5)
    assert wp.sum() == pytest.approx(10.5) and wn.sum() == pytest.approx(10.5)


def test_class_weights_without_lengths_give_each_class_half():
    # 2 translations, 6 noisy pairs: 8 examples, each class sums to 4: translations 4 / 2 = 2, noisy 4 / 6 = 2/3
    np.testing.assert_allclose(class_weights(None, None, 2, 6), [2, 2] + [2 / 3] * 6)


def test_class_weights_with_lengths_are_length_weights_concatenated():
    pos, neg = np.array([1] * 5 + [10] * 5), np.array([1] * 5 + [10] * 15)
    np.testing.assert_allclose(class_weights(pos, neg, 10, 20), [1.5] * 10 + [1.5] * 5 + [0.5] * 15)


def test_pair_lengths_are_the_shorter_scored_side_and_skip_empty_ones():
    pairs = [ScoredPair((np.zeros((3, 5)), np.zeros(3))), ScoredPair((np.zeros((0, 4)), np.zeros(0))),
             ScoredPair((np.zeros((7, 2)), np.zeros(7)))]  # fmt: skip
    assert pair_lengths(pairs).tolist() == [3, 2]
