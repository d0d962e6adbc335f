"""Keep the pairs of a corpus above a sentence score, or its best fraction; nothing lost (numpy only).

Every input line goes to exactly one of two files: ``kept.txt`` (the line as it was, byte for byte, in input
order; a UTF-8 byte-order mark at the start of the input is dropped, and a last line without a newline gets the
ending of the line before it, ``\r\n`` or ``\n``) or ``rejected.tsv`` (``LINE<TAB>SCORE<TAB>the line``, 1-based line numbers, in input order). The
scores come from ``sentence_scores.tsv`` of ``align-extract --sentence-scores`` (one ``LINE<TAB>SCORE`` per
input line, merged from shards by ``align-merge``), so scoring shards as extraction does.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..io.errors import AlignmentFormatError
from ..io.lines import BLOCK_LINES, LineReader, decode_line

KEPT, REJECTED = "kept.txt", "rejected.tsv"
"""The two files every input line goes to one of."""


@dataclass(frozen=True)
class Rule:
    """Which pairs to keep: ``min_score`` (score >= it) or ``keep_fraction`` (the best share: the whole number of
    lines nearest ``fraction * lines``, halves up; equal scores in line order), exactly one of them."""

    min_score: float | None = None
    keep_fraction: float | None = None

    def __post_init__(self) -> None:
        if (self.min_score is None) == (self.keep_fraction is None):
            raise ValueError("give one of a minimum score and a fraction to keep")
        if self.min_score is not None and not 0.0 <= self.min_score <= 1.0:
            raise ValueError(f"minimum score {self.min_score}; expected a number from 0 to 1")
        if self.keep_fraction is not None and not 0.0 < self.keep_fraction <= 1.0:
            raise ValueError(f"fraction to keep {self.keep_fraction}; expected a number in (0, 1]")

    def keep(self, scores: np.ndarray) -> np.ndarray:
        """(n,) scores -> (n,) bool, which lines to keep."""
        if self.min_score is not None:
            return scores >= self.min_score
        n = len(scores)
        # exact decimal arithmetic: 0.285 * 100 is 28.4999... in binary floating point, and its half must go up;
        # repr() is the shortest decimal that reads back as this float (the number the user typed)
        fraction = Fraction(repr(float(self.keep_fraction or 0.0)))  # set: __post_init__ checked one of the two is
        k = math.floor(fraction * n + Fraction(1, 2))  # halves up (round() would round them to even)
        order = np.lexsort((np.arange(n), -scores))  # best first; equal scores in line order
        out = np.zeros(n, dtype=bool)
        out[order[:k]] = True
        return out


def read_scores(path: str) -> tuple[np.ndarray, str]:
    """(n,) the scores of a ``LINE<TAB>SCORE`` file whose lines number 1, 2, ..., n in order, and the sha256 of its
    lines as read (decompressed; hashed while reading, so standard input and pipes get their own digest, not that
    of an empty file); AlignmentFormatError naming the file, the line and what was expected."""
    out: list[float] = []
    digest = hashlib.sha256()
    with LineReader(path) as reader:
        while True:
            first = reader.next_line
            block = reader.take(BLOCK_LINES)
            for i, raw in enumerate(block):
                digest.update(raw)
                n = first + i
                parts = decode_line(raw, reader.name, n).split("\t")
                if len(parts) != 2 or parts[0] != str(n):
                    raise AlignmentFormatError(
                        reader.name, n, f"found {decode_line(raw, reader.name, n)[:60]!r}; expected '{n}<TAB>SCORE' "
                        "(sentence_scores.tsv of align-extract --sentence-scores: one line per pair, in order)",
                    )  # fmt: skip
                try:
                    v = float(parts[1])
                except ValueError:
                    v = math.nan
                if not 0.0 <= v <= 1.0:
                    raise AlignmentFormatError(reader.name, n, f"score {parts[1]!r}; expected a number from 0 to 1")
                out.append(v)
            if len(block) < BLOCK_LINES:
                return np.array(out, dtype=np.float64), digest.hexdigest()


def split(
    input_path: str, scores: np.ndarray, keep: np.ndarray, folder: str, scores_name: str = "the scores"
) -> dict[str, Any]:
    """Write ``folder/kept.txt`` and ``folder/rejected.tsv`` from the input's lines, streaming; the counts and
    the sha256 of the input's lines as read (``input_sha256``, as ``align-extract``'s signature has it).
    AlignmentFormatError when the input has another number of lines than there are scores (read from
    ``scores_name``) or a line that is not UTF-8 (kept or not: whether a file is accepted must not depend on the
    rule)."""
    kept = rejected = 0
    digest = hashlib.sha256()  # of the input's lines as read: what align-extract's signature records of it
    ending = b"\n"  # the line ending a last line without one gets: that of the line before it
    with (
        LineReader(input_path) as reader,
        open(os.path.join(folder, KEPT), "wb") as k_out,
        open(os.path.join(folder, REJECTED), "w", encoding="utf-8", newline="\n") as r_out,
    ):
        while True:
            first = reader.next_line
            block = reader.take(BLOCK_LINES)
            if first - 1 + len(block) > len(scores):
                raise AlignmentFormatError(
                    reader.name, len(scores) + 1, f"a line beyond the {len(scores)} the scores are for; "
                    "expected the input the scores were computed on",
                )  # fmt: skip
            for i, raw in enumerate(block):
                n = first + i
                digest.update(raw)
                text = decode_line(raw, reader.name, n)
                if raw.endswith(b"\n"):
                    ending = b"\r\n" if raw.endswith(b"\r\n") else b"\n"
                if keep[n - 1]:  # a last line ending in a bare CR gets the LF only
                    k_out.write(raw if raw.endswith(b"\n") else raw + (b"\n" if raw.endswith(b"\r") else ending))
                    kept += 1
                else:
                    r_out.write(f"{n}\t{scores[n - 1]:.6f}\t{text}\n")
                    rejected += 1
            if len(block) < BLOCK_LINES:
                break
    if kept + rejected != len(scores):
        raise AlignmentFormatError(
            scores_name, kept + rejected + 1, f"a score for line {kept + rejected + 1}, but {reader.name} has "
            f"{kept + rejected} lines; expected the scores of that input (one per line)",
        )  # fmt: skip
    return {"lines": kept + rejected, "kept": kept, "rejected": rejected, "input_sha256": digest.hexdigest()}
