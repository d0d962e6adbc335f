"""The calibration file's schema: every field, its type and its bounds, checked whenever a file is read
(:func:`align.confidence.calibration.read_calibration`) or written (standard library and numpy).

A file that is not one is refused in one line, ``FILE: FIELD: found X; expected Y`` (``FIELD`` a dotted path,
``setting.layer``, ``cells.weights[3]``; ``X`` as JSON spells it), never read in part. The schema is closed:
a field that is missing, of another type, out of bounds, unknown or given twice is refused; a new field is a
new version. This release reads the versions in :data:`VERSIONS`.

The bounds on the numbers, and why (a weight of ``1e308`` made every probability 1.0, a scale of ``inf`` every
score the same):

- ``mean``: a feature's mean on the fitting data. Every feature is a share or ratio in [0, 1], a 0/1 flag, a
  logarithm of a length or of a share times a length, or a count of links per word: its magnitude is at most
  the sentence length, far below :data:`MAX_MEAN` (1e6 words; no model has that many positions).
- ``scale``: a feature's standard deviation there, at most half its range (:data:`MAX_SCALE`), and at least
  :data:`MIN_SCALE`: the fit stores 1 for a feature that is constant to within 1e-9 of its size (float
  rounding leaves a spread of 2e-16 on a constant column, which would multiply any change of it by 4.5e15).
- ``weights``: on standardized features a weight is the change in log-odds per standard deviation, and the
  intercept the log-odds at the mean cell. Fits of this code on gold alignments have weights below 10
  (align-calibrate on 30 Hansards sentences with the shipped En-Fr model: 2.6 for the cells, 9.8 for the
  sentence model); the sentence model on synthetic, perfectly separable pairs (the tests' toy fit) reaches 61
  at 2000 pairs and grows slowly with more. :data:`MAX_WEIGHT` (1e4) leaves a wide margin over any fit; beyond
  it, 0.004 of a standard deviation moves a probability from 0.5 to 1.0 (float64's sigmoid is exactly 1.0
  beyond log-odds 37): no fit on noisy gold links comes near, so such a number is damage, not a model.

Within these bounds every log-odds is finite (at most 1e4 + 24 * 1e4 * 2e6 / 1e-9, about 5e20, clipped to
500 before the sigmoid), so an accepted file gives probabilities in [0, 1] for any finite scores, never NaN.
Bounds cannot rule out a model that says nothing (an intercept of 40 makes every probability 1.0):
:func:`check_behaviour` runs the models on test pairs and refuses one under which a clear link and a cell of
score 0 get the same probability, or a pair with no link scores 1.0.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .. import __version__
from ..links.subwords import REDUCERS
from ..spec.alignspec import LEVELS
from ..spec.setting import SHIFTS, Setting
from .calibration import (
    CELL_FEATURES,
    FOLDS,
    FORMAT,
    REVERSE_FEATURES,
    SENTENCE_FEATURES,
    VERSION,
    Calibration,
    CalibrationError,
)
from .logistic import Logistic
from .noise import KINDS
from .per_kind import LOWEST, PerKind
from .sentence import SENTENCE_MODELS, sentence_choices

VERSIONS = (1, 2, 3, VERSION)
"""The file versions this release reads (the last is the one it writes)."""
MAX_WEIGHT = 1e4
"""Largest magnitude of a weight or intercept (see the module docstring)."""
MAX_MEAN = 1e6
"""Largest magnitude of a feature's mean."""
MIN_SCALE, MAX_SCALE = 1e-9, 1e6
"""Bounds of a feature's standard deviation."""

_MISSING = object()
Check = tuple[Callable[[Any], bool], str]
"""A field's test and what it expects, in words (the error's ``expected ...``)."""


def _show(value: Any) -> str:
    """A value as JSON spells it, one line, at most 60 characters."""
    if value is _MISSING:
        return "nothing"
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _name(key: Any) -> str:
    """A field name for a message: as it is if plain, else as JSON spells it (one line)."""
    return key if isinstance(key, str) and key.replace("_", "").isalnum() and key.isascii() else _show(key)


