"""What the model-running commands share: quiet frameworks, a missing extra named in one line, number flags."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..extraction.extras import install_hint, missing_module
from ..extraction.loading import framework_of


def quiet_frameworks() -> None:
    """Warnings that say nothing to a user of this command (every run printed them)."""
    warnings.filterwarnings("ignore", message=".*key_padding_mask and attn_mask.*")
    warnings.filterwarnings("ignore", message=".*sacremoses.*")
    warnings.filterwarnings("ignore", category=FutureWarning)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def run_naming_extras(prog: str, run: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None) -> int:
    """``run(argv)``; a missing torch or framework is one line naming the extra to install, exit 2 (the extra
    is guessed from ``--framework`` or ``--model``, as the run would choose its loader)."""
    try:
        return run(argv)
    except ModuleNotFoundError as e:
        module = missing_module(e)
        if module is None:
            raise
        p = argparse.ArgumentParser(add_help=False)
        p.add_argument("--model")
        p.add_argument("--framework")
        known, _ = p.parse_known_args(argv)
        framework = known.framework or (framework_of(known.model) if known.model else None)
        print(f"{prog}: {install_hint(module, framework)}", file=sys.stderr)
        return 2


EMPTY_MEANS_NONE = {"combine"}
"""Flags whose empty value means something: ``--combine ""`` is no combination (the reverse links only)."""


def empty_flag(parser: argparse.ArgumentParser, values: dict[str, Any]) -> str | None:
    """The first flag given as an empty (or blank) string, as the user typed it (``--reverse-model``), or None:
    an empty path or list is never what was meant, and would otherwise read as "not given"."""
    flags = {a.dest: a.option_strings[-1] if a.option_strings else a.dest for a in parser._actions}
    for dest, value in values.items():
        if dest in EMPTY_MEANS_NONE:
            continue
        if isinstance(value, str) and not value.strip():
            return flags.get(dest, dest)
    return None


def number_in(
    kind: Callable[[str], Any], low: float | None = None, high: float | None = None, low_open: bool = False
) -> Callable[[str], Any]:
    """An argparse ``type``: ``kind(text)`` (int or float) within ``[low, high]`` (``(low, high]`` when
    ``low_open``; an end None is unbounded), else a usage error naming the range."""
    lo = "" if low is None else ("(" if low_open else "[") + f"{low:g}"
    span = f"{lo}, {'' if high is None else f'{high:g}'}]" if high is not None else None

    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text}: expected {'an integer' if kind is int else 'a number'}"
            ) from None
        if v != v:  # NaN: every comparison with it is false, so the range checks below would let it through
            raise argparse.ArgumentTypeError(f"{text}: expected a number, not NaN")
        below = low is not None and (v <= low if low_open else v < low)
        if below or (high is not None and v > high):
            want = f"in {span}" if span else (f"above {low:g}" if low_open else f"at least {low:g}")
            raise argparse.ArgumentTypeError(f"{text}: expected a number {want}")
        return v

    return parse
