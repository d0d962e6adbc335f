"""Sentence text: ``source ||| target`` pairs and WPT ``<s snum=N>`` files, tokens split on ASCII space and tab,
and links checked against the sentences' lengths."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..links.alignments import Alignments
from .errors import AlignmentFormatError, LineCountError, LinkRangeError
from .lines import display_name, iter_line_chunks, read_lines


def read_text_pairs(path: str) -> list[tuple[list[str], list[str]]]:
    """Read ``src ||| tgt`` lines into token lists (split on ASCII space and tab only)."""
    name = display_name(path)
    pairs: list[tuple[list[str], list[str]]] = []
    for first_line, lines in iter_line_chunks(path):
        pairs.extend(parse_text_pair(line, name, first_line + i) for i, line in enumerate(lines))
    return pairs


def parse_text_pair(line: str, name: str, lineno: int) -> tuple[list[str], list[str]]:
    parts = line.split(" ||| ")
    if len(parts) != 2:
        parts = line.split("|||")
    if len(parts) != 2:
        raise AlignmentFormatError(
            name, lineno, f"found {line.count('|||')} '|||' separators; expected one line 'source ||| target'"
        )
    return split_tokens(parts[0]), split_tokens(parts[1])


def split_tokens(text: str) -> list[str]:
    """Split on ASCII space and tab only: U+3000 and other Unicode spaces can be tokens."""
    return [t for t in re.split(r"[ \t]+", text) if t]


_WPT_RE = re.compile(r"\s*<s snum=\"?([0-9]+)\"?>(.*)</s>\s*")


def read_wpt_text(path: str) -> tuple[list[int], list[list[str]]]:
    """Read a WPT text file of ``<s snum=N> tokens </s>`` lines: sentence numbers and tokens."""
    name = str(path)
    ids, sents = [], []
    for first_line, lines in iter_line_chunks(path):
        for i, line in enumerate(lines):
            m = _WPT_RE.fullmatch(line)
            if not m:
                raise AlignmentFormatError(name, first_line + i, f"found {line[:60]!r}; expected '<s snum=N> ... </s>'")
            ids.append(int(m[1]))
            sents.append(split_tokens(m[2]))
    return ids, sents


def check_links_in_range(
    alignments: Alignments, src_lengths: Sequence[int], tgt_lengths: Sequence[int], path: str, text: str = ""
) -> None:
    """Raise LinkRangeError naming the first sentence (its line, for one-line-per-sentence formats)
    whose link lies outside it; LineCountError when the counts differ (``text``: the text's name, for it)."""
    if len(src_lengths) != len(alignments) or len(tgt_lengths) != len(alignments):
        raise LineCountError(
            path,
            None,
            f"{len(alignments)} alignment lines but {len(src_lengths)} sentence pairs in the text{f' {text}' if text else ''}",
        )
    sent = alignments.sentence_ids()
    sl = np.asarray(src_lengths, dtype=np.int64)[sent]
    tl = np.asarray(tgt_lengths, dtype=np.int64)[sent]
    bad = np.flatnonzero((alignments.src >= sl) | (alignments.tgt >= tl))
    if len(bad):
        i = int(bad[0])
        k = int(sent[i])
        raise LinkRangeError(
            path,
            k + 1,
            f"sentence {k + 1}: link ({alignments.src[i]}, {alignments.tgt[i]}) (0-based "
            f"src, tgt) is outside a sentence pair of {sl[i]} source and {tl[i]} "
            "target tokens; expected indices below the sentence lengths",
        )


def read_sentence_ids(path: str) -> list[int]:
    """The sentence numbers of a NAACL set, one per line (or a WPT ``<s snum=N>`` text), in file order;
    AlignmentFormatError naming the file and line of one that is not a number, or a number given twice."""
    lines = read_lines(path)
    if lines and lines[0].lstrip().startswith("<s"):
        ids = read_wpt_text(path)[0]
    else:
        ids = []
        for i, line in enumerate(lines, 1):
            if not re.fullmatch(r"[ \t]*[0-9]+[ \t]*", line):
                raise AlignmentFormatError(path, i, f"found {line.strip()!r}; expected one sentence number")
            ids.append(int(line))
    seen: dict[int, int] = {}
    for i, sid in enumerate(ids, 1):
        if sid in seen:
            raise AlignmentFormatError(
                path, i, f"sentence number {sid} again (first on line {seen[sid]}); expected each sentence number once"
            )
        seen[sid] = i
    return ids
