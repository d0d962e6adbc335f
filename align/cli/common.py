"""What the model-running commands share: quiet frameworks, and a missing extra named in one line."""

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
