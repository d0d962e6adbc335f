"""align.confidence.calibration: cell and sentence features by hand, the logistic fit at its optimum, files, checks."""

import json
import math

import numpy as np
import pytest

from align.confidence import calibration as C

SETTING = {
    "method": "norm",
    "layer": 0,
    "shift": "awi",
    "level": "word",
    "heads": "all",
    "src_reduce": "sum",
    "tgt_reduce": "mean",
}
"""A whole setting, as align-calibrate records it (a file must hold every field)."""


def test_cell_features_by_hand():
    # m = [[3, 1], [0, 2]], NULL mass [1, 0]: row sums 4, 2; column sums 3, 3; row maxima 3, 2; column maxima 3, 2
    f = C.cell_features(np.array([[3.0, 1.0], [0.0, 2.0]]), np.array([1.0, 0.0]))
    assert f.shape == (4, len(C.CELL_FEATURES))
    col = {name: f[:, i] for i, name in enumerate(C.CELL_FEATURES)}
    np.testing.assert_allclose(col["row_share"], [0.75, 0.25, 0.0, 1.0])
    np.testing.assert_allclose(col["col_share"], [1.0, 1 / 3, 0.0, 2 / 3])
    np.testing.assert_allclose(col["row_ratio"], [1.0, 1 / 3, 0.0, 1.0])
    np.testing.assert_allclose(col["col_ratio"], [1.0, 0.5, 0.0, 1.0])
    np.testing.assert_array_equal(col["row_argmax"], [1, 0, 0, 1])
    np.testing.assert_array_equal(col["both_argmax"], [1, 0, 0, 1])
    np.testing.assert_allclose(col["log_row_vs_uniform"], np.log([1.5 + 1e-4, 0.5 + 1e-4, 1e-4, 2 + 1e-4]))
    np.testing.assert_allclose(col["log_src_len"], math.log(2))
    np.testing.assert_allclose(col["null_share"], [0.2, 0.2, 0.0, 0.0])  # 1 / (4 + 1), 0 / (2 + 0)


def test_a_row_of_zeros_has_no_argmax_and_negative_scores_count_as_zero():
    f = C.cell_features(np.array([[0.0, 0.0], [-1.0, 2.0]]))
    col = {name: f[:, i] for i, name in enumerate(C.CELL_FEATURES)}
    np.testing.assert_array_equal(col["row_argmax"], [0, 0, 0, 1])
    np.testing.assert_allclose(col["row_share"], [0, 0, 0, 1])
    assert C.cell_features(np.zeros((0, 3))).shape == (0, len(C.CELL_FEATURES))


def test_sentence_features_by_hand():
    # p = [[0.9, 0.1], [0.2, 0.6], [0.0, 0.3]]: row maxima 0.9, 0.6, 0.3 (mean 0.6); column maxima 0.9, 0.6 (0.75)
    f = dict(zip(C.SENTENCE_FEATURES, C.sentence_features(np.array([[0.9, 0.1], [0.2, 0.6], [0.0, 0.3]]))))
    assert f["tgt_coverage"] == pytest.approx(0.6) and f["src_coverage"] == pytest.approx(0.75)
    assert f["coverage_hmean"] == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert f["links_per_tgt_word"] == pytest.approx(2.1 / 3) and f["links_per_src_word"] == pytest.approx(2.1 / 2)
    assert f["log_length_ratio"] == pytest.approx(math.log(3 / 2)) and f["abs_log_length_ratio"] > 0


def test_logistic_fit_is_at_its_optimum():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 3))
    x = np.c_[x, x[:, 0] + 1e-3 * rng.normal(size=2000)]  # a nearly collinear column, as the cell features have
    y = (rng.random(2000) < 1 / (1 + np.exp(-(0.5 + 2 * x[:, 0] - x[:, 1])))).astype(float)
    model = C.fit_logistic(x, y, ("a", "b", "c", "d"), l2=1e-2)
    z = np.c_[np.ones(len(x)), (x - model.mean) / model.scale]
    p = model.predict(x)
    grad = z.T @ (p - y) + np.r_[0.0, 1e-2 * model.weights[1:]]
    assert np.abs(grad).max() < 1e-6  # the penalized score equations hold
    assert p.mean() == pytest.approx(y.mean(), abs=1e-9)  # the unpenalized intercept: mean prediction = rate


