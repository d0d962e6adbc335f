"""One reader per text layout of a gold set's original files, by name in :data:`LAYOUTS` (standard library and
align.io).

A reader takes the paths of the layout's files and returns the first side's and the second side's word
lists (one list a sentence) and, for layouts whose text numbers its sentences, those numbers (the
NAACL gold refers to them), else None. Words are split on ASCII space and tab only. A registry entry
names its layout first in :attr:`align.gold.registry.TestSet.text`: ``("pairs", FILE)``. Adding a layout
is one function and one entry here, with a test in ``tests/gold/test_layouts.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..io.errors import AlignmentFormatError
from ..io.lines import read_lines
from ..io.text import read_text_pairs, read_wpt_text, split_tokens
from .registry import TestSetError

Words = list[list[str]]
"""(n_sentences,) word lists of one side."""

Text = tuple[Words, Words, list[int] | None]
"""What a reader returns: the first side's words, the second side's, the sentence numbers (or None)."""


class UnknownLayoutError(TestSetError):
    """A text layout that :data:`LAYOUTS` does not have (a fault of a registry entry); the message lists the valid
    ones."""


def _files(layout: str, paths: Sequence[str], n: int) -> None:
    if len(paths) != n:
        raise TestSetError(f"text layout {layout!r} reads {n} file(s); the entry names {len(paths)}: {list(paths)}")


def read_pairs(paths: Sequence[str]) -> Text:
    """One file of ``first ||| second`` lines."""
    _files("pairs", paths, 1)
    pairs = read_text_pairs(paths[0])
    return [p[0] for p in pairs], [p[1] for p in pairs], None


def read_sides(paths: Sequence[str]) -> Text:
    """Two files, the first side's and the second side's, one sentence a line."""
    _files("sides", paths, 2)
    a, b = ([split_tokens(line) for line in read_lines(p)] for p in paths)
    return a, b, None


def read_wpt(paths: Sequence[str]) -> Text:
    """Two files of ``<s snum=N> words </s>`` lines (WPT), the first side's and the second's, with the same
    sentence numbers; the numbers are returned."""
    _files("wpt", paths, 2)
    (ids, a), (ids_b, b) = read_wpt_text(paths[0]), read_wpt_text(paths[1])
    if ids != ids_b:
        raise AlignmentFormatError(paths[1], None, f"sentence numbers differ from {paths[0]}'s; expected the same")
    return a, b, ids


LAYOUTS: dict[str, Callable[[Sequence[str]], Text]] = {
    "pairs": read_pairs,
    "sides": read_sides,
    "wpt": read_wpt,
}
"""Every text layout by name -> its reader."""


def read_text(layout: str, paths: Sequence[str]) -> Text:
    """Read the text of layout ``layout`` from ``paths``; UnknownLayoutError lists the valid layouts."""
    if layout not in LAYOUTS:
        raise UnknownLayoutError(f"unknown text layout {layout!r}; valid: {', '.join(LAYOUTS)}")
    return LAYOUTS[layout](paths)
