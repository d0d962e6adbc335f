"""align.confidence.schema: a calibration file is read whole and as the schema says, or refused in one line
``FILE: FIELD: found X; expected Y``; a table of the tampered files seen, then random mutations of fitted ones."""

import copy
import functools
import json
import math
import os
import re
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

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


@functools.cache
def fitted(bidirectional: bool, per_kind: bool = False) -> str:
    """A calibration file's text, fitted on synthetic sentences (bidirectional: with a reverse model's scores;
    per_kind: the sentence model one detector per kind, the negatives taken as two kinds in turn)."""
    rng = np.random.default_rng(3)
    mats, cells = [], []
    for _ in range(30):
        t, s = (int(x) for x in rng.integers(2, 6, size=2))
        gold = np.zeros((t, s))
        gold[np.arange(t), rng.integers(0, s, size=t)] = 1
        m = (gold * 2 + rng.random((t, s)), rng.random(t))
        mats.append(m + (gold.T * 2 + rng.random((s, t)), rng.random(s)) if bidirectional else m)
        cells.append(gold)
    negatives = [C.ScoredPair(tuple(rng.random(np.shape(x)) for x in m)) for m in mats]
    setting = {**SETTING, "reverse_model": {"sha256": "r" * 64}} if bidirectional else SETTING
    kinds = ["misaligned", "short"] * (len(negatives) // 2) if per_kind else None
    cal = C.fit_calibration(
        mats, cells, negatives, {"sha256": "f" * 64}, setting, {"gold": "toy", "fold": "odd", "seed": 1},
        negative_kinds=kinds,
    )  # fmt: skip
    cal.measured = {"ece_fitted": 0.01, "ece_held_out": 0.02, "held_out_sentences": 30}
    return cal.to_json()


PROBES = [np.array([[3.0, 0.2, 0.1], [0.1, 2.5, 0.3], [0.2, 0.1, 1.9], [0.5, 0.4, 0.6]]), np.eye(5) + 0.01]


def behaviour(cal: C.Calibration) -> list[np.ndarray]:
    """The link probabilities and sentence scores of a few score matrices."""
    out = []
    for m in PROBES:
        t, s = m.shape
        rev = (m.T * 0.9, np.full(s, 0.1)) if cal.bidirectional else ()
        p = cal.probabilities(m, np.full(t, 0.1), *rev)
        out += [p, np.array([cal.sentence_score(p)])]
    return out


def _write(folder: str, text: str) -> str:
    path = os.path.join(folder, "cal.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def _edit(d, path, value):
    for key in path[:-1]:
        d = d[key]
    if value is _DELETE:
        del d[path[-1]]
    else:
        d[path[-1]] = value


_DELETE = object()

CASES = [
    # (what is changed: path -> new value (or deleted), the message it gives after "FILE: ")
    ((("setting", "layer"), 0.0), "setting.layer: found 0.0; expected an integer >= 0 (not a bool)"),
    ((("setting", "layer"), False), "setting.layer: found false; expected an integer >= 0"),
    ((("setting", "layer"), -1), "setting.layer: found -1; expected an integer >= 0"),
    ((("setting", "method"), 3), "setting.method: found 3; expected a method name"),
    ((("setting", "method"), "a+b"), 'setting.method: found "a+b"; expected a method name'),
    ((("setting", "shift"), "awx"), 'setting.shift: found "awx"; expected one of awo, awi'),
    ((("setting", "level"), "words"), 'setting.level: found "words"; expected one of word, subword, word-any'),
    ((("setting", "heads"), "0,1"), 'setting.heads: found "0,1"; expected "all" or a list of different integers'),
    ((("setting", "heads"), [0, True]), "setting.heads: found [0, true]; expected"),
    ((("setting", "heads"), [1, 1]), "setting.heads: found [1, 1]; expected"),
    ((("setting", "heads"), []), "setting.heads: found []; expected"),
    ((("setting", "src_reduce"), "median"), 'setting.src_reduce: found "median"; expected one of sum, mean, max'),
    ((("setting", "tgt_reduce"), _DELETE), "setting.tgt_reduce: found nothing; expected one of sum, mean, max"),
    ((("setting", "extra"), 1), "setting.extra: found a field the file's version does not have; expected only method,"),
    ((("setting", "reverse_model"), {"sha256": "r"}), "setting.reverse_model: found {"),
    ((("model", "sha256"), 12), "model.sha256: found 12; expected a string"),
    ((("model",), "abc"), 'model: found "abc"; expected an object of strings'),
    ((("cells", "weights", 0), 1e308), "cells.weights[0]: found 1e+308; expected a finite number in [-10000, 10000]"),
    ((("cells", "weights", 1), "0.5"), 'cells.weights[1]: found "0.5"; expected a finite number'),
    ((("cells", "weights", 2), True), "cells.weights[2]: found true; expected a finite number"),
    ((("cells", "weights", 3), math.nan), "cells.weights[3]: found NaN; expected a finite number"),
    ((("cells", "weights", 3), 10**400), "cells.weights[3]: found 1000000000000000000000000000000000000000000000000"),
    ((("cells", "scale", 0), math.inf), "cells.scale[0]: found Infinity; expected a finite number in [1e-09, 1e+06]"),
    ((("cells", "scale", 0), -0.0), "cells.scale[0]: found -0.0; expected a finite number in [1e-09, 1e+06]"),
    ((("cells", "scale", 0), 1e-300), "cells.scale[0]: found 1e-300; expected a finite number in [1e-09, 1e+06]"),
    ((("cells", "mean", 5), -1e7), "cells.mean[5]: found -10000000.0; expected a finite number in [-1e+06, 1e+06]"),
    ((("sentence", "weights", 0), -math.inf), "sentence.weights[0]: found -Infinity; expected a finite number"),
    ((("cells", "weights", 12), _DELETE), "cells.weights: found a list of 12; expected a list of 13 numbers"),
    ((("cells", "mean", 0), _DELETE), "cells.mean: found a list of 11; expected a list of 12 numbers"),
    ((("sentence", "scale"), [1.0] * 12), "sentence.scale: found a list of 12; expected a list of 7 numbers"),
    ((("cells", "features"), list(C.CELL_FEATURES[::-1])), 'cells.features: found a list of 12: ["null_share",'),
    ((("cells", "features"), None), "cells.features: found null; expected a list of feature names"),
    ((("sentence",), _DELETE), "sentence: found nothing; expected an object (the sentence model)"),
    ((("version",), 5), "version: found 5; expected 1 or 2 or 3 or 4 (the versions norm-align "),
    ((("version",), "1"), 'version: found "1"; expected 1 or 2 or 3'),
    ((("version",), True), "version: found true; expected 1 or 2 or 3"),
    ((("version",), _DELETE), "version: found nothing; expected 1 or 2 or 3"),
    ((("format",), "norm-align/calibration-v2"), 'format: found "norm-align/calibration-v2"; expected "norm-align/'),
    ((("package",), 0.2), "package: found 0.2; expected a string"),
    ((("fitted_on", "sentences"), "30"), 'fitted_on.sentences: found "30"; expected an integer >= 0'),
    ((("fitted_on", "cells"), _DELETE), "fitted_on.cells: found nothing; expected an integer >= 0"),
    ((("fitted_on", "fold"), "third"), 'fitted_on.fold: found "third"; expected one of all, odd, even'),
    ((("fitted_on", "seed"), 1.5), "fitted_on.seed: found 1.5; expected an integer"),
    ((("fitted_on", "gold"), ["a"]), 'fitted_on.gold: found ["a"]; expected a string'),
    (
        (("fitted_on", "sentence_model"), "big"),
        'fitted_on.sentence_model: found "big"; expected one of per-kind, compact, full',
    ),
    # the toy file's sentence model has the link features only: neither compact's nor full's list
    ((("fitted_on", "sentence_model"), "full"), 'fitted_on.sentence_model: found "full"; expected the model whose'),
    ((("measured", "ece_fitted"), 2.0), "measured.ece_fitted: found 2.0; expected a finite number in [0, 1]"),
    ((("measured", "held_out_sentences"), False), "measured.held_out_sentences: found false; expected an integer"),
    ((("measured",), []), "measured: found []; expected an object"),
]


@pytest.mark.parametrize("change,message", CASES, ids=[".".join(map(str, c[0])) for c, _ in CASES])
def test_each_field_is_checked(tmp_path, change, message):
    d = json.loads(fitted(False))
    _edit(d, *change)
    path = _write(str(tmp_path), json.dumps(d))
    with pytest.raises(C.CalibrationError) as e:
        C.read_calibration(path)
    assert str(e.value).startswith(f"{path}: {message}") and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "change,message",
    [
        ((("setting", "reverse_model"), _DELETE), "setting.reverse_model: found nothing; expected an object of"),
        ((("setting", "reverse_model", "sha256"), None), "setting.reverse_model.sha256: found null; expected a string"),
        ((("cells", "features", 23), _DELETE), "cells.features: found a list of 23: "),
        ((("cells", "weights", 24), _DELETE), "cells.weights: found a list of 24; expected a list of 25 numbers"),
        ((("cells", "scale", 20), 0), "cells.scale[20]: found 0; expected a finite number in [1e-09, 1e+06]"),
    ],
)
def test_a_bidirectional_file_is_checked_too(tmp_path, change, message):
    d = json.loads(fitted(True))
    _edit(d, *change)
    path = _write(str(tmp_path), json.dumps(d))
    with pytest.raises(C.CalibrationError, match="^" + re.escape(f"{path}: {message}")):
        C.read_calibration(path)


@pytest.mark.parametrize(
    "text,message",
    [
        ('{"format": "norm-align/calibration", "format": "x"}', "format: found the field twice in one object"),
        ('{"model": {"sha256": "a", "sha256": "b"}}', "model.sha256: found the field twice in one object"),
        ("[" * 100000, "not JSON"),
        ('{"a": 1', "not JSON (Expecting ',' delimiter at line 1 column 8)"),
        ("\xff", "not JSON"),
        ("[1, 2]", "the file: found [1, 2]; expected a JSON object with the fields format, version,"),
    ],
)
def test_text_that_is_not_one_file(tmp_path, text, message):
    path = _write(str(tmp_path), text)
    with pytest.raises(C.CalibrationError) as e:
        C.read_calibration(path)
    assert str(e.value).startswith(f"{path}: {message}") and "\n" not in str(e.value)


def test_what_is_written_reads_back_and_a_bad_fit_is_not_written(tmp_path):
    for both in (False, True):
        path = _write(str(tmp_path), fitted(both))
        cal = C.read_calibration(path)
        C.write_calibration(str(tmp_path / "again.json"), cal)
        assert (tmp_path / "again.json").read_text() == fitted(both)
    cal.cells.weights[0] = math.nan
    with pytest.raises(C.CalibrationError, match=r"bad.json: cells.weights\[0\]: found NaN"):
        C.write_calibration(str(tmp_path / "bad.json"), cal)
    assert not (tmp_path / "bad.json").exists()


@pytest.mark.parametrize(
    "path,value,message",
    [
        (("cells", "weights", 0), 5000.0, "cells.weights: found weights (intercept 5000) that give every cell of a test "
         "pair probability 1; expected weights under which a link and a cell of score 0 differ"),
        (("cells", "weights", 0), -5000, "cells.weights: found weights (intercept -5000) that give every cell"),
        (("cells", "weights"), 0.0, "cells.weights: found weights (intercept 0) that give every cell of a test pair "
         "probability 0.5"),
        (("sentence", "weights", 0), 1e4, "sentence.weights: found weights (intercept 10000) that give a pair with no "
         "link score 1.0"),
        (("sentence", "weights"), 3.0, "sentence.weights: found weights (intercept 3) that give every pair the same "
         "score (all others 0)"),
    ],
)  # fmt: skip
def test_a_model_that_says_nothing_is_refused(tmp_path, path, value, message):
    # every probability 1.0, or every cell or pair alike: refused because the models are run on test pairs
    for both in (False, True):
        d = json.loads(fitted(both))
        # an intercept within the bounds but beyond any fit (or the intercept ``value``, every other weight 0)
        _edit(d, path, [value] + [0.0] * (len(_get(d, path)) - 1) if path[-1] == "weights" else value)
        file = _write(str(tmp_path), json.dumps(d))
        with pytest.raises(C.CalibrationError) as e:
            C.read_calibration(file)
        assert str(e.value).startswith(f"{file}: {message}")


def test_a_constant_feature_gets_scale_one():
    x = np.c_[np.full(200, math.log(7)), np.arange(200) % 3]  # np.std of the first column is 6.7e-16, not 0
    model = C.fit_logistic(x, (np.arange(200) % 3 == 0).astype(float), ("a", "b"))
    assert model.scale[0] == 1.0 and np.isfinite(model.predict(np.array([[math.log(8), 0.0]]))).all()
    assert 0 < model.predict(np.array([[math.log(8), 0.0]]))[0] < 1


# -- random mutations of fitted files --------------------------------------------------------------------------

VALUES = [math.inf, -math.inf, math.nan, 1e308, -1e308, -0.0, 0.0, 1e-300, 0.5, 1, -1, 2**70, "x", "0.5", "",
          True, False, None, [], {}, [1, 2], {"a": 1}]  # fmt: skip
NEUTRAL = ("package", "model", "setting", "fitted_on", "measured")
"""Fields that do not change what a calibration computes (they say what it holds for)."""


def _paths(v, path=()):
    yield path
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        yield from _paths(x, path + (k,))


def _field(path) -> str:
    """A path as the errors name it: ``cells.weights[3]``."""
    out = ""
    for k in path:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else k)
    return out or "the file"


