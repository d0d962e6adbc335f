"""What an extraction computes, as plain data (standard library only): :class:`AlignSpec`.

The engine (:mod:`align.extraction.engine`) runs it; :func:`align.extraction.engine.check_spec` checks it
against the method and decoder registries and the model. Keeping it free of torch lets a command build,
check and sign a run before any framework loads.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .setting import SHIFTS, Blend, Setting, base_name

LEVELS = ("word", "subword", "word-any")
"""``word``: subword scores merged, then decoded; ``subword``: token positions; ``word-any``: words linked if
any of their pieces are."""
SPECIALS = ("drop", "null")
"""``drop``: EOS removed before decoding; ``null``: a word whose best source is EOS stays unaligned."""


def check_choices(values: Sequence[str], valid: Collection[str], what: str) -> None:
    """Raise ValueError listing the valid names if any value is unknown."""
    bad = [v for v in values if v not in valid]
    if bad:
        raise ValueError(f"unknown {what} {', '.join(bad)}; valid: {', '.join(valid)}")


@dataclass(frozen=True)
class AlignSpec:
    """What to compute: methods (see ``align.attribution.methods.METHODS``), layers (0-based; None = all),
    shifts (awo/awi), heads averaged by per-head methods (None = all), level (word, subword,
    word-any), decoder name and its options, what happens to specials, and blends (file names,
    :class:`align.spec.setting.Blend`)."""

    methods: tuple[str, ...] = ("norm",)
    layers: tuple[int, ...] | None = None
    shifts: tuple[str, ...] = ("awo",)
    heads: tuple[int, ...] | None = None
    level: str = "word"
    decoder: str = "argmax"
    decoder_options: tuple[tuple[str, float], ...] = ()
    src_reduce: str = "sum"
    tgt_reduce: str = "mean"
    specials_policy: str = "drop"
    blends: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def blend_settings(self) -> list[tuple[str, Blend]]:
        """``(file name, Blend)`` of every blend (:mod:`align.links.blend`)."""
        return self._blend_settings

    @cached_property
    def _blend_settings(self) -> list[tuple[str, Blend]]:
        # parsed once per spec: blend_settings runs for every pair and batch
        return [(name, Blend.parse(name)) for name in self.blends]

    @property
    def score_methods(self) -> tuple[str, ...]:
        """The methods to compute: the spec's, then any a blend needs beyond them."""
        extra = [p.method for _, b in self.blend_settings() for p in b.parts if p.method not in self.methods]
        return self.methods + tuple(dict.fromkeys(extra))

    @property
    def score_cells(self) -> frozenset[tuple[str, int]] | None:
        """The (method, layer) cells to compute when blends add some (None: every method at every layer)."""
        if not self.blends or self.layers is None:
            return None
        cells = {(m, la) for m in self.methods for la in self.layers}
        return frozenset(cells | {(p.method, p.layer) for _, b in self.blend_settings() for p in b.parts})

    @property
    def score_layers(self) -> tuple[int, ...] | None:
        """The layers to compute: the spec's, then any a blend needs beyond them."""
        if self.layers is None:
            return None
        extra = [p.layer for _, b in self.blend_settings() for p in b.parts if p.layer not in self.layers]
        return self.layers + tuple(dict.fromkeys(extra))

    def validate(self, n_layers: int, n_heads: int, methods: Collection[str], decoders: Collection[str]) -> AlignSpec:
        """Check every name against ``methods`` and ``decoders`` (the registries' names) and every index
        against a model of ``n_layers`` decoder layers and ``n_heads`` heads; returns self or raises ValueError."""
        check_choices(self.methods, list(methods), "method")
        check_choices(self.shifts, SHIFTS, "shift")
        check_choices([self.level], LEVELS, "level")
        check_choices([self.specials_policy], SPECIALS, "specials policy")
        check_choices([self.decoder], list(decoders), "decoder")
        for layer in self.layers or ():
            if not 0 <= layer < n_layers:
                raise ValueError(f"alignment layer {layer} does not exist; the decoder has layers 0..{n_layers - 1}")
        for h in self.heads or ():
            if not 0 <= h < n_heads:
                raise ValueError(f"head {h} does not exist; the cross-attention has heads 0..{n_heads - 1}")
        check_blends(self.blends, methods, self.level, self.specials_policy)
        for name, blend in self.blend_settings():
            if name != blend.file:
                raise ValueError(f"blend {name!r}: expected its file name {blend.file!r} (Aligner.spec makes it)")
            for p in blend.parts:
                if not 0 <= p.layer < n_layers:
                    raise ValueError(
                        f"blend {base_name(name)!r}: layer {p.layer} does not exist; "
                        f"the decoder has layers 0..{n_layers - 1}"
                    )
        return self


def check_blends(blends: Sequence[str], methods: Collection[str], level: str = "word", specials: str = "drop") -> None:
    """Every check of blend names that needs no model: settings, methods (among ``methods``), shifts, the same
    blend twice (in any order), level and specials; ValueError naming the blend."""
    if blends and (level != "word" or specials != "drop"):
        raise ValueError("blends average word scores: they need --level word and --specials drop")
    seen: dict[frozenset[Setting], str] = {}
    for name in blends:
        base = base_name(name)
        blend = Blend.parse(name)
        for p in blend.parts:
            if p.method not in methods:
                raise ValueError(f"blend {base!r}: unknown method {p.method}; valid: {', '.join(methods)}")
        key = blend.key()
        if key in seen:
            raise ValueError(f"blend {base!r} given twice (as {seen[key]!r} too: a blend's order does not matter)")
        seen[key] = base
