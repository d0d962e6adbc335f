"""Alignment and text files: read and write, with every index-base and direction change made here.

Formats (``FORMATS``), one sentence per line unless noted:

- ``pharaoh``: ``i-j`` tokens, 0-based, source first (fast_align, awesome-align, Moses).
- ``talp``: ``i-j`` sure and ``ipj`` possible tokens, 1-based (the RWTH and Hansards gold sets).
- ``naacl``: one link per line, ``sentno i j [S|P] [confidence]``, 1-based (WPT 2003/2005).
  Sentence numbers map to corpus lines through ``naacl_ids``; sentences without links are empty.

``pharaoh`` and ``talp`` also accept ``i-j-S`` / ``i-j-P`` tokens (DeNero's possible links), so
only the default index base tells them apart. Internally links are always 0-based ``(src, tgt)``.
Paths ending in ``.gz`` are gunzipped; ``-`` is standard input / output.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import sys
import tempfile
from contextlib import contextmanager
from typing import IO, Iterator, Sequence

import numpy as np

from .links import Alignments

FORMATS: dict[str, int] = {"pharaoh": 0, "talp": 1, "naacl": 1}
"""Format name -> default index base."""


class AlignmentFormatError(ValueError):
    """Bad input in a file: ``path:line: what was found, what was expected``."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class LineCountError(AlignmentFormatError):
    """Two files that must be parallel have different numbers of lines."""


class LinkRangeError(AlignmentFormatError):
    """A link points outside its sentence, or below the file's index base."""


_CHUNK_LINES = 1 << 16
_TOKEN = r"\d{1,7}(?:p\d{1,7}|-\d{1,7}(?:-[SP])?)"
_LINE_RE = re.compile(rf"[ \t]*(?:{_TOKEN}(?:[ \t]+{_TOKEN})*)?[ \t]*")
_TOKEN_RE = re.compile(r"(\d+)(?:p(\d+)|-(\d+)(?:-([SP]))?)")
_BAD_TOKEN_RE = re.compile(r"[^ \t]+")
_NAACL_RE = re.compile(r"[ \t]*(\d{1,9})[ \t]+(\d{1,7})[ \t]+(\d{1,7})(?:[ \t]+([SP]))?"
                       r"(?:[ \t]+([-+0-9.eE]+))?[ \t]*")


def check_format(fmt: str) -> int:
    """Default index base of format ``fmt``; raises ValueError listing the valid names."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown alignment format {fmt!r}; valid: {', '.join(FORMATS)}")
    return FORMATS[fmt]


@contextmanager
def _open_binary(path: str) -> Iterator[IO[bytes]]:
    if path == "-":
        yield sys.stdin.buffer
    elif str(path).endswith(".gz"):
        with gzip.open(path, "rb") as f:
            yield f
    else:
        with open(path, "rb") as f:
            yield f


def iter_line_chunks(path: str) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(first_line_number, lines)`` chunks of a UTF-8 file, newline and CR stripped."""
    name = "<stdin>" if path == "-" else str(path)
    lineno = 1
    try:
        with _open_binary(path) as f:
            while True:
                raw = f.readlines(1 << 22)
                if not raw:
                    break
                try:
                    lines = raw and b"".join(raw).decode("utf-8").split("\n")
                except UnicodeDecodeError:
                    for i, b in enumerate(raw):
                        try:
                            b.decode("utf-8")
                        except UnicodeDecodeError as e:
                            raise AlignmentFormatError(
                                name, lineno + i, f"bytes {b[e.start:e.end + 3]!r} are not UTF-8; "
                                "expected a UTF-8 text file") from None
                    raise
                if raw[-1].endswith(b"\n"):
                    lines.pop()
                lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
                yield lineno, lines
                lineno += len(lines)
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise AlignmentFormatError(name, None, f"cannot read: {e}") from None


def read_lines(path: str) -> list[str]:
    """All lines of a UTF-8 text file (newline stripped), with file:line errors for bad bytes."""
    out: list[str] = []
    for _, lines in iter_line_chunks(path):
        out.extend(lines)
    return out