def _related(a: str, b: str) -> bool:
    """One field is the other or holds it."""
    return a == b or b == "the file" or any(a.startswith(b + c) or b.startswith(a + c) for c in ".[")


class Twice(dict):
    """An object written with its first key given twice."""


def _dump(v) -> str:
    if isinstance(v, dict):
        items = list(v.items())
        if isinstance(v, Twice) and items:
            items.insert(0, items[0])
        return "{" + ", ".join(f"{json.dumps(k)}: {_dump(x)}" for k, x in items) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_dump(x) for x in v) + "]"
    return json.dumps(v)


@st.composite
def mutated(draw):
    """(bidirectional, file text, the fields changed, whether the text was cut): one to three changes of a
    fitted file (a field deleted, replaced by another value or type, added, given twice; the version changed),
    and maybe the text cut short."""
    both, per_kind = draw(st.booleans()), draw(st.booleans())
    d = json.loads(fitted(both, per_kind))
    changed = []
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["delete", "replace", "replace", "add", "version", "twice"]))
        paths = list(_paths(d))
        dicts = [p for p in paths if isinstance(_get(d, p), dict) and _get(d, p)]
        if not dicts:  # the whole file replaced by a value: nothing left to change
            break
        if op == "version" and isinstance(d, dict):
            path, value = ("version",), draw(st.sampled_from([0, 4, -1, "1", 1.0, True, None]))
        elif op == "delete" and len(paths) > 1:
            path, value = draw(st.sampled_from(paths[1:])), _DELETE
        elif op in ("replace", "delete", "version"):
            path, value = draw(st.sampled_from(paths)), copy.deepcopy(draw(st.sampled_from(VALUES)))
        else:
            path = draw(st.sampled_from(dicts))
            if op == "twice":
                if path:
                    _edit(d, path, Twice(_get(d, path)))
                else:
                    d = Twice(d)
                continue  # the field given twice is the object's first when it is written (below)
            path, value = path + ("extra",), 1
        if not path:
            d = value
        else:
            _edit(d, path, value)
        changed.append(path)
    changed += [p + (next(iter(_get(d, p))),) for p in _paths(d) if isinstance(_get(d, p), Twice) and _get(d, p)]
    text = _dump(d)
    cut = draw(st.booleans()) and draw(st.booleans())
    if cut:
        text = text[: draw(st.integers(0, len(text) - 1))]
    return (both, per_kind), text, [_field(p) for p in changed], cut


