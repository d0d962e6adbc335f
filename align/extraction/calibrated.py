"""A calibration file checked against the run that uses it: the setting it holds for, how the model read the
pairs when it was fitted, its models (forward, reverse, alignment layers); what ``align-extract --calibration``
and ``align-filter`` run, and what ``align-calibrate`` records."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..spec.alignspec import AlignSpec
from ..spec.signature import file_digest, identity_fields, model_key
from .loading import RunError, UsageError, one_line
from .plan import Calibrated, Flags


def calibration_setting(spec: AlignSpec, method: str, layer: int, shift: str) -> dict[str, Any]:
    """The setting a calibration holds for (what ``--calibration`` checks, what align-calibrate records)."""
    return {
        "method": method,
        "layer": layer,
        "shift": shift,
        "level": spec.level,
        "heads": list(spec.heads) if spec.heads else "all",
        "src_reduce": spec.src_reduce,
        "tgt_reduce": spec.tgt_reduce,
    }


READING = ("lowercase", "languages")
"""Fields of a calibration's setting that say how the model read the pairs (:func:`model_reading`)."""


def model_reading(aligner: Any) -> dict[str, Any]:
    """How the model reads the pairs, which a calibration holds for: lowercased or not, and its languages
    ``SRC->TGT`` where it declares both (a multilingual model: the ones it was given)."""
    out: dict[str, Any] = {"lowercase": bool(aligner.lowercase)}
    src, tgt = aligner.languages()
    if src and tgt:
        out["languages"] = f"{src}->{tgt}"
    return out


def load_calibration(
    f: Flags,
    aligner: Any,
    spec: AlignSpec,
    reverse: tuple[Any, AlignSpec] | None,
    test_set_signature: str | None,
    calibration: Any = None,
) -> tuple[Calibrated, str | None]:
    """The calibrated setting of ``--calibration`` (``calibration``: the file as :func:`check_flags` read it;
    None: read it now), checked against the models and the run's settings; and a warning to print when the run
    measures the sentences it was fitted on (None otherwise)."""
    from ..confidence.calibration import CalibrationError, read_calibration

    assert f.calibration is not None  # only called with one (the caller's branch)
    try:
        cal = calibration if calibration is not None else read_calibration(f.calibration)
        cal.check(identity_fields(aligner.identity()), cal.setting, f.calibration)
    except CalibrationError as e:
        raise RunError(one_line(e)) from None
    reading = model_reading(aligner)
    for key in READING:  # a file made before they were recorded holds neither: nothing to check
        if key in cal.setting and cal.setting[key] != reading.get(key):
            raise RunError(
                f"{f.calibration}: fitted with the model reading {key}={cal.setting[key]!r}; this run reads "
                f"{key}={reading.get(key)!r} (the scores differ: calibrate for the run as it is)"
            )
    skip = ("reverse_model", "alignment_layer", *READING)
    want: dict[str, Any] = {k: v for k, v in cal.setting.items() if k not in skip}
    if cal.bidirectional != bool(f.reverse_model):
        raise UsageError(
            f"--calibration {f.calibration} is "
            + (
                "bidirectional: give the --reverse-model it was fitted with"
                if cal.bidirectional
                else "of one direction: give it without --reverse-model"
            )
        )
    rev, rspec = None, None
    if reverse is not None:
        rev = reverse[0]
        got = identity_fields(rev.identity())
        if model_key(got) != model_key(cal.setting.get("reverse_model")):
            raise RunError(
                f"{f.calibration}: fitted with reverse model {cal.setting.get('reverse_model')}; "
                f"--reverse-model is {got}"
            )
    if "alignment_layer" in cal.setting:
        now = [getattr(getattr(a, "alignment_layer", None), "weights_sha256", None) for a in [aligner, rev] if a]
        if now != cal.setting["alignment_layer"]:
            raise RunError(
                f"{f.calibration}: fitted on the alignment layer(s) "
                f"{', '.join(x[:12] for x in cal.setting['alignment_layer'])}"
                f"; this run reads {', '.join(str(x)[:12] for x in now)} (retrained? calibrate it again)"
            )
    match = [
        n
        for n, m, la, sh, h in aligner.settings(spec, spec.heads is None)
        if h is None and calibration_setting(spec, m, la, sh) == want
    ]
    if not match:
        raise UsageError(_not_computed(f.calibration, spec, want))
    one: dict[str, Any] = {"methods": (want["method"],), "layers": (want["layer"],), "shifts": (want["shift"],)}
    cspec = replace(spec, **one, blends=())
    if reverse is not None:
        rspec = replace(reverse[1], **one, blends=())
    warning = None
    fitted = str(cal.fitted_on.get("gold", ""))
    if test_set_signature and fitted.split("|")[0] == test_set_signature.split("|")[0]:
        warning = (
            f"warning: {f.calibration} was fitted on {fitted} (sentences: "
            f"{cal.fitted_on.get('fold', 'all')}); what this run measures on them is in-sample"
        )
    return Calibrated(match[0], cal, rev, rspec, cspec, file_digest(f.calibration)), warning


def _not_computed(path: str, spec: AlignSpec, want: Mapping[str, Any]) -> str:
    """Why this run computes no setting a calibration holds for: its level, heads or reducers are not the
    calibration's (no --methods can change that), or its method, layer and shift are not asked for."""
    run = calibration_setting(spec, want["method"], want["layer"], want["shift"])
    differ = [k for k in ("level", "heads", "src_reduce", "tgt_reduce") if run[k] != want[k]]
    if not differ:
        return (
            f"--calibration {path} holds for {want['method']} layer {want['layer']} {want['shift']} "
            f"({', '.join(f'{k}={v}' for k, v in want.items())}); this run does not compute that setting "
            "(add it to --methods, --layers, --shifts)"
        )

    def show(k: str, v: Any) -> str:
        return ",".join(map(str, v)) if k == "heads" and v != "all" else str(v)

    fixes = [f"give --level {want['level']}"] if "level" in differ else []
    if "heads" in differ:
        fixes.append("leave out --heads" if want["heads"] == "all" else f"give --heads {show('heads', want['heads'])}")
    return (
        f"--calibration {path} was fitted with {', '.join(f'{k} {show(k, want[k])}' for k in differ)}; this run "
        f"has {', '.join(f'{k} {show(k, run[k])}' for k in differ)} ("
        + (f"{' and '.join(fixes)}: " if fixes else "")
        + "a calibration holds for the level, heads and reducers it was fitted with)"
    )