def read_alignments(
    path: str,
    fmt: str = "pharaoh",
    base: int | None = None,
    reverse: bool = False,
    naacl_ids: Sequence[int] | None = None,
) -> Alignments:
    """Read an alignment file into 0-based ``(src, tgt)`` links; ``reverse`` swaps the file's sides.

    ``naacl_ids`` gives the sentence number of each corpus line for ``naacl`` files; by default
    sentences are numbered 1..max.
    """
    default_base = check_format(fmt)
    base = default_base if base is None else base
    name = "<stdin>" if path == "-" else str(path)
    if fmt == "naacl":
        sent, a, b, sure, n, linenos = _read_naacl(path, name, naacl_ids)
    else:
        sent, a, b, sure, n = _read_token_lines(path, name)
        linenos = sent + 1
    a, b = a - base, b - base
    if len(a) and (a.min() < 0 or b.min() < 0):
        bad = int(np.flatnonzero((a < 0) | (b < 0))[0])
        raise LinkRangeError(name, int(linenos[bad]), f"index below {base} in a {base}-based file "
                             f"(link {a[bad] + base}-{b[bad] + base}); expected indices >= {base}")
    if reverse:
        a, b = b, a
    return Alignments.from_arrays(sent, a, b, sure, n)


def _read_token_lines(path: str, name: str):
    sents, firsts, seconds, sures = [], [], [], []
    n = 0
    for first_line, lines in iter_line_chunks(path):
        counts = np.empty(len(lines), dtype=np.int64)
        for i, line in enumerate(lines):
            if not _LINE_RE.fullmatch(line):
                bad = next((t for t in _BAD_TOKEN_RE.findall(line) if not re.fullmatch(_TOKEN, t)), line)
                raise AlignmentFormatError(
                    name, first_line + i, f"bad link {bad!r}; expected space-separated links "
                    "'i-j' (sure), 'ipj' or 'i-j-P' (possible) with non-negative integers")
            counts[i] = len(line.split())
        text = " ".join(lines)
        if counts.sum() == 0:
            a = b = np.zeros(0, dtype=np.int64)
            sure = np.zeros(0, dtype=bool)
        elif "S" in text or "P" in text:
            triples = [(int(m[1]), int(m[2] or m[3]), m[2] is None and m[4] != "P")
                       for line in lines for m in _TOKEN_RE.finditer(line)]
            arr = np.array(triples, dtype=np.int64).reshape(-1, 3)
            a, b, sure = arr[:, 0], arr[:, 1], arr[:, 2].astype(bool)
        else:
            arr = np.fromstring(text.replace("-", " 0 ").replace("p", " 1 "), dtype=np.int64, sep=" ")
            if len(arr) != 3 * counts.sum():  # the line regex makes this impossible; never trust silently
                raise RuntimeError(f"{name}:{first_line}: parsed {len(arr)} numbers for {counts.sum()} links")
            arr = arr.reshape(-1, 3)
            a, b, sure = arr[:, 0], arr[:, 2], arr[:, 1] == 0
        sents.append(np.repeat(np.arange(n, n + len(lines), dtype=np.int64), counts))
        firsts.append(a)
        seconds.append(b)
        sures.append(sure)
        n += len(lines)
    if not sents:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, np.zeros(0, dtype=bool), 0
    return (np.concatenate(sents), np.concatenate(firsts), np.concatenate(seconds),
            np.concatenate(sures), n)


def _read_naacl(path: str, name: str, naacl_ids: Sequence[int] | None):
    rows = []
    for first_line, lines in iter_line_chunks(path):
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            m = _NAACL_RE.fullmatch(line)
            if not m:
                raise AlignmentFormatError(name, first_line + i, f"bad NAACL line {line!r}; "
                                           "expected 'sentno i j [S|P] [confidence]'")
            rows.append((int(m[1]), int(m[2]), int(m[3]), m[4] != "P", first_line + i))
    if naacl_ids is None:
        max_id = max((r[0] for r in rows), default=0)
        naacl_ids = range(1, max_id + 1)
    index = {int(sid): k for k, sid in enumerate(naacl_ids)}
    if len(index) != len(naacl_ids):
        raise ValueError("naacl_ids has repeated sentence numbers")
    sent = np.empty(len(rows), dtype=np.int64)
    for r, row in enumerate(rows):
        k = index.get(row[0])
        if k is None:
            raise AlignmentFormatError(name, row[4], f"sentence number {row[0]} is not among the "
                                       f"{len(index)} sentence numbers of the corpus")
        sent[r] = k
    arr = np.array([r[1:5] for r in rows], dtype=np.int64).reshape(-1, 4)
    return sent, arr[:, 0], arr[:, 1], arr[:, 2].astype(bool), len(index), arr[:, 3]


def format_links(links: Sequence[tuple[int, int]], possible: Sequence[tuple[int, int]] = (),
                 fmt: str = "pharaoh", base: int | None = None, reverse: bool = False) -> str:
    """One line (no newline) of a ``pharaoh`` or ``talp`` file for 0-based ``(src, tgt)`` links."""
    default = check_format(fmt)
    if fmt == "naacl":
        raise ValueError("format_links writes token-per-link formats; use write_alignments for naacl")
    base = default if base is None else base
    items = [(s, t, True) for s, t in links] + [(s, t, False) for s, t in possible]
    if reverse:
        items = [(t, s, k) for s, t, k in items]
    items.sort()
    out = []
    for s, t, is_sure in items:
        if is_sure:
            out.append(f"{s + base}-{t + base}")
        elif fmt == "talp":
            out.append(f"{s + base}p{t + base}")
        else:
            out.append(f"{s + base}-{t + base}-P")
    return " ".join(out)


