"""Keep the pairs of a corpus above a sentence score, or its best fraction; nothing lost (numpy only).

Every input line goes to exactly one of two files: ``kept.txt`` (the line as it was, byte for byte, in input
order; a UTF-8 byte-order mark at the start of the input is dropped, and a last line without a newline gets one) or
``rejected.tsv`` (``LINE<TAB>SCORE<TAB>the line``, 1-based line numbers, in input order). The
scores come from ``sentence_scores.tsv`` of ``align-extract --sentence-scores`` (one ``LINE<TAB>SCORE`` per
input line, merged from shards by ``align-merge``), so scoring shards as extraction does.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

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
        fraction = float(self.keep_fraction or 0.0)  # set: __post_init__ checked that one of the two is
        k = math.floor(fraction * n + 0.5)  # halves up (round() would round them to even)
        order = np.lexsort((np.arange(n), -scores))  # best first; equal scores in line order
        out = np.zeros(n, dtype=bool)
        out[order[:k]] = True
        return out


def read_scores(path: str) -> np.ndarray:
    """(n,) the scores of a ``LINE<TAB>SCORE`` file whose lines number 1, 2, ..., n in order; AlignmentFormatError
    naming the file, the line and what was expected."""
    out: list[float] = []
    with LineReader(path) as reader:
        while True:
            first = reader.next_line
            block = reader.take(BLOCK_LINES)
            for i, raw in enumerate(block):
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
                return np.array(out, dtype=np.float64)


def split(input_path: str, scores: np.ndarray, keep: np.ndarray, folder: str) -> dict[str, int]:
    """Write ``folder/kept.txt`` and ``folder/rejected.tsv`` from the input's lines, streaming; the counts.
    AlignmentFormatError when the input has another number of lines than there are scores."""
    kept = rejected = 0
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
                if keep[n - 1]:
                    k_out.write(raw if raw.endswith(b"\n") else raw + b"\n")
                    kept += 1
                else:
                    r_out.write(f"{n}\t{scores[n - 1]:.6f}\t{decode_line(raw, reader.name, n)}\n")
                    rejected += 1
            if len(block) < BLOCK_LINES:
                break
    if kept + rejected != len(scores):
        raise AlignmentFormatError(
            reader.name, None, f"{kept + rejected} lines; expected {len(scores)}, one per score (the input the "
            "scores were computed on)",
        )  # fmt: skip
    return {"lines": kept + rejected, "kept": kept, "rejected": rejected}
