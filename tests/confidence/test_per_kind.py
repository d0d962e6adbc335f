"""align.confidence.per_kind: one detector per kind of noise, the lowest log-odds scaled to a probability; and its
place in a calibration file (version 3)."""

import json
import os

import numpy as np
import pytest

from align.confidence import calibration as C
from align.confidence.per_kind import LOWEST, fit_per_kind
from eval.metrics import roc_auc

SETTING = {"method": "norm", "layer": 0, "shift": "awi", "level": "word", "heads": "all", "src_reduce": "sum",
           "tgt_reduce": "mean"}  # fmt: skip


def _toy(seed: int = 0, n: int = 400) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Translations around (0, 0); kind a: the first feature 4 higher; kind b: the second 4 higher, the first 1.5
    lower."""
    rng = np.random.default_rng(seed)
    pos = rng.normal(size=(n, 2))
    return pos, {"a": rng.normal(size=(n, 2)) + [4.0, 0.0], "b": rng.normal(size=(n, 2)) + [-1.5, 4.0]}


def test_the_lowest_log_odds_is_the_least_likely_detectors():
    pos, neg = _toy()
    m = fit_per_kind(pos, neg, ("x", "y"))
    x = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [-3.0, -3.0]])
    by_hand = np.array([[d.weights[0] + ((r - d.mean) / d.scale) @ d.weights[1:] for d in m.detectors] for r in x])
    np.testing.assert_allclose(m.lowest(x), by_hand.min(1))
    assert m.kinds == ("a", "b") and m.combine.features == (LOWEST,) and m.combine.weights[1] > 0
    p = m.predict(x)
    # (0, 0) is a translation; (4, 0) is kind a; (0, 4) kind b's second feature
    assert p[0] > 0.9 and p[1] < 0.1 and p[2] < 0.1 and np.all((0 <= p) & (p <= 1))


def test_a_kind_never_fitted_on_is_caught_by_the_detector_of_the_kind_it_resembles():
    # kind c moves the first feature as a does, and the second down. One regression over a and b together weighs
    # both features about alike (a and b move them up by 4 and 4 - 1.5 on the sum): c's sum, 4 - 3 = 1, is near a
    # translation's 0. a's own detector reads the first feature alone, where c is 4 standard deviations out.
    pos, neg = _toy()
    rng = np.random.default_rng(1)
    test_pos, c = rng.normal(size=(400, 2)), rng.normal(size=(400, 2)) + [4.0, -3.0]
    per_kind = fit_per_kind(pos, neg, ("x", "y"))
    one = C.fit_sentence_model(pos, np.vstack(list(neg.values())), ("x", "y"))
    assert roc_auc(per_kind.predict(test_pos), per_kind.predict(c)) > 0.97
    assert roc_auc(one.predict(test_pos), one.predict(c)) < 0.8


def test_kinds_without_pairs_are_left_out_and_none_at_all_is_an_error():
    pos, neg = _toy()
    m = fit_per_kind(pos, {**neg, "c": np.zeros((0, 2))}, ("x", "y"))
    assert m.kinds == ("a", "b")
    with pytest.raises(ValueError, match="noisy pairs of 0 kinds"):
        fit_per_kind(pos, {"c": np.zeros((0, 2))}, ("x", "y"))
    with pytest.raises(ValueError, match="one length per noisy pair of every kind"):
        fit_per_kind(pos, neg, ("x", "y"), lengths=(np.full(len(pos), 5), {"a": np.full(len(neg["a"]), 5)}))


def _fitted() -> C.Calibration:
    """A calibration fitted on synthetic sentences with a per-kind sentence model over the link features."""
    rng = np.random.default_rng(3)
    mats, cells, negatives, kinds = [], [], [], []
    for _ in range(30):
        t, s = (int(x) for x in rng.integers(2, 6, size=2))
        gold = np.zeros((t, s))
        gold[np.arange(t), rng.integers(0, s, size=t)] = 1
        mats.append((gold * 2 + rng.random((t, s)), rng.random(t)))
        cells.append(gold)
        negatives += [C.ScoredPair((rng.random((t, s)), rng.random(t))), C.ScoredPair((rng.random((t, 1)), np.ones(t)))]
        kinds += ["misaligned", "short"]
    return C.fit_calibration(mats, cells, negatives, {"sha256": "f" * 64}, SETTING, {"gold": "toy"},
                             negative_kinds=kinds)  # fmt: skip


def test_a_per_kind_calibration_reads_back_as_it_was_written(tmp_path):
    cal = _fitted()
    path = str(tmp_path / "cal.json")
    C.write_calibration(path, cal)
    back = C.read_calibration(path)
    d = json.loads(open(path).read())
    assert d["version"] == 4 and [x["kind"] for x in d["sentence"]["detectors"]] == ["misaligned", "short"]
    probs = back.probabilities(np.eye(4) + 0.01, np.full(4, 0.1))
    assert back.sentence_score(probs) == cal.sentence_score(probs) and 0 < cal.sentence_score(probs) < 1


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda s: s["detectors"][0].update(kind="bogus"), 'sentence.detectors[0].kind: found "bogus"; expected a kind'),
        (lambda s: s["detectors"][1].update(kind="misaligned"), "sentence.detectors[1].kind: found \"misaligned\""),
        (lambda s: s["combine"]["weights"].__setitem__(1, -1.0), "sentence.combine.weights[1]: found -1.0; expected a "
         "positive weight"),
        (lambda s: s["detectors"][0]["weights"].pop(), "sentence.detectors[0].weights: found a list of 7"),
        (lambda s: s.update(detectors=[]), "sentence.detectors: found []; expected a non-empty list"),
        (lambda s: s["detectors"].__setitem__(0, "misaligned"), 'sentence.detectors[0]: found "misaligned"; expected '
         "a JSON object with the fields kind, mean, scale, weights"),
        (lambda s: s["detectors"][0].update(kind=["short"]), 'sentence.detectors[0].kind: found ["short"]; expected a '
         "kind of noise"),
        (lambda s: s["detectors"][0].update(features=s["features"]), "sentence.detectors[0].features: found a field "
         "the file's version does not have; expected only kind, mean, scale, weights"),
        (lambda s: s["detectors"][1].pop("kind"), "sentence.detectors[1].kind: found nothing; expected a kind"),
        (lambda s: s["features"].pop(), "sentence.features: found a list of 6:"),
        (lambda s: s["detectors"][0]["mean"].pop(), "sentence.detectors[0].mean: found a list of 6; expected a list of "
         "7 numbers (one per feature of sentence.features)"),
        (lambda s: s["combine"]["weights"].__setitem__(1, 1e-300), "sentence.combine.weights: found weights "
         "(intercept"),
        (lambda s: s["detectors"][1]["weights"][1:] == [0.0] * 7 or s["detectors"][1].update(weights=[1.0] + [0.0] * 7),
         "sentence.detectors[1].weights: found weights (intercept 1) that give every pair the same score (all others "
         "0)"),
    ],
)  # fmt: skip
def test_a_tampered_per_kind_model_is_refused_in_one_line(tmp_path, edit, message):
    d = json.loads(_fitted().to_json())
    edit(d["sentence"])
    path = os.path.join(tmp_path, "cal.json")
    with open(path, "w") as f:
        json.dump(d, f)
    with pytest.raises(C.CalibrationError) as e:
        C.read_calibration(path)
    assert str(e.value).startswith(f"{path}: {message}") and "\n" not in str(e.value)


def test_version_2_files_hold_one_regression_only(tmp_path):
    d = json.loads(_fitted().to_json())
    d["version"] = 2
    path = os.path.join(tmp_path, "cal.json")
    with open(path, "w") as f:
        json.dump(d, f)
    with pytest.raises(
        C.CalibrationError,
        match="sentence.detectors: found a per-kind sentence model; expected none in a version 2 file",
    ):
        C.read_calibration(path)


def test_detectors_only_of_the_kinds_it_was_fitted_on(tmp_path):
    d = json.loads(_fitted().to_json())
    d["fitted_on"]["noise"] = ["misaligned"]
    path = os.path.join(tmp_path, "cal.json")
    with open(path, "w") as f:
        json.dump(d, f)
    with pytest.raises(C.CalibrationError, match=r'fitted_on.noise: found \["misaligned"\]; expected every kind the '
                       "sentence model has a detector of \\(short missing\\)"):  # fmt: skip
        C.read_calibration(path)