def test_corruptions():
    pairs = [(["a"], ["x", "y"]), (["b"], ["z"]), (["c"], ["u", "v", "w"])]
    shuffled = C.corrupt(pairs, "shuffled")
    assert all(t != pairs[i][1] for i, (_, t) in enumerate(shuffled)) and sorted(
        map(tuple, (t for _, t in shuffled))
    ) == sorted(tuple(t) for _, t in pairs)
    assert C.corrupt(pairs, "truncated") == [(["a"], ["x"]), (["b"], ["z"]), (["c"], ["u"])]
    appended = C.corrupt(pairs, "appended")
    assert all(t[: len(pairs[i][1])] == pairs[i][1] and len(t) > len(pairs[i][1]) for i, (_, t) in enumerate(appended))
    with pytest.raises(ValueError, match="valid: shuffled, truncated, appended"):
        C.corrupt(pairs, "reversed")


def _toy_fit(n=40, model=None):
    rng = np.random.default_rng(1)
    mats, cells = [], []
    for _ in range(n):
        t, s = rng.integers(2, 6, size=2)
        gold = np.zeros((t, s))
        gold[np.arange(t), rng.integers(0, s, size=t)] = 1
        mats.append((gold * 3 + rng.random((t, s)), rng.random(t)))
        cells.append(gold)
    negatives = [C.ScoredPair((rng.random(m.shape), rng.random(m.shape[0]))) for m, _ in mats]
    return C.fit_calibration(mats, cells, negatives, model or {"sha256": "abc"}, SETTING, {"gold": "toy"})


def test_fit_round_trip_and_checks(tmp_path):
    cal = _toy_fit()
    path = tmp_path / "cal.json"
    C.write_calibration(path, cal)
    back = C.read_calibration(str(path))
    m = np.array([[3.5, 0.2], [0.1, 3.2]])
    np.testing.assert_allclose(back.probabilities(m, np.zeros(2)), cal.probabilities(m, np.zeros(2)))
    assert 0 <= back.sentence_score(back.probabilities(m)) <= 1 and back.fitted_on["sentences"] == 40
    back.check({"sha256": "abc", "path": "elsewhere"}, SETTING)
    back.check({"sha256": "abc", "requested": "main"}, SETTING)  # how the model was asked for: not what it is
    with pytest.raises(C.CalibrationError, match="fitted on model sha256='abc'; this run has sha256='def'"):
        back.check({"sha256": "def"}, SETTING)
    with pytest.raises(C.CalibrationError, match="fitted on setting layer=0; this run has layer=1"):
        back.check({"sha256": "abc"}, {**SETTING, "layer": 1})


def test_sentence_features_compute_the_score_once_and_the_same():
    # sentence_features gives sentence_score's value (bit for bit: the same features, taken from the dict it
    # returns) and the features by name; every=False computes only the score's own; an empty side gives (0, {})
    cal = _toy_fit()
    p = cal.probabilities(np.array([[3.5, 0.2, 0.1], [0.1, 3.2, 0.3]]), np.zeros(2))
    score, feats = cal.sentence_features(p, ["a", "b", "c"], ["x", "y"])
    assert score == cal.sentence_score(p, ["a", "b", "c"], ["x", "y"])
    assert set(cal.sentence.features) <= set(feats) and feats["log_length_ratio"] == round(np.log(2 / 3), 6)
    assert cal.sentence_features(p, every=False) == (score, {})
    assert cal.sentence_features(np.zeros((0, 3))) == (0.0, {})


def test_too_few_links_says_how_many_are_needed():
    with pytest.raises(C.CalibrationError, match=r"3 sentences .* needs at least 10 sentences, 50 gold links"):
        C.fit_calibration([(np.ones((2, 2)), None)] * 3, [np.eye(2)] * 3, [], {}, {}, {})


@pytest.mark.parametrize(
    "text,message",
    [
        ("{", r"not JSON \(Expecting property name enclosed in double quotes at line 1 column 2\)"),
        ('{"format": "other"}', 'format: found "other"; expected "norm-align/calibration"'),
        (
            '{"format": "norm-align/calibration", "version": 1, "model": {}, "setting": {}, "cells": '
            '{"features": ["x"]}, "sentence": {}, "fitted_on": {}, "measured": {}}',
            r'cells.features: found a list of 1: \["x"\]; expected the 12 cell features',
        ),
    ],
)
def test_bad_calibration_files(tmp_path, text, message):
    p = tmp_path / "c.json"
    p.write_text(text)
    with pytest.raises(C.CalibrationError, match=message) as e:
        C.read_calibration(str(p))
    assert str(p) in str(e.value)


