"""One setting of an extraction (method, shift, layer, head) and a blend of settings, with the one
parser and the one spelling of their names (standard library only).

A setting's name is ``METHOD-SHIFT-layerN[-headH]`` (``norm-awi-layer0``, ``attn-head-awo-layer2-head3``);
its alignment file is the name plus ``.align``. A blend is two or more different settings of one
direction joined by ``+`` (``alti-awi-layer0+attn-awo-layer2``): :mod:`align.links.blend` says what it
computes. Every file of a setting is named here: the forward links (``NAME.align``), the reverse model's
(``NAME.reverse.align``), each combination of the two (``NAME.gmean-threshold.align``), the score files
(:mod:`align.io.softscores`) and a calibration's (``NAME.probs``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SHIFTS = ("awo", "awi")
"""``awo``: target word i read at the decoder step that predicts it; ``awi``: where it is the input."""

SUFFIX = ".align"
SEPARATOR = "+"

# A method is lowercase letters, digits, '_' and '-' (``attn-res-ln-ff``); the shift is the last of the
# name's parts that is one, so a method may itself contain a dash.
_METHOD = r"[a-z][a-z0-9_-]*?"
_SETTING = re.compile(
    rf"^(?P<method>{_METHOD})-(?P<shift>{'|'.join(SHIFTS)})-layer(?P<layer>\d+)(?:-head(?P<head>\d+))?$"
)
# Grid rows may be named by any method string (``norm-best``, ``norm-mean`` of per-head summaries).
_ANY_METHOD = re.compile(rf"^(?P<method>.+)-(?P<shift>{'|'.join(SHIFTS)})-layer(?P<layer>\d+)(?:-head(?P<head>\d+))?$")


@dataclass(frozen=True, order=True)
class Setting:
    """One (method, shift, layer[, head]) cell of an extraction: ``layer`` and ``head`` are 0-based;
    ``head`` is None for a layer-level setting (a per-head method averaged over its heads)."""

    method: str
    shift: str
    layer: int
    head: int | None = None

    @classmethod
    def parse(cls, name: str, any_method: bool = False) -> Setting:
        """``norm-head-awi-layer2-head3[.align]`` -> Setting('norm-head', 'awi', 2, 3); ValueError if not one.

        ``any_method`` accepts any method string (grid rows such as ``norm-best-awi-layer0``)."""
        base = name.removesuffix(SUFFIX)
        m = None if SEPARATOR in base else (_ANY_METHOD if any_method else _SETTING).match(base)
        if m is None:
            raise ValueError(
                f"{base!r} is not a setting; expected METHOD-SHIFT-layerN[-headH] (e.g. alti-awi-layer0) "
                f"with SHIFT one of {', '.join(SHIFTS)}"
            )
        head = m["head"]
        return cls(m["method"], m["shift"], int(m["layer"]), None if head is None else int(head))

    @property
    def name(self) -> str:
        """``METHOD-SHIFT-layerN[-headH]``."""
        return f"{self.method}-{self.shift}-layer{self.layer}" + ("" if self.head is None else f"-head{self.head}")

    @property
    def file(self) -> str:
        """The alignment file's name: ``name`` + ``.align``."""
        return self.name + SUFFIX

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Blend:
    """Two or more different layer-level settings of one direction, in the order given (the order
    names the files; the blend's matrix does not depend on it)."""

    parts: tuple[Setting, ...]

    def __post_init__(self) -> None:
        if len(set(self.parts)) < 2 or len(set(self.parts)) != len(self.parts):
            raise ValueError(f"blend {self.name!r}: expected two or more different settings joined by {SEPARATOR!r}")

    @classmethod
    def parse(cls, name: str) -> Blend:
        """``alti-awi-layer0+attn-awo-layer2[.align]`` -> its settings; ValueError saying what was expected."""
        base = name.removesuffix(SUFFIX)
        parts = []
        for p in base.split(SEPARATOR):
            m = _SETTING.match(p)
            if m and m["head"] is not None:
                raise ValueError(
                    f"blend {base!r}: {p!r} is one head's setting; a blend averages layer-level settings "
                    f"(METHOD-SHIFT-layerN: per-head methods blend as the mean of the heads given by --heads)"
                )
            if not m:
                raise ValueError(
                    f"blend {base!r}: {p!r} is not a setting; expected METHOD-SHIFT-layerN (e.g. alti-awi-layer0) "
                    f"with SHIFT one of {', '.join(SHIFTS)}, settings joined by {SEPARATOR!r}"
                )
            parts.append(Setting(m["method"], m["shift"], int(m["layer"])))
        return cls(tuple(parts))

    @property
    def name(self) -> str:
        """The settings' names joined by ``+``."""
        return SEPARATOR.join(p.name for p in self.parts)

    @property
    def file(self) -> str:
        """The alignment file's name: ``name`` + ``.align``."""
        return self.name + SUFFIX

    def key(self) -> frozenset[Setting]:
        """What makes two blends the same: their settings, in any order."""
        return frozenset(self.parts)

    def __str__(self) -> str:
        return self.name


Named = Setting | Blend


def is_blend(name: str) -> bool:
    """True for a blend name (``SETTING+SETTING...``, with or without ``.align``)."""
    return SEPARATOR in name


def parse(name: str) -> Named:
    """A setting or a blend from its name (with or without ``.align``); ValueError if neither."""
    return Blend.parse(name) if is_blend(name) else Setting.parse(name)


def base_name(name: str) -> str:
    """A file or setting name without ``.align``."""
    return name.removesuffix(SUFFIX)


def reverse_file(name: str) -> str:
    """The reverse model's links of setting (or blend) ``name``: ``NAME.reverse.align``, source first."""
    return base_name(name) + ".reverse" + SUFFIX


def combined_file(name: str, combination: str) -> str:
    """The links of ``name``'s two directions combined by ``combination`` (``gmean:threshold`` ->
    ``NAME.gmean-threshold.align``)."""
    return base_name(name) + "." + combination.replace(":", "-") + SUFFIX
