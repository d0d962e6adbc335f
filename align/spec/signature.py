"""The signature of an alignment run: everything that changes its output (standard library only).

As sacrebleu's signature does for a score, it names the model (a digest of its files, or the Hub
revision), the input (a digest of its text and its line count), every setting, and the version.
Shard manifests carry it, so ``align-merge`` refuses shards of different runs and says which field
differs. :class:`Signature` is the one way to build it (align-extract, the fairseq task, align-calibrate's
reverse-model record); its :attr:`Signature.FORMAT` says which fields it has.

>>> a = {"model": {"sha256": "ab"}, "settings": {"level": "word"}}
>>> differing(a, {"model": {"sha256": "ab"}, "settings": {"level": "subword"}})
['settings.level']
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .alignspec import AlignSpec

_BLOCK = 1 << 20


@dataclass(frozen=True)
class Signature:
    """What makes a run's output: ``model`` (its identity without the local path), ``input``, ``settings``,
    ``reverse_model`` (None for one direction: the field is then absent, so one direction's signature and
    digest stay as they were before both directions existed) and the package ``version``.

    Format 1 (0.2.0 on) is the manifest's ``signature`` object as written since 0.2.0: the fields above, and
    settings keys that appear only when used (``blends``, ``combine``), so that runs without them keep their
    digests. A change of what a field holds bumps ``FORMAT``, and from format 2 on ``as_dict`` records it as
    ``signature_format`` (so an old manifest, without it, is format 1)."""

    FORMAT = 1

    model: dict[str, Any]
    input: dict[str, Any]
    settings: dict[str, Any]
    version: str
    reverse_model: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # a command's own top-level fields

    def as_dict(self) -> dict[str, Any]:
        """The manifest's ``signature`` object."""
        out: dict[str, Any] = {"version": self.version, "model": self.model, "input": self.input}
        out["settings"] = self.settings
        if self.reverse_model is not None:
            out["reverse_model"] = self.reverse_model
        out.update(self.extra)
        return out

    def short(self) -> str:
        """The one-line form of a summary (:func:`short`)."""
        return short(self.as_dict())

    def differing(self, other: Signature | Mapping[str, Any]) -> list[str]:
        """Dotted names of the fields that differ from ``other``'s (:func:`differing`)."""
        return differing(self.as_dict(), other.as_dict() if isinstance(other, Signature) else other)


def identity_fields(identity: Mapping[str, Any]) -> dict[str, Any]:
    """A model's identity for a signature: everything but its local ``path`` (the same model anywhere)."""
    return {k: v for k, v in identity.items() if k != "path"}


HOW_ASKED = ("path", "requested")
"""Identity fields that say how a model was asked for, not what it is: its local path, the Hub revision name given
(``main`` and the commit it resolves to are one model)."""


def model_key(identity: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a model is, for comparing two identities (stored or loaded): every field but :data:`HOW_ASKED`."""
    return {k: v for k, v in (identity or {}).items() if k not in HOW_ASKED}


def spec_settings(spec: AlignSpec, heads: bool = True) -> dict[str, Any]:
    """The settings every run's signature records of its spec: methods, layers, shifts, (heads), level,
    decoder and its options, specials; blends only when there are some (format 1). A command adds its own."""
    out: dict[str, Any] = {
        "methods": list(spec.methods),
        "layers": list(spec.layers or ()),
        "shifts": list(spec.shifts),
    }
    if heads:
        out["heads"] = list(spec.heads) if spec.heads else "all"
    out.update(
        level=spec.level,
        decoder=spec.decoder,
        decoder_options=dict(spec.decoder_options),
        specials=spec.specials_policy,
    )
    if spec.blends:  # only then: a run without blends keeps its signature
        out["blends"] = [b.removesuffix(".align") for b in spec.blends]
    return out


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
