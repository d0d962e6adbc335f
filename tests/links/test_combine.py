import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from align.links.combine import (
    COMBINERS,
    SOFT_DECODERS,
    check_combination,
    combine,
    combine_links,
    combine_scores,
    reverse_decode,
)
from align.links.symmetrize import SYMMETRIZERS

# Forward (T=2 target words, S=3 source words) and the reverse model's (S=3, T=2) matrix.
F = np.array([[2.0, 1.0, 1.0], [0.0, 1.0, 3.0]])
R = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 3.0]])


def test_combine_scores_by_hand():
    # f = row shares of F: [[.5, .25, .25], [0, .25, .75]]
    # b = row shares of R, transposed: R shares [[1, 0], [.5, .5], [.25, .75]] -> b = [[1, .5, .25], [0, .5, .75]]
    f = np.array([[0.5, 0.25, 0.25], [0.0, 0.25, 0.75]])
    b = np.array([[1.0, 0.5, 0.25], [0.0, 0.5, 0.75]])
    np.testing.assert_allclose(combine_scores(F, R, "mean"), (f + b) / 2)
    # hmean: 2*.5*1/1.5 = 2/3; 2*.25*.5/.75 = 1/3; 2*.25*.25/.5 = .25; 0 (0/0 -> 0); 1/3; .75
    np.testing.assert_allclose(combine_scores(F, R, "hmean"), [[2 / 3, 1 / 3, 0.25], [0.0, 1 / 3, 0.75]])
    # gmean: sqrt(.5) = .7071; sqrt(.125) = .3536; .25; 0; .3536; .75
    np.testing.assert_allclose(combine_scores(F, R, "gmean"), [[0.5**0.5, 0.125**0.5, 0.25], [0.0, 0.125**0.5, 0.75]])


def test_soft_decoders_by_hand():
    # hmean [[.667, .333, .25], [0, .333, .75]]: >= .3 -> (0,0) (1,0) (1,1) (2,1) as (src, tgt)
    assert combine("hmean:threshold", F, R, threshold=0.3) == [(0, 0), (1, 0), (1, 1), (2, 1)]
    # row argmax: t0 -> s0, t1 -> s2; column argmax: s0 -> t0, s1 -> t0 (tie: lowest), s2 -> t1
    assert combine("hmean:intersect", F, R) == [(0, 0), (2, 1)]
    assert combine("hmean:argmax", F, R) == [(0, 0), (2, 1)]
    assert combine("mean:threshold", F, R, threshold=0.7) == [(0, 0), (2, 1)]


def test_hard_combination_decodes_each_direction():
    # forward argmax: t0 -> s0, t1 -> s2; reverse (rows = source words): s0 -> t0, s1 -> t0 (tie), s2 -> t1
    assert reverse_decode(R) == [(0, 0), (1, 0), (2, 1)]
    assert combine("intersect", F, R) == [(0, 0), (2, 1)]
    assert combine("union", F, R) == [(0, 0), (1, 0), (2, 1)]
    assert combine("grow-diag-final-and", F, R) == SYMMETRIZERS["grow-diag-final-and"](
        [(0, 0), (2, 1)], reverse_decode(R)
    )


def test_shapes_and_names_are_checked():
    with pytest.raises(ValueError, match="expected 3 x 2"):
        combine("hmean:threshold", F, R.T)
    with pytest.raises(ValueError, match="NaN"):
        combine("hmean:threshold", F, np.full((3, 2), np.nan))
    with pytest.raises(ValueError, match="valid: intersect, union"):
        check_combination("gdfa")
    with pytest.raises(ValueError, match="valid: hmean, gmean, mean"):
        check_combination("harmonic:threshold")
    with pytest.raises(ValueError, match="valid: threshold, intersect, itermax, argmax"):
        check_combination("hmean:grow")
    with pytest.raises(ValueError, match="not links"):
        combine_links("hmean:threshold", [], [])


def _plain_hmean(fwd, rev):
    """Cell by cell, as written in the docstring."""
    T, S = fwd.shape
    out = np.zeros((T, S))
    for t in range(T):
        for s in range(S):
            f = fwd[t, s] / fwd[t].sum() if fwd[t].sum() > 0 else 0.0
            b = rev[s, t] / rev[s].sum() if rev[s].sum() > 0 else 0.0
            out[t, s] = 2 * f * b / (f + b) if f + b > 0 else 0.0
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_hmean_against_plain_reference_and_symmetry(T, S, seed):
    rng = np.random.default_rng(seed)
    fwd, rev = rng.random((T, S)) * (rng.random((T, S)) > 0.3), rng.random((S, T))
    m = combine_scores(fwd, rev, "hmean")
    np.testing.assert_allclose(m, _plain_hmean(fwd, rev), atol=1e-12)
    # turning the pair round turns every combination round
    for c in COMBINERS:
        np.testing.assert_allclose(combine_scores(rev, fwd, c), combine_scores(fwd, rev, c).T, atol=1e-12)
    for d in SOFT_DECODERS:
        if d in ("intersect", "threshold"):
            a = combine(f"hmean:{d}", fwd, rev)
            b = combine(f"hmean:{d}", rev, fwd)
            assert a == sorted((s, t) for t, s in b)
