"""What an extraction computes and how its outputs are named, without torch: a setting (method, shift,
layer, head) and a blend of settings (:mod:`.setting`), and the whole of what a run computes
(:class:`.alignspec.AlignSpec`). Standard library only; every other layer may import it
(``tests/test_imports.py`` keeps it so)."""

from .alignspec import LEVELS, SPECIALS, AlignSpec
from .setting import SHIFTS, Blend, Setting, combined_file, is_blend, parse, reverse_file

__all__ = [
    "LEVELS",
    "SHIFTS",
    "SPECIALS",
    "AlignSpec",
    "Blend",
    "Setting",
    "combined_file",
    "is_blend",
    "parse",
    "reverse_file",
]