def fail(where: str, field: str, found: Any, expected: str) -> CalibrationError:
    """``where: field: found X; expected Y`` (``found`` as JSON spells it; ``_MISSING``: nothing)."""
    return CalibrationError(f"{where}: {field}: found {_show(found)}; expected {expected}")


def _integer(lo: int = 0) -> Check:
    return (lambda v: type(v) is int and v >= lo), f"an integer >= {lo} (not a bool)"


def _number(lo: float, hi: float) -> Check:
    # int too (JSON has one number type), never bool; NaN fails both comparisons, inf the bounds
    return (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and lo <= v <= hi), (
        f"a finite number in [{lo:g}, {hi:g}] (not a string or bool)"
    )


def _choice(names: tuple[str, ...]) -> Check:
    return (lambda v: isinstance(v, str) and v in names), "one of " + ", ".join(names)


def _is_method(v: Any) -> bool:
    try:
        return isinstance(v, str) and Setting.parse(f"{v}-awi-layer0").method == v
    except ValueError:
        return False


def _is_heads(v: Any) -> bool:
    if v == "all":
        return True
    ints = isinstance(v, list) and all(type(h) is int and h >= 0 for h in v)
    return ints and len(v) > 0 and len(set(v)) == len(v)


def _is_object(v: Any) -> bool:
    return isinstance(v, dict)


def check_identity(d: dict[str, Any], where: str, prefix: str) -> dict[str, str]:
    """A model's identity (``model``, ``setting.reverse_model``): every field a string."""
    for key, value in d.items():
        if not isinstance(value, str):
            raise fail(
                where, f"{prefix}.{_name(key)}", value, "a string (a model's identity: sha256, or hub_id and revision)"
            )
    return dict(d)


_IDENTITY = "an object of strings (the model's identity: sha256, or hub_id and revision)"
SETTING: dict[str, Check] = {
    "method": (_is_method, "a method name (a lowercase letter, then letters, digits, '_' or '-')"),
    "layer": _integer(0),
    "shift": _choice(SHIFTS),
    "level": _choice(LEVELS),
    "heads": (_is_heads, '"all" or a list of different integers >= 0'),
    "src_reduce": _choice(REDUCERS),
    "tgt_reduce": _choice(REDUCERS),
    "reverse_model": (_is_object, _IDENTITY + " of the reverse model (cells.features has rev_ features)"),
    "lowercase": ((lambda v: isinstance(v, bool)), "true or false (whether the model read the text lowercased)"),
    "languages": (
        (lambda v: isinstance(v, str) and v.count("->") == 1 and all(v.split("->"))),
        "'SRC->TGT', the languages the model translated (where it declared them)",
    ),
    "alignment_layer": (
        (lambda v: isinstance(v, list) and 1 <= len(v) <= 2 and all(isinstance(x, str) for x in v)),
        "a list of the trained alignment layers' weight digests (method learned: the model's, then the reverse "
        "model's)",
    ),
}
"""The setting a calibration holds for (``reverse_model`` only in a bidirectional one)."""
FITTED_ON: dict[str, Check] = {
    "gold": ((lambda v: isinstance(v, str)), "a string (the gold set's name or files)"),
    "fold": _choice(FOLDS),
    "seed": ((lambda v: type(v) is int), "an integer (not a bool)"),
    "sentences": _integer(0),
    "cells": _integer(0),
    "gold_links": _integer(0),
    "negatives": _integer(0),
    "sentence_pairs": ((lambda v: isinstance(v, str)), "a string (the pairs the sentence score was fitted on)"),
    "noise": (
        (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)),
        "a list of strings (the kinds of noise of the sentence model's negatives)",
    ),
    "sentence_weights": _choice(("length-balanced",)),
    "sentence_model": _choice(tuple(SENTENCE_MODELS)),
}
"""What it was fitted on: ``sentences``, ``cells``, ``gold_links`` and ``negatives`` every fit records (required);
the others as align-calibrate records them (``sentence_pairs`` only with --sentence-pairs)."""
MEASURED: dict[str, Check] = {
    "ece_fitted": _number(0.0, 1.0),
    "ece_held_out": _number(0.0, 1.0),
    "held_out_sentences": _integer(0),
}
"""What align-calibrate measured, each optional."""
TOP: dict[str, Check] = {
    "format": ((lambda v: v == FORMAT), f"{json.dumps(FORMAT)} (a file written by align-calibrate)"),
    "version": ((lambda v: type(v) is int and v in VERSIONS), f"{' or '.join(map(str, VERSIONS))} (the versions "
                f"norm-align {__version__} reads)"),
    "package": ((lambda v: isinstance(v, str)), "a string (the version of the package that wrote it)"),
    "model": (_is_object, _IDENTITY),
    "setting": (_is_object, "an object (the setting it was fitted for)"),
    "cells": (_is_object, "an object (the cell model)"),
    "sentence": (_is_object, "an object (the sentence model)"),
    "fitted_on": (_is_object, "an object (what it was fitted on)"),
    "measured": (_is_object, "an object (what was measured)"),
}  # fmt: skip
"""The file's fields; all but ``package`` required."""


