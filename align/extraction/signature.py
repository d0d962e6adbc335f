"""The signature of an alignment run: everything that changes its output (standard library only).

As sacrebleu's signature does for a score, it names the model (a digest of its files, or the Hub
revision), the input (a digest of its text and its line count), every setting, and the version.
Shard manifests carry it, so ``align-merge`` refuses shards of different runs and says which field
differs.

>>> a = {"model": {"sha256": "ab"}, "settings": {"level": "word"}}
>>> differing(a, {"model": {"sha256": "ab"}, "settings": {"level": "subword"}})
['settings.level']
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from typing import Any

_BLOCK = 1 << 20


def file_digest(path: str) -> str:
    """sha256 of a file's bytes, read a MiB at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def files_digest(paths: Iterable[str]) -> str:
    """One sha256 over several files, each by its base name and content digest, in name order."""
    h = hashlib.sha256()
    for p in sorted(paths, key=os.path.basename):
        h.update(f"{os.path.basename(p)}\0{file_digest(p)}\n".encode())
    return h.hexdigest()


def differing(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of the fields whose values differ between two signatures (nested dicts), sorted."""
    out = []
    for key in sorted(set(a) | set(b)):
        name = f"{prefix}{key}"
        x, y = a.get(key), b.get(key)
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            out += differing(x, y, name + ".")
        elif x != y:
            out.append(name)
    return out


def short(signature: Mapping[str, Any]) -> str:
    """A one-line form for a summary: ``model:sha256=1a2b3c4d|input:sha256=...,lines=N|...``."""
    parts = []
    for key in ("model", "reverse_model", "input"):
        if key == "reverse_model" and not signature.get(key):
            continue  # one direction: the line stays as it was
        v = signature.get(key) or {}
        # digests are cut to 12 hex digits; a test set's own signature stays whole (it is short already)
        parts.append(
            f"{key}:"
            + ",".join(
                f"{k}={str(x) if k == 'test_set' else str(x)[:12]}"
                for k, x in sorted(v.items())
                if k != "path" and not isinstance(x, Mapping)
            )
        )
    parts.append(f"version:{signature.get('version')}")
    return "|".join(parts)