def _get(d, path):
    for k in path:
        d = d[k]
    return d


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_a_mutated_file_behaves_as_a_valid_one_or_is_refused_naming_a_changed_field(case):
    both, text, changed, cut = case
    with tempfile.TemporaryDirectory() as folder:
        path = _write(folder, text)
        try:
            cal = C.read_calibration(path)
        except C.CalibrationError as e:
            msg = str(e)
            assert "\n" not in msg and msg.startswith(f"{path}: "), msg
            rest = msg[len(path) + 2 :]
            if rest.startswith("not JSON"):
                assert cut, msg  # every change but a cut leaves JSON
                return
            field = rest.split(": found ")[0]
            assert ": found " in rest and "; expected " in rest, msg
            if rest.startswith(field + ": found weights ("):  # what a model does on test pairs: its means, scales too
                field = field.split(".")[0]
            assert any(_related(field, c) for c in changed), (msg, changed)
            return
        # accepted: a calibration that computes finite probabilities, not all 1.0, and writes back as it reads
        got = behaviour(cal)
        for p in got:
            assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()
        assert not all((p == 1.0).all() for p in got[::2]), changed
        if all(c.split(".")[0].split("[")[0] in NEUTRAL for c in changed) or not changed:
            ref = behaviour(C.read_calibration(_write(folder, fitted(*both))))
            for p, q in zip(got, ref):
                np.testing.assert_array_equal(p, q)
        C.write_calibration(os.path.join(folder, "again.json"), cal)
        for p, q in zip(behaviour(C.read_calibration(os.path.join(folder, "again.json"))), got):
            np.testing.assert_array_equal(p, q)


def test_how_the_model_read_is_a_version_4_field(tmp_path):
    # version 4 files may record lowercase and languages (align-calibrate records them); version 3 files have neither
    d = json.loads(fitted(False))
    assert d["version"] == 4
    d["setting"].update(lowercase=True, languages="en->fr")
    C.read_calibration(_write(str(tmp_path), json.dumps(d)))  # fine
    for version, setting, message in (
        (3, d["setting"], "setting.lowercase: found a field the file's version does not have"),
        (4, {**d["setting"], "languages": "en-fr"}, "setting.languages: found \"en-fr\"; expected 'SRC->TGT'"),
        (4, {**d["setting"], "lowercase": "yes"}, 'setting.lowercase: found "yes"; expected true or false'),
    ):
        path = _write(str(tmp_path), json.dumps({**d, "version": version, "setting": setting}))
        with pytest.raises(C.CalibrationError, match=message):
            C.read_calibration(path)