def check_fields(
    d: Any, where: str, prefix: str, fields: Mapping[str, Check], required: tuple[str, ...]
) -> dict[str, Any]:
    """``d`` checked against ``fields`` (a closed set: unknown fields are refused), ``required`` in order first."""
    if not isinstance(d, dict):
        raise fail(where, prefix or "the file", d, "a JSON object with the fields " + ", ".join(fields))
    for key in [*required, *(k for k in d if k not in required)]:
        field = f"{prefix}.{_name(key)}" if prefix else _name(key)
        if key not in fields:
            raise CalibrationError(
                f"{where}: {field}: found a field the file's version does not have; expected only {', '.join(fields)}"
            )
        test, expected = fields[key]
        value = d.get(key, _MISSING)
        if value is _MISSING or not test(value):
            raise fail(where, field, value, expected)
    return d


def _numbers(
    d: dict[str, Any], key: str, where: str, prefix: str, n: int, bounds: tuple[float, float], of: str = ""
) -> np.ndarray:
    values = d.get(key, _MISSING)
    field = f"{prefix}.{key}"
    if not isinstance(values, list) or len(values) != n:
        size = f"a list of {len(values)}" if isinstance(values, list) else _show(values)
        raise CalibrationError(
            f"{where}: {field}: found {size}; expected a list of {n} numbers "
            f"({'an intercept and ' if key == 'weights' else ''}one per feature of {of or prefix + '.features'})"
        )
    test, expected = _number(*bounds)

    if key == "scale":  # an earlier fit stored ~2e-16 for a near-constant feature: such a file is to be fitted again
        expected += "; a file of an earlier fit may need fitting again with align-calibrate"
    for i, v in enumerate(values):
        if not test(v):
            raise fail(where, f"{field}[{i}]", v, expected)
    return np.array([float(v) for v in values], dtype=np.float64)


def check_logistic(d: Any, where: str, prefix: str, choices: tuple[tuple[str, ...], ...], what: str) -> Logistic:
    """One model of the file (``cells`` or ``sentence``): its features one of ``choices`` (described by
    ``what``), as many means and scales and one weight more, each a number within bounds."""
    names = ((lambda v: isinstance(v, list)), "a list of feature names")
    vector = ((lambda v: isinstance(v, list)), "a list of numbers")
    check_fields(d, where, prefix, {"features": names, **{k: vector for k in ("mean", "scale", "weights")}}, ())
    features = d.get("features", _MISSING)
    if not any(features == list(c) for c in choices):
        found = f"a list of {len(features)}: {_show(features)}" if isinstance(features, list) else _show(features)
        raise CalibrationError(f"{where}: {prefix}.features: found {found}; expected {what}")
    n = len(features)
    return Logistic(
        tuple(features),
        _numbers(d, "mean", where, prefix, n, (-MAX_MEAN, MAX_MEAN)),
        _numbers(d, "scale", where, prefix, n, (MIN_SCALE, MAX_SCALE)),
        _numbers(d, "weights", where, prefix, n + 1, (-MAX_WEIGHT, MAX_WEIGHT)),
    )


