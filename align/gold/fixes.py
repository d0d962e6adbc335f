"""The repairs loading may apply to a gold set, by name in :data:`FIXES` (numpy).

A repair takes a :class:`~align.gold.testsets.LoadedTestSet` in the set's native direction (before any
flip), changes it in place and says what it changed in its ``notes``. A registry entry lists the repairs
it needs by name in :attr:`align.gold.registry.TestSet.fixes`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..links.alignments import Alignments

if TYPE_CHECKING:  # the loaded set's type only: testsets imports this module
    from .testsets import LoadedTestSet


def drop_links_outside(ts: LoadedTestSet) -> None:
    """Drop gold links that point past the end of their sentence (WPT 2005 En-Hi has one)."""
    sl, tl = ts.lengths()
    sent = ts.gold.sentence_ids()
    bad = (ts.gold.src >= sl[sent]) | (ts.gold.tgt >= tl[sent])
    for i in np.flatnonzero(bad):
        ts.notes.append(
            f"dropped gold link ({ts.gold.src[i]}, {ts.gold.tgt[i]}) (0-based, first side first) of "
            f"sentence {sent[i] + 1}: outside its {sl[sent[i]]} x {tl[sent[i]]} words"
        )
    if bad.any():
        keep = ~bad
        counts = np.bincount(sent[keep], minlength=len(ts.gold))
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        ts.gold = Alignments(offsets, ts.gold.src[keep], ts.gold.tgt[keep], ts.gold.sure[keep])


def unmojibake(word: str) -> str:
    """A word that is UTF-8 read as Latin-1 (``â\\x80\\x93``), read back (``–``); any other word unchanged."""
    if any("\x80" <= c <= "\xff" for c in word) and all(ord(c) < 256 for c in word):
        try:
            return word.encode("latin-1").decode("utf-8")
        except UnicodeDecodeError:
            return word
    return word


def repair_mojibake_second_side(ts: LoadedTestSet) -> None:
    """Repair words of the second side that are UTF-8 read as Latin-1 (KFTT's English side has 7 such lines)."""
    for k, words in enumerate(ts.tgt):
        fixed = [unmojibake(w) for w in words]
        if fixed != words:
            ts.tgt[k] = fixed
            ts.notes.append(
                f"line {k + 1}: repaired {sum(a != b for a, b in zip(words, fixed))} word(s) of UTF-8 "
                "read as Latin-1 on the second side"
            )


FIXES: dict[str, Callable[[LoadedTestSet], None]] = {
    "drop-links-outside": drop_links_outside,
    "repair-mojibake-second-side": repair_mojibake_second_side,
}
"""What loading may repair, by name; applied in the set's native direction, before any flip."""
