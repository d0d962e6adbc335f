"""An extraction plan built from checked flags: the input, the models and the calibration, each checked against
the others (what ``align-extract`` and ``align-filter`` run)."""

from __future__ import annotations

import os
from contextlib import ExitStack
from typing import Any

from .calibrated import load_calibration
from .loading import RunError, UsageError, check_pair, check_reverse, one_line
from .plan import Checked, ExtractPlan, Flags, check_input, load_models, read_run_calibration


def build_plan(
    flags: Flags, checked: Checked, stack: ExitStack, loaded: tuple[Any, Any] | None = None
) -> tuple[ExtractPlan, list[str]]:
    """The plan of the run: the input (a named set's text written to a temporary file kept by ``stack``), the
    models (``loaded``: the (aligner, reverse aligner or None) of an earlier plan, checked again, not reloaded)
    and the calibration, each checked against the others; and the lines to print first (warnings, and once what
    could not be checked). UsageError or RunError."""

    path, input_name, test_sig, langs = flags.input, None, None, None
    if flags.test_set is not None:
        path, input_name, test_sig, langs = testset_input(flags, stack)
    assert path is not None  # check_flags: --input or -t
    check_input(flags, path)
    cal = None
    if flags.calibration:  # every field checked before any model loads (a bad file is refused in one line)
        from ..attribution.methods import METHODS

        cal = read_run_calibration(flags.calibration, METHODS)
    fw, aligner, spec, reverse = load_models(flags, checked, loaded)
    notes = []
    unchecked = []
    if langs is not None and input_name is not None:
        if not check_pair(aligner, langs, input_name, flags.model):
            unchecked.append(
                f"{flags.model} ({'->'.join(str(x) for x in aligner.languages())}): its direction could not be "
                f"checked against {input_name}"
            )
        # the reverse model too: with a forward model that declares nothing, it is the one that can be checked
        if reverse is not None and not check_pair(reverse[0], (langs[1], langs[0]), f"{input_name} turned round",
                                                  f"--reverse-model {flags.reverse_model}"):  # fmt: skip
            unchecked.append(
                f"{flags.reverse_model} ({'->'.join(str(x) for x in reverse[0].languages())}): its direction could "
                f"not be checked against {input_name}"
            )
    if reverse is not None and not check_reverse(aligner, reverse[0], flags.reverse_model or ""):
        unchecked.append(
            f"{flags.model} ({'->'.join(str(x) for x in aligner.languages())}) and {flags.reverse_model} "
            f"({'->'.join(str(x) for x in reverse[0].languages())}): their directions could not be checked "
            "against each other (no single language declared, or codes this release cannot compare)"
        )
    calibrated, warning = None, None
    if flags.calibration:
        calibrated, warning = load_calibration(flags, aligner, spec, reverse, test_sig, cal)
    # a named set's direction is checked above; a pipe or standard input is read once, so it is not read ahead
    if input_name is None and os.path.isfile(path) and not flags.translate:
        from .direction import check_file  # torch's (the engine): loaded only when a model is

        check_file(aligner, path, flags.batch_size)
    notes += [warning] if warning else []
    notes += [f"note: {'; '.join(unchecked)}"] if unchecked else []
    plan = ExtractPlan(flags, checked, path, input_name, test_sig, fw, aligner, spec, reverse, calibrated)
    return plan, notes


def testset_input(flags: Flags, stack: ExitStack) -> tuple[str, str, str, tuple[str, str]]:
    """The ``-t`` test set's text (in ``-l``'s direction) written to a temporary file kept open by ``stack``:
    its path, the name errors give it, and the set's signature. An unknown name or direction is usage;
    missing or changed files are input (RunError)."""
    import tempfile

    from ..gold import testsets

    try:
        ts = testsets.load(flags.test_set or "", flags.langs, flags.testsets_dir)
    except testsets.UnknownTestSetError as e:
        raise UsageError(str(e)) from None
    except ValueError as e:
        raise RunError(one_line(e)) from None
    folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="align-extract-"))
    path = os.path.join(folder, f"{ts.name}.{ts.pair}.src-tgt")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(line + "\n" for line in ts.text_lines())
    return path, f"test set {ts.name} ({ts.pair})", ts.signature(), ts.langs