def check_per_kind(d: dict[str, Any], where: str, choices: tuple[tuple[str, ...], ...], what: str) -> PerKind:
    """The ``per-kind`` sentence model (version 3): its features one of ``choices``, one detector per kind of noise
    (each a kind of :data:`~align.confidence.noise.KINDS` once, with the means, scales and weights of a logistic
    regression over the features) and ``combine``, a logistic regression over :data:`~align.confidence.per_kind.LOWEST`
    whose weight is positive (a higher lowest log-odds is likelier a translation)."""
    listed = ((lambda v: isinstance(v, list) and len(v) > 0), "a non-empty list")
    check_fields(d, where, "sentence", {"features": listed, "detectors": listed, "combine": (_is_object, "an object")},
                 ("features", "detectors", "combine"))  # fmt: skip
    features = d["features"]
    if not any(features == list(c) for c in choices):
        raise CalibrationError(f"{where}: sentence.features: found a list of {len(features)}: {_show(features)}; "
                               f"expected {what}")  # fmt: skip
    vector = ((lambda v: isinstance(v, list)), "a list of numbers")
    kind_check = ((lambda v: isinstance(v, str) and v in KINDS), "a kind of noise of align.confidence.noise.KINDS")
    fields = {"kind": kind_check, "mean": vector, "scale": vector, "weights": vector}
    kinds: list[str] = []
    detectors = []
    n = len(features)
    for i, det in enumerate(d["detectors"]):
        prefix = f"sentence.detectors[{i}]"
        check_fields(det, where, prefix, fields, tuple(fields))
        if det["kind"] in kinds:
            raise fail(where, f"{prefix}.kind", det["kind"], "each kind once (one detector per kind of noise)")
        kinds.append(det["kind"])
        mean = _numbers(det, "mean", where, prefix, n, (-MAX_MEAN, MAX_MEAN), "sentence.features")
        scale = _numbers(det, "scale", where, prefix, n, (MIN_SCALE, MAX_SCALE), "sentence.features")
        weights = _numbers(det, "weights", where, prefix, n + 1, (-MAX_WEIGHT, MAX_WEIGHT), "sentence.features")
        detectors.append(Logistic(tuple(features), mean, scale, weights))
    combine = check_logistic(d["combine"], where, "sentence.combine", ((LOWEST,),), f'["{LOWEST}"]')
    if not combine.weights[1] > 0:
        raise fail(where, "sentence.combine.weights[1]", combine.weights[1].item(),
                   "a positive weight (a higher lowest log-odds: likelier a translation)")  # fmt: skip
    return PerKind(tuple(features), tuple(kinds), tuple(detectors), combine)