def test_absolute_soft_scores_keep_the_probability():
    from align.io.softscores import decode_scores, encode_scores

    line = encode_scores(np.array([[0.5, 1.0, 0.0]]), absolute=True)
    assert json.loads(line)["scale"] == "absolute"
    np.testing.assert_array_equal(decode_scores(line, "x", 1), [[128, 255, 0]])  # rint(127.5) = 128 (ties to even)


def test_bidirectional_calibration_reads_both_directions(tmp_path):
    rng = np.random.default_rng(2)
    mats, cells = [], []
    for _ in range(30):
        t, s = rng.integers(2, 6, size=2)
        gold = np.zeros((t, s))
        gold[np.arange(t), rng.integers(0, s, size=t)] = 1
        # the forward model sees half the gold links, the reverse model (its matrix is (S, T)) the other half
        seen = rng.random((t, s)) < 0.5
        fwd, rev = gold * seen * 3 + rng.random((t, s)), (gold * ~seen * 3 + rng.random((t, s))).T
        mats.append((fwd, rng.random(t), rev, rng.random(s)))
        cells.append(gold)
    noisy = [C.ScoredPair((rng.random(m[0].shape), m[1], rng.random(m[2].shape), m[3])) for m in mats]
    cal = C.fit_calibration(mats, cells, noisy, {"sha256": "f"}, {**SETTING, "reverse_model": {"sha256": "r"}}, {})
    assert cal.bidirectional and cal.cells.features == C.CELL_FEATURES + C.REVERSE_FEATURES
    one = C.fit_calibration([m[:2] for m in mats], cells, [C.ScoredPair(p.matrices[:2]) for p in noisy], {}, {}, {})
    ll = [
        np.mean(np.log(np.where(g.ravel() > 0, p, 1 - p)))
        for p, g in (
            (np.concatenate([c.probabilities(*m).ravel() for m in ms]), np.concatenate([g.ravel() for g in cells]))
            for c, ms in ((cal, mats), (one, [m[:2] for m in mats]))
        )
    ]
    assert ll[0] > ll[1] + 0.1  # the reverse scores carry the links the forward ones miss
    C.write_calibration(tmp_path / "b.json", cal)
    back = C.read_calibration(str(tmp_path / "b.json"))
    np.testing.assert_allclose(back.probabilities(*mats[0]), cal.probabilities(*mats[0]))
    with pytest.raises(C.CalibrationError, match="needs the reverse model's scores"):
        back.probabilities(*mats[0][:2])
    with pytest.raises(C.CalibrationError, match=r"reverse scores of shape \(2, 3\); expected"):
        C.pair_features(np.ones((2, 3)), None, np.ones((2, 3)), None)


def test_features_that_are_not_a_list_are_one_error(tmp_path):
    cal = _toy_fit()
    d = json.loads(cal.to_json())
    d["cells"]["features"] = None
    p = tmp_path / "c.json"
    p.write_text(json.dumps(d))
    with pytest.raises(C.CalibrationError, match="cells.features: found null; expected a list of feature names"):
        C.read_calibration(str(p))


def test_length_balanced_fit_learns_nothing_from_length_alone():
    # the only feature is the length; translations mostly long, noise mostly short: unbalanced, length decides;
    # balanced per bin, every length has both classes at equal weight and the optimum weight is 0
    pos_len = np.array([2] * 10 + [20] * 40)
    neg_len = np.array([2] * 40 + [20] * 10)
    x_pos, x_neg = np.log(pos_len)[:, None].astype(float), np.log(neg_len)[:, None].astype(float)
    plain = C.fit_sentence_model(x_pos, x_neg, ["log_src_words"])
    balanced = C.fit_sentence_model(x_pos, x_neg, ["log_src_words"], lengths=(pos_len, neg_len))
    assert abs(plain.weights[1]) > 0.5
    assert abs(balanced.weights[1]) < 1e-6
