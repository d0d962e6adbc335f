"""The ``manifest.json`` a run writes beside its files (``align-extract``, ``align-merge``, ``align-filter``): what
later commands read of it to check that the files they are given belong together. Standard library only."""

from __future__ import annotations

import json
import os
from typing import Any

MANIFEST = "manifest.json"


def recorded_signature(folder: str) -> dict[str, Any] | None:
    """The signature a run recorded in ``folder/manifest.json`` (None when there is none to read: no manifest,
    or a file that is not a run's manifest)."""
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as f:
            man = json.load(f)
    except (OSError, ValueError):
        return None
    sig = man.get("signature") if isinstance(man, dict) else None
    return sig if isinstance(sig, dict) else None


def recorded_input(path: str) -> dict[str, Any]:
    """What the run that wrote the file ``path`` recorded of its input (``sha256``, ``lines``, ``test_set``), from
    the ``manifest.json`` beside it; empty when there is none to read (standard input, no manifest, not a run's)."""
    if path == "-":
        return {}
    read = (recorded_signature(os.path.dirname(os.path.abspath(path))) or {}).get("input")
    return read if isinstance(read, dict) else {}