def calibration_from_dict(d: Any, where: str) -> Calibration:
    """A calibration file's parsed JSON checked field by field; CalibrationError ``where: FIELD: found X;
    expected Y`` for the first field that is not as the schema says."""
    check_fields(
        d, where, "", TOP, ("format", "version", *(k for k in TOP if k not in ("format", "version", "package")))
    )
    model = check_identity(d["model"], where, "model")
    cells = check_logistic(
        d["cells"], where, "cells", (CELL_FEATURES, CELL_FEATURES + REVERSE_FEATURES),
        f"the {len(CELL_FEATURES)} cell features ({', '.join(CELL_FEATURES)}), then for a bidirectional "
        f"calibration the {len(REVERSE_FEATURES)} rev_ ones",
    )  # fmt: skip
    both = len(cells.features) > len(CELL_FEATURES)
    if d["version"] == 1:  # version 1: the link probabilities' features only
        choices: tuple[tuple[str, ...], ...] = (SENTENCE_FEATURES,)
        what = f"the {len(SENTENCE_FEATURES)} sentence features of version 1 files"
    else:  # the forward model's features, or (bidirectional only) both models'
        choices = sentence_choices(both)
        what = "one of the sentence feature lists of align.confidence.sentence.SENTENCE_CHOICES" + (
            "" if both else " without the reverse model's (cells.features has no rev_ features)"
        )
    sentence: Logistic | PerKind
    if isinstance(d["sentence"], dict) and "detectors" in d["sentence"]:
        if d["version"] < 3:
            raise CalibrationError(f"{where}: sentence.detectors: found a per-kind sentence model; expected none in a "
                                   f"version {d['version']} file (per-kind models are version 3's)")  # fmt: skip
        sentence = check_per_kind(d["sentence"], where, choices, what)
    else:
        sentence = check_logistic(d["sentence"], where, "sentence", choices, what)
    setting = d["setting"]
    learned = isinstance(setting, dict) and setting.get("method") == "learned"
    # reverse_model and alignment_layer only where they apply; lowercase and languages, how the model read the
    # pairs, from version 4 on, where recorded (align-calibrate records both; versions 1 to 3 have neither)
    reading = ("lowercase", "languages")
    required = tuple(k for k in SETTING if k not in ("reverse_model", "alignment_layer", *reading))
    required += (("reverse_model",) if both else ()) + (("alignment_layer",) if learned else ())
    fields = SETTING if d["version"] >= 4 else {k: v for k, v in SETTING.items() if k not in reading}
    check_fields(setting, where, "setting", fields, required)
    if both:
        check_identity(setting["reverse_model"], where, "setting.reverse_model")
    if not both and "reverse_model" in setting:
        raise fail(
            where, "setting.reverse_model", setting["reverse_model"],
            "no reverse model: cells.features has no rev_ features (a calibration of one direction)",
        )  # fmt: skip
    fitted_on = check_fields(
        d["fitted_on"], where, "fitted_on", FITTED_ON, ("sentences", "cells", "gold_links", "negatives")
    )
    named = fitted_on.get("sentence_model")
    if named is not None:
        m = SENTENCE_MODELS[named]
        if tuple(sentence.features) not in (m.forward, m.both) or m.per_kind != isinstance(sentence, PerKind):
            form = "per-kind detectors" if isinstance(sentence, PerKind) else "one regression"
            raise fail(
                where, "fitted_on.sentence_model", named,
                f"the model whose features sentence.features lists ({', '.join(sentence.features[:3])}, ...; "
                f"{form})",
            )  # fmt: skip
    noise = fitted_on.get("noise")
    if isinstance(sentence, PerKind) and noise is not None and not set(sentence.kinds) <= set(noise):
        extra = sorted(set(sentence.kinds) - set(noise))
        raise fail(where, "fitted_on.noise", noise,
                   f"every kind the sentence model has a detector of ({', '.join(extra)} missing)")  # fmt: skip
    measured = check_fields(d["measured"], where, "measured", MEASURED, ())
    cal = Calibration(model, dict(setting), cells, sentence, dict(fitted_on), dict(measured))
    check_behaviour(cal, where)
    return cal


_CELL_PROBE = np.array([[3.0, 0.0, 0.1, 0.2], [0.0, 2.0, 0.2, 0.0], [0.3, 0.0, 1.5, 0.4]])
"""Scores of a test pair: a clear link in each row, cells of score 0, weak ones."""
_NO_LINK = np.full((3, 4), 0.01)
"""Link probabilities of a test pair with no link."""


