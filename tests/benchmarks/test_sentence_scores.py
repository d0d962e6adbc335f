"""benchmarks/sentence_scores.py's leave-one-kind-out on hand-made feature rows: which halves it fits on."""

import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def ss():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import sentence_scores

    return sentence_scores


def rows(ss, n, shift, seed):
    """(n, k) rows of both variants: standard normal features, ``shift`` added, every pair 5 words a side."""
    rng = np.random.default_rng(seed)
    out = []
    for names in ss.ROWS:
        x = rng.normal(size=(n, len(names))) + shift
        for col in ("log_src_words", "log_tgt_words"):
            x[:, names.index(col)] = np.log(5)
        out.append(x)
    return out


def test_the_halves_protocol_fits_on_the_odd_half_only(ss):
    # features[h][t]: rows of half t as the calibration fitted on half h computes them. Under --protocol halves only
    # h = 0 (the odd-numbered sentences) is fitted on and measured on half 1: noise 3 standard deviations off is told
    # apart from clean pairs. Half 1's own fit (its rows with clean and noisy swapped) is never read: pooled with it
    # (x20's fits=(0, 1)), the figures fall
    good = {
        t: {"clean": rows(ss, 60, 0.0, t), "a": rows(ss, 60, 3.0, t + 2), "b": rows(ss, 60, 3.0, t + 4)} for t in (0, 1)
    }
    swapped = {0: good[0], 1: {"clean": good[1]["a"], "a": good[1]["clean"], "b": good[1]["clean"]}}
    auc = ss.leave_one_kind_out([good, swapped], ["a", "b"], fits=(0,))
    assert set(auc) == {"a", "b"}
    for kind in ("a", "b"):
        assert auc[kind]["score"] > 0.95 and auc[kind]["score_full"] > 0.95
    pooled = ss.leave_one_kind_out([good, swapped], ["a", "b"], fits=(0, 1))
    assert all(pooled[kind]["score"] < 0.9 for kind in ("a", "b"))


def test_the_family_column_fits_on_no_twin_of_the_measured_kind(ss):
    # short and truncated (one family, missing-words) lie 3 standard deviations above the clean pairs, replaced 3
    # below. Measuring short: leave-one-kind-out still fits on its twin truncated and tells it apart; the family
    # column fits on replaced alone, whose detector reads "above" as clean, so short ranks above the clean pairs
    half = {
        t: {"clean": rows(ss, 60, 0.0, t), "short": rows(ss, 60, 3.0, t + 2), "truncated": rows(ss, 60, 3.0, t + 4),
            "replaced": rows(ss, 60, -3.0, t + 6)}
        for t in (0, 1)
    }  # fmt: skip
    auc = ss.leave_one_kind_out([half, half], ["short", "truncated", "replaced"], fits=(0,))
    assert auc["short"]["score"] > 0.95 and auc["short"]["score_family"] < 0.1
    # replaced is its own family: the two columns fit on the same kinds
    assert auc["replaced"]["score_family"] == auc["replaced"]["score"]