def write_alignments(alignments: Alignments, path: str, fmt: str = "pharaoh",
                     base: int | None = None, reverse: bool = False) -> None:
    """Write a corpus atomically (a temporary file renamed into place); ``-`` writes to stdout."""
    default = check_format(fmt)
    base = default if base is None else base
    lines = []
    for k in range(len(alignments)):
        a, b = alignments.offsets[k], alignments.offsets[k + 1]
        src, tgt, sure = alignments.src[a:b], alignments.tgt[a:b], alignments.sure[a:b]
        if reverse:
            src, tgt = tgt, src
        order = np.lexsort((tgt, src))
        if fmt == "naacl":
            lines.extend(f"{k + 1} {s + base} {t + base} {'S' if u else 'P'}"
                         for s, t, u in zip(src[order].tolist(), tgt[order].tolist(), sure[order].tolist()))
        else:
            toks = []
            for s, t, u in zip(src[order].tolist(), tgt[order].tolist(), sure[order].tolist()):
                if u:
                    toks.append(f"{s + base}-{t + base}")
                else:
                    toks.append(f"{s + base}p{t + base}" if fmt == "talp" else f"{s + base}-{t + base}-P")
            lines.append(" ".join(toks))
    write_text_atomic(path, "".join(line + "\n" for line in lines))


def write_text_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder, so no partial file is left."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        if str(path).endswith(".gz"):
            with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb") as f:
                f.write(text.encode("utf-8"))
        else:
            with io.open(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_text_pairs(path: str) -> list[tuple[list[str], list[str]]]:
    """Read ``src ||| tgt`` lines into token lists (split on ASCII space and tab only)."""
    name = "<stdin>" if path == "-" else str(path)
    pairs = []
    for first_line, lines in iter_line_chunks(path):
        for i, line in enumerate(lines):
            parts = line.split(" ||| ")
            if len(parts) != 2:
                parts = line.split("|||")
            if len(parts) != 2:
                raise AlignmentFormatError(name, first_line + i, f"found {line.count('|||')} '|||' "
                                           "separators; expected one line 'source ||| target'")
            pairs.append((split_tokens(parts[0]), split_tokens(parts[1])))
    return pairs


def split_tokens(text: str) -> list[str]:
    """Split on ASCII space and tab only: U+3000 and other Unicode spaces can be tokens."""
    return [t for t in re.split(r"[ \t]+", text) if t]


_WPT_RE = re.compile(r"\s*<s snum=\"?(\d+)\"?>(.*)</s>\s*")


def read_wpt_text(path: str) -> tuple[list[int], list[list[str]]]:
    """Read a WPT text file of ``<s snum=N> tokens </s>`` lines: sentence numbers and tokens."""
    name = str(path)
    ids, sents = [], []
    for first_line, lines in iter_line_chunks(path):
        for i, line in enumerate(lines):
            m = _WPT_RE.fullmatch(line)
            if not m:
                raise AlignmentFormatError(name, first_line + i, f"found {line[:60]!r}; "
                                           "expected '<s snum=N> ... </s>'")
            ids.append(int(m[1]))
            sents.append(split_tokens(m[2]))
    return ids, sents


def check_links_in_range(alignments: Alignments, src_lengths: Sequence[int],
                         tgt_lengths: Sequence[int], path: str) -> None:
    """Raise LinkRangeError naming the first sentence (its line, for one-line-per-sentence formats)
    whose link lies outside it."""
    if len(src_lengths) != len(alignments) or len(tgt_lengths) != len(alignments):
        raise LineCountError(path, None, f"{len(alignments)} alignment lines but "
                             f"{len(src_lengths)} sentence pairs in the text")
    sent = alignments.sentence_ids()
    sl = np.asarray(src_lengths, dtype=np.int64)[sent]
    tl = np.asarray(tgt_lengths, dtype=np.int64)[sent]
    bad = np.flatnonzero((alignments.src >= sl) | (alignments.tgt >= tl))
    if len(bad):
        i = int(bad[0])
        k = int(sent[i])
        raise LinkRangeError(path, k + 1, f"sentence {k + 1}: link ({alignments.src[i]}, {alignments.tgt[i]}) (0-based "
                             f"src, tgt) is outside a sentence pair of {sl[i]} source and {tl[i]} "
                             "target tokens; expected indices below the sentence lengths")
