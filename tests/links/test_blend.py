"""align.links.blend: the mean of row shares against hand values and a plain loop."""

import numpy as np
import pytest

from align.links.blend import blend_scores
from align.links.decode import row_shares


def test_mean_of_row_shares_by_hand():
    a = np.array([[1.0, 3.0], [0.0, 0.0]])
    b = np.array([[2.0, 2.0], [1.0, 1.0]])
    # shares a: [.25 .75], [0 0] (a zero row stays zero); b: [.5 .5], [.5 .5]
    # mean: [.375 .625], [.25 .25]
    np.testing.assert_allclose(blend_scores([a, b]), [[0.375, 0.625], [0.25, 0.25]])
    # negative scores (value zeroing, ALTI+ can give them) count as 0: [-1 1] -> shares [0 1]
    np.testing.assert_allclose(blend_scores([np.array([[-1.0, 1.0]]), np.array([[1.0, 1.0]])]), [[0.25, 0.75]])


def test_null_column_by_hand_and_consistent_with_the_plain_blend():
    a = np.array([[1.0, 1.0, 2.0]])  # shares with NULL [.25 .25 .5]; words alone [.5 .5]
    b = np.array([[3.0, 1.0, 0.0]])  # shares with NULL [.75 .25 0]; words alone [.75 .25]
    # NULL n = mean(.5, 0) = .25; words = mean([.5 .5], [.75 .25]) = [.625 .375], scaled by 1 - n = .75
    got = blend_scores([a, b], null=True)
    np.testing.assert_allclose(got, [[0.46875, 0.28125, 0.25]])
    rng = np.random.default_rng(0)
    mats = [rng.random((4, 6)) for _ in range(3)]
    np.testing.assert_allclose(
        row_shares(blend_scores(mats, null=True)[:, :-1]), blend_scores([m[:, :-1] for m in mats])
    )


def test_fast_equals_a_plain_loop():
    rng = np.random.default_rng(1)
    for _ in range(20):
        t, s, k = rng.integers(1, 6), rng.integers(1, 6), rng.integers(2, 4)
        mats = [rng.normal(size=(t, s)) for _ in range(k)]
        want = np.zeros((t, s))
        for m in mats:
            for i in range(t):
                row = [max(x, 0.0) for x in m[i]]
                total = sum(row)
                for j in range(s):
                    want[i, j] += (row[j] / total if total > 0 else 0.0) / k
        np.testing.assert_allclose(blend_scores(mats), want)


def test_bad_matrices():
    with pytest.raises(ValueError, match="two or more score matrices; got 1"):
        blend_scores([np.ones((2, 2))])
    with pytest.raises(ValueError, match="different shapes"):
        blend_scores([np.ones((2, 2)), np.ones((2, 3))])
