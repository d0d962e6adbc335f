"""The one way registries take an entry (standard library only): a name once, or an error saying so.

The registries themselves are plain dicts (``align.attribution.methods.METHODS``,
``align.confidence.noise.KINDS``, ...), so that looking a name up stays ``REGISTRY[name]`` and listing the valid
names ``", ".join(REGISTRY)``.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def add(registry: dict[str, T], name: str, entry: T, what: str) -> T:
    """``registry[name] = entry``; ValueError when ``name`` has an entry already (``what`` names the kind)."""
    if name in registry:
        raise ValueError(f"{what} {name!r} is registered already")
    registry[name] = entry
    return entry