def check_behaviour(cal: Calibration, where: str) -> None:
    """Refuse a model that says nothing, which bounds alone cannot rule out (an intercept of 100 is within them
    and makes every probability 1.0): a cell model under which every cell of a test pair, clear links and cells
    of score 0 alike, gets the same probability; a sentence model that gives a pair with no link score 1.0, or
    whose feature weights are all 0. (Only these: a sharp sentence model fitted on separable pairs gives
    score 0 to every pair unlike those it was fitted on, as it should.)"""
    t, s = _CELL_PROBE.shape
    rev = (_CELL_PROBE.T.copy(), np.full(s, 0.1)) if cal.bidirectional else ()
    p = cal.probabilities(_CELL_PROBE, np.full(t, 0.1), *rev)
    if np.ptp(p) == 0:
        raise CalibrationError(
            f"{where}: cells.weights: found weights (intercept {cal.cells.weights[0]:g}) that give every cell of a "
            f"test pair probability {p.flat[0]:.6g}; expected weights under which a link and a cell of score 0 differ"
        )
    if isinstance(cal.sentence, PerKind):
        models = [(f"sentence.detectors[{i}]", m) for i, m in enumerate(cal.sentence.detectors)]
        models.append(("sentence.combine", cal.sentence.combine))
    else:
        models = [("sentence", cal.sentence)]
    field, w = next(
        ((f, m.weights) for f, m in models if not m.weights[1:].any()), (models[-1][0], models[-1][1].weights)
    )
    no_link = _no_link_score(cal)
    if no_link == 1.0 or not w[1:].any() or _flat_combine(cal):
        raise CalibrationError(
            f"{where}: {field}.weights: found weights (intercept {w[0]:g}) that give "
            + ("a pair with no link score 1.0" if no_link == 1.0 and w[1:].any() else "every pair the same score")
            + (" (all others 0)" if not w[1:].any() else "")
            + "; expected weights under which a pair with no link scores below 1 and pairs differ"
        )


def _flat_combine(cal: Calibration) -> bool:
    """Whether a per-kind model's last regression gives two lowest log-odds a unit apart the same probability (a
    weight as small as 1e-300 is positive, yet says nothing)."""
    if not isinstance(cal.sentence, PerKind):
        return False
    p = cal.sentence.combine.predict(np.array([[-0.5], [0.5]]) * cal.sentence.combine.scale + cal.sentence.combine.mean)
    return bool(p[0] == p[1])


def _no_link_score(cal: Calibration) -> float:
    """The sentence score of a pair with no link whose every token both models find very unlikely."""
    unlikely = np.full(5, -30.0)
    return cal.sentence_score(_NO_LINK, ["a", "b", "c", "d"], ["w", "x", "y"], unlikely, unlikely)


class _Pairs(list[tuple[str, Any]]):
    """A JSON object's ``(key, value)`` pairs as read, before :func:`_objects` checks that no key is twice."""


class _Twice(Exception):
    def __init__(self, field: str) -> None:
        self.field = field


def _objects(v: Any, field: str) -> Any:
    """The parsed JSON with every object a dict; _Twice naming the first field given twice in one object
    (JSON readers differ in which value they keep)."""
    if isinstance(v, _Pairs):
        d: dict[str, Any] = {}
        for key, x in v:
            name = f"{field}.{_name(key)}" if field else _name(key)
            if key in d:
                raise _Twice(name)
            d[key] = _objects(x, name)
        return d
    if isinstance(v, list):
        return [_objects(x, f"{field}[{i}]") for i, x in enumerate(v)]
    return v


def read_calibration_file(path: str) -> Calibration:
    """Read and check a calibration file (see the module docstring); CalibrationError naming the file and field."""
    try:
        with open(path, "rb") as f:
            d = _objects(json.loads(f.read().decode("utf-8"), object_pairs_hook=_Pairs), "")
    except OSError as e:
        raise CalibrationError(f"{path}: cannot read: {e.strerror or e}") from None
    except _Twice as e:
        raise CalibrationError(f"{path}: {e.field}: found the field twice in one object; expected it once") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        why = f" ({e.msg} at line {e.lineno} column {e.colno})" if isinstance(e, json.JSONDecodeError) else ""
        raise CalibrationError(
            f"{path}: not JSON{why}; expected a calibration file written by align-calibrate"
        ) from None
    return calibration_from_dict(d, path)
