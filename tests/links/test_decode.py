import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from align.links.decode import DECODERS, decode, decode_argmax, decode_argmax_src, decode_intersect, decode_itermax

S = np.array(
    [
        [0.7, 0.2, 0.1],  # tgt 0 -> src 0
        [0.1, 0.3, 0.6],  # tgt 1 -> src 2
        [0.5, 0.4, 0.1],
    ]
)  # tgt 2 -> src 0


def test_argmax_by_hand():
    assert decode_argmax(S) == [(0, 0), (0, 2), (2, 1)]
    # per source column: src0 -> tgt0 (0.7), src1 -> tgt2 (0.4), src2 -> tgt1 (0.6)
    assert decode_argmax_src(S) == [(0, 0), (1, 2), (2, 1)]
    assert decode_intersect(S) == [(0, 0), (2, 1)]


def test_thresholds_by_hand():
    assert decode(S, "threshold", threshold=0.5) == [(0, 0), (0, 2), (2, 1)]
    # relative 0.75 of row max: row0 >= .525: src0; row1 >= .45: src2; row2 >= .375: src0, src1
    assert decode(S, "relative-threshold", ratio=0.75) == [(0, 0), (0, 2), (1, 2), (2, 1)]


def test_ties_go_to_lowest_index_and_empty():
    assert decode_argmax(np.ones((2, 3))) == [(0, 0), (0, 1)]
    assert decode_argmax(np.zeros((0, 3))) == [] and decode_itermax(np.zeros((2, 0))) == []


def test_registry_and_nan():
    with pytest.raises(ValueError, match="valid: argmax, argmax-src, intersect"):
        decode(S, "softmax")
    with pytest.raises(ValueError, match="NaN"):
        decode_argmax(np.array([[np.nan]]))
    assert set(DECODERS) >= {"argmax", "itermax"}


def test_itermax_adds_second_round():
    # Round 1 (argmax intersection): t0-s0, t1-s1, t2-s2; t3 and s3 stay unaligned.
    # Round 2 masks all but row t3 and column s3 (weight 0.9, 1.0 at their crossing):
    # row t3 -> [0, 0, .63, .1] picks s2; column s3 -> [.09, .18, .72, .1] picks t2;
    # t2's row in the masked matrix picks s3 and s2's column picks t3, so both (s2, t3) and
    # (s3, t2) are mutual argmaxes and are added.
    s = np.array([[0.9, 0.1, 0.0, 0.1], [0.1, 0.9, 0.0, 0.2], [0.0, 0.1, 0.9, 0.8], [0.0, 0.0, 0.7, 0.1]])
    assert decode_itermax(s) == [(0, 0), (1, 1), (2, 2), (2, 3), (3, 2)]
    # with every target word aligned after round 1, nothing more is added
    assert decode_itermax(s[:3]) == [(0, 0), (1, 1), (2, 2)]


def _simalign_reference(sim, max_count=2, alpha_ratio=0.9):
    # SimAlign's iter_max on a (src, tgt) similarity matrix, literally with np.eye/np.tile.
    m, n = sim.shape
    forward = np.eye(n)[sim.argmax(axis=1)]
    backward = np.eye(m)[sim.argmax(axis=0)]
    inter = forward * backward.transpose()
    if min(m, n) <= 2:
        return inter
    count = 1
    while count < max_count:
        mask_x = 1.0 - np.tile(inter.sum(1)[:, np.newaxis], (1, n)).clip(0.0, 1.0)
        mask_y = 1.0 - np.tile(inter.sum(0)[np.newaxis, :], (m, 1)).clip(0.0, 1.0)
        mask = ((alpha_ratio * mask_x) + (alpha_ratio * mask_y)).clip(0.0, 1.0)
        mask_zeros = 1.0 - ((1.0 - mask_x) * (1.0 - mask_y))
        if mask_x.sum() < 1.0 or mask_y.sum() < 1.0:
            mask *= 0.0
            mask_zeros *= 0.0
        new_sim = sim * mask
        fwd = np.eye(n)[new_sim.argmax(axis=1)] * mask_zeros
        bac = np.eye(m)[new_sim.argmax(axis=0)].transpose() * mask_zeros
        new_inter = fwd * bac
        if np.array_equal(inter + new_inter, inter):
            break
        inter = inter + new_inter
        count += 1
    return inter


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.integers(0, 2**31), st.integers(2, 4))
def test_itermax_matches_simalign(t, s, seed, rounds):
    scores = np.random.default_rng(seed).random((t, s))
    ref = _simalign_reference(scores.T, max_count=rounds)  # SimAlign's rows are source words
    src, tgt = np.nonzero(ref)
    assert decode_itermax(scores, max_count=rounds) == sorted(zip(src.tolist(), tgt.tolist()))
