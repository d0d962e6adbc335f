"""Alignment and text files: read and write, with every index-base and direction change made here.

Formats (``FORMATS``), one sentence per line unless noted:

- ``pharaoh``: ``i-j`` tokens, 0-based, source first (fast_align, awesome-align, Moses).
- ``talp``: ``i-j`` sure and ``ipj`` possible tokens, 1-based (the RWTH and Hansards gold sets).
- ``naacl``: one link per line, ``sentno i j [S|P] [confidence]``, 1-based (WPT 2003/2005).
  Sentence numbers map to corpus lines through ``naacl_ids``; sentences without links are empty.

``pharaoh`` and ``talp`` also accept ``i-j-S`` / ``i-j-P`` tokens (DeNero's possible links), so
only the default index base tells them apart; ``naacl`` marks possible links by its ``P`` column
only. Internally links are always 0-based ``(src, tgt)``. Paths ending in ``.gz`` are gunzipped;
``-`` is standard input / output. Lines end in LF or CRLF; a UTF-8 byte order mark is skipped.
:class:`AlignmentStream` reads a file a block of sentences at a time (memory per block, not per file).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np

from ..links.alignments import _SIDE_MAX, Alignments
from .atomic import write_text_atomic
from .errors import AlignmentFormatError, LineCountError, LinkRangeError
from .lines import BLOCK_LINES, LineReader, decode_line, display_name
from .text import parse_text_pair

FORMATS: dict[str, int] = {"pharaoh": 0, "talp": 1, "naacl": 1}
"""Format name -> default index base."""

MAX_SENTENCE_NUMBER = 9_999_999
"""Highest NAACL sentence number without ``naacl_ids`` (the default numbering 1..max makes max sentences)."""

_TOKEN = r"\d{1,7}(?:p\d{1,7}|-\d{1,7}(?:-[SP])?)"

_LINE_RE = re.compile(rf"[ \t]*(?:{_TOKEN}(?:[ \t]+{_TOKEN})*)?[ \t]*", re.ASCII)  # ASCII digits only

_TOKEN_RE = re.compile(r"(\d+)(?:p(\d+)|-(\d+)(?:-([SP]))?)", re.ASCII)

_BAD_TOKEN_RE = re.compile(r"[^ \t]+")

_NAACL_RE = re.compile(
    r"[ \t]*(\d{1,9})[ \t]+(\d{1,7})[ \t]+(\d{1,7})(?:[ \t]+([SP]))?"
    r"(?:[ \t]+([-+0-9.eE]+))?[ \t]*",
    re.ASCII,
)


def check_format(fmt: str) -> int:
    """Default index base of format ``fmt``; raises ValueError listing the valid names."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown alignment format {fmt!r}; valid: {', '.join(FORMATS)}")
    return FORMATS[fmt]


def _parse_token_bytes(data: bytes) -> tuple[np.ndarray, ...] | None:
    """Fast path for a block of plain ``i-j`` / ``ipj`` lines: ``(line, first, second, sure)`` arrays
    (``line`` counts from 0 in the block), or None if the block holds anything else; the line-by-line
    parser then reads it and names any bad line."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if data.endswith(b"\r"):
            data = data[:-1]
    arr = np.frombuffer(data, dtype=np.uint8)
    is_digit = (arr - np.uint8(48)) < 10  # uint8 arithmetic wraps: only b"0".."9" fall below 10
    is_sep = (arr == 45) | (arr == 112)  # "-", "p"
    is_newline = arr == 10
    known = sum(np.count_nonzero(x) for x in (is_digit, is_sep, is_newline, arr == 32, arr == 9))  # space, tab
    if known != len(arr):
        return None
    padded = np.zeros(len(arr) + 2, dtype=bool)
    padded[1:-1] = is_digit
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    starts, ends = edges[0::2], edges[1::2]  # digit runs: [starts, ends)
    seps = np.flatnonzero(is_sep)
    # Every link is one digit run, one separator, one digit run: run 2k ends at separator k and run
    # 2k+1 starts right after it. Then no separator can touch another run, so the block is valid.
    if len(starts) != 2 * len(seps) or not (
        np.array_equal(ends[0::2], seps) and np.array_equal(starts[1::2], seps + 1)
    ):
        return None
    lens = ends - starts
    if len(lens) and lens.max() > 7:
        return None
    if not len(seps):
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, np.zeros(0, dtype=bool)
    # the numbers: one or two digits first, then the rare longer ones
    last = len(arr) - 1
    values = arr[starts].astype(np.int64) - 48
    values = np.where(lens > 1, values * 10 + arr[np.minimum(starts + 1, last)] - 48, values)
    for j in range(2, int(lens.max())):
        m = np.flatnonzero(lens > j)
        values[m] = values[m] * 10 + arr[starts[m] + j] - 48
    # line of each link: links before each newline, then one line index per link
    bounds = np.searchsorted(seps, np.flatnonzero(is_newline))
    per_line = np.diff(bounds, prepend=0, append=len(seps))
    line = np.repeat(np.arange(len(per_line), dtype=np.int64), per_line)
    return line, values[0::2], values[1::2], arr[seps] == ord("-")


def _parse_token_lines(lines: list[bytes], name: str, first_line: int) -> tuple[np.ndarray, ...]:
    """``(line, first, second, sure)`` arrays of a block of ``pharaoh``/``talp`` lines (raw bytes);
    ``line`` counts from 0 in the block. AlignmentFormatError names the first bad line."""
    fast = _parse_token_bytes(b"".join(lines))
    if fast is not None:
        return fast
    rows: list[tuple[int, int, int, bool]] = []
    for i, raw in enumerate(lines):
        line = decode_line(raw, name, first_line + i)
        if not _LINE_RE.fullmatch(line):
            bad = next((t for t in _BAD_TOKEN_RE.findall(line) if not re.fullmatch(_TOKEN, t, re.ASCII)), line)
            raise AlignmentFormatError(
                name,
                first_line + i,
                f"bad link {bad!r}; expected space-separated links "
                "'i-j' (sure), 'ipj' or 'i-j-P' (possible) with non-negative integers",
            )
        rows.extend((i, int(m[1]), int(m[2] or m[3]), m[2] is None and m[4] != "P") for m in _TOKEN_RE.finditer(line))
    arr = np.array(rows, dtype=np.int64).reshape(-1, 4)
    return arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3].astype(bool)


def _parse_naacl_lines(lines: list[bytes], name: str, first_line: int) -> tuple[np.ndarray, ...]:
    """``(sentence_number, first, second, sure, line_number)`` arrays of a block of NAACL lines."""
    rows = []
    for i, raw in enumerate(lines):
        line = decode_line(raw, name, first_line + i)
        if not line.strip(" \t"):
            continue
        m = _NAACL_RE.fullmatch(line)
        if not m:
            raise AlignmentFormatError(
                name, first_line + i, f"bad NAACL line {line!r}; expected 'sentno i j [S|P] [confidence]'"
            )
        rows.append((int(m[1]), int(m[2]), int(m[3]), m[4] != "P", first_line + i))
    arr = np.array(rows, dtype=np.int64).reshape(-1, 5)
    return arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3].astype(bool), arr[:, 4]


class AlignmentStream:
    """An alignment file read a block of sentences at a time, as 0-based ``(src, tgt)`` links.

    ``take(n)`` returns the next ``n`` sentences as :class:`Alignments` (fewer only at the end), so
    memory depends on ``n``, not on the file. ``pharaoh`` and ``talp`` files stream line by line.
    ``naacl`` files stream when their sentences come in corpus order (the pre-pass that checks the
    order reads the file once more); otherwise, and from standard input, they are read whole.
    ``naacl_ids`` maps NAACL sentence numbers to corpus lines (default: 1..max).
    Use as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        path: str,
        fmt: str = "pharaoh",
        base: int | None = None,
        reverse: bool = False,
        naacl_ids: Sequence[int] | None = None,
        stream: bool = True,
    ) -> None:
        default_base = check_format(fmt)
        self.path, self.fmt, self.reverse = path, fmt, reverse
        self.base = default_base if base is None else base
        self.name = display_name(path)
        self.unit = "sentences"
        self.sentences = 0  # sentences taken so far
        self._index = None if naacl_ids is None else _id_index(naacl_ids)
        self._n_ids = None if naacl_ids is None else len(naacl_ids)
        self._reader: LineReader | None = None
        if fmt != "naacl":
            self._reader = LineReader(path)
            return
        # NAACL: rows (corpus index, first, second, sure, line) sorted by corpus index, kept in a buffer.
        self._buf = tuple(np.zeros(0, dtype=np.int64) for _ in range(5))
        self._max_index = -1
        if stream and path != "-" and self._naacl_in_order():
            self._reader = LineReader(path)
            self._chunks = self._naacl_chunks(self._reader)
        else:
            with LineReader(path) as reader:
                parts = list(self._naacl_chunks(reader))
            rows = tuple(
                np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, dtype=np.int64) for k in range(5)
            )
            order = np.argsort(rows[0], kind="stable")
            self._chunks = iter([tuple(r[order] for r in rows)])
        self._eof = False

    # -- NAACL rows -------------------------------------------------------------------------------

    def _naacl_chunks(self, reader: LineReader) -> Iterator[tuple[np.ndarray, ...]]:
        """Yield row arrays ``(index, first, second, sure, line)`` per block of lines; ``index`` is
        the 0-based corpus line of the row's sentence number."""
        while True:
            first = reader.next_line
            lines = reader.take(BLOCK_LINES)
            if not lines:
                return
            num, a, b, sure, line = _parse_naacl_lines(lines, self.name, first)
            if self._index is None:
                bad = np.flatnonzero((num < 1) | (num > MAX_SENTENCE_NUMBER))
                if len(bad):
                    raise AlignmentFormatError(
                        self.name,
                        int(line[bad[0]]),
                        f"sentence number {num[bad[0]]}; expected 1 to "
                        f"{MAX_SENTENCE_NUMBER} (sentences are numbered 1..max unless sentence numbers are given)",
                    )
                index = num - 1
            else:
                index = np.array([self._index.get(int(s), -1) for s in num.tolist()], dtype=np.int64)
                bad = np.flatnonzero(index < 0)
                if len(bad):
                    raise AlignmentFormatError(
                        self.name,
                        int(line[bad[0]]),
                        f"sentence number {num[bad[0]]} is not among the {self._n_ids} sentence numbers of the corpus",
                    )
            yield index, a, b, sure, line
            if len(lines) < BLOCK_LINES:
                return

    def _naacl_in_order(self) -> bool:
        """Whether the file's rows come in corpus order (one pass over the file)."""
        last = -1
        with LineReader(self.path) as reader:
            for index, *_ in self._naacl_chunks(reader):
                if len(index) and (index[0] < last or np.any(np.diff(index) < 0)):
                    return False
                last = int(index[-1]) if len(index) else last
        return True

    def _take_naacl(self, n: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        k0, limit = self.sentences, self.sentences + n
        parts = [self._buf]
        while not self._eof and (not len(parts[-1][0]) or parts[-1][0][-1] < limit):
            try:
                chunk = next(self._chunks)
            except StopIteration:
                self._eof = True
                break
            if len(chunk[0]):
                parts.append(chunk)
                self._max_index = max(self._max_index, int(chunk[0].max()))
        rows = tuple(np.concatenate([p[k] for p in parts]) for k in range(5))
        if len(rows[0]) and rows[0][0] < k0:  # the pre-pass makes this impossible; never count silently
            raise AlignmentFormatError(self.name, int(rows[4][0]), "sentence out of order after the order check")
        cut = int(np.searchsorted(rows[0], limit))
        self._buf = tuple(r[cut:] for r in rows)
        if self._n_ids is not None:
            count = min(n, self._n_ids - k0)
        elif not self._eof or len(self._buf[0]):
            count = n
        else:
            count = min(n, self._max_index + 1 - k0)
        index, a, b, sure, line = (r[:cut] for r in rows)
        return max(count, 0), index - k0, a, b, sure, line

    # -- blocks -----------------------------------------------------------------------------------

    def take(self, n: int, lengths: tuple[np.ndarray, np.ndarray] | None = None) -> Alignments:
        """The next ``n`` sentences (fewer only at the end of the file).

        ``lengths`` (source and target token counts of these sentences, from :class:`TextLengthStream`)
        checks that every link lies inside its sentence; LinkRangeError names the file line.
        """
        if self.fmt == "naacl":
            count, sent, a, b, sure, line = self._take_naacl(n)
        else:
            assert self._reader is not None  # every format but naacl reads lines
            first = self._reader.next_line
            lines = self._reader.take(n)
            count = len(lines)
            sent, a, b, sure = _parse_token_lines(lines, self.name, first)
            line = None

        def line_of(i: int) -> int:
            return int(line[i]) if line is not None else first + int(sent[i])

        a, b = a - self.base, b - self.base
        bad = np.flatnonzero((a < 0) | (b < 0) | (a > _SIDE_MAX) | (b > _SIDE_MAX))
        if len(bad):
            i = int(bad[0])
            link = f"link {a[i] + self.base}-{b[i] + self.base}"
            if min(a[i], b[i]) < 0:
                msg = f"index below {self.base} in a {self.base}-based file ({link}); expected indices >= {self.base}"
            else:
                msg = f"index above {_SIDE_MAX + self.base} ({link}); expected word positions"
            raise LinkRangeError(self.name, line_of(i), msg)
        if self.reverse:
            a, b = b, a
        if lengths is not None:
            src_len, tgt_len = (np.asarray(x, dtype=np.int64)[:count] for x in lengths)
            inside = sent < len(src_len)
            s_idx = np.minimum(sent, max(len(src_len) - 1, 0))
            if len(src_len):
                bad = np.flatnonzero(inside & ((a >= src_len[s_idx]) | (b >= tgt_len[s_idx])))
            else:
                bad = np.zeros(0, dtype=np.int64)
            if len(bad):
                i = int(bad[0])
                k = int(sent[i])
                raise LinkRangeError(
                    self.name,
                    line_of(i),
                    f"sentence {self.sentences + k + 1}: link ({a[i]}, "
                    f"{b[i]}) (0-based src, tgt) is outside a sentence pair of {src_len[k]} source "
                    f"and {tgt_len[k]} target tokens; expected indices below the sentence lengths",
                )
        self.sentences += count
        return Alignments.from_arrays(sent, a, b, sure, count)

    def count_all(self) -> int:
        """Read to the end without parsing more than needed: the file's number of sentences."""
        if self.fmt != "naacl":
            assert self._reader is not None
            return self.sentences + self._reader.skip_all()
        if self._n_ids is not None:
            return self._n_ids
        for chunk in self._chunks:
            if len(chunk[0]):
                self._max_index = max(self._max_index, int(chunk[0].max()))
        self._eof = True
        return max(self.sentences, self._max_index + 1)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> AlignmentStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _id_index(naacl_ids: Sequence[int]) -> dict[int, int]:
    index = {int(sid): k for k, sid in enumerate(naacl_ids)}
    if len(index) != len(naacl_ids):
        raise ValueError("naacl_ids has repeated sentence numbers")
    return index


class TextLengthStream:
    """A ``src ||| tgt`` file read in blocks: the token counts of each side (for link range checks)."""

    def __init__(self, path: str) -> None:
        self.name = display_name(path)
        self.unit = "sentence pairs"
        self.sentences = 0
        self._reader = LineReader(path)

    def take(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Source and target lengths of the next ``n`` pairs (fewer only at the end), each (k,) int64."""
        first = self._reader.next_line
        pairs = [
            parse_text_pair(decode_line(raw, self.name, first + i), self.name, first + i)
            for i, raw in enumerate(self._reader.take(n))
        ]
        self.sentences += len(pairs)
        return (
            np.array([len(s) for s, _ in pairs], dtype=np.int64),
            np.array([len(t) for _, t in pairs], dtype=np.int64),
        )

    def count_all(self) -> int:
        """Read to the end: the file's number of lines."""
        return self.sentences + self._reader.skip_all()

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> TextLengthStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CountedStream(Protocol):
    """What :func:`raise_count_mismatch` reads of a stream: its name, its unit and its length."""

    name: str
    unit: str

    def count_all(self) -> int: ...


def raise_count_mismatch(reference: CountedStream, others: Sequence[CountedStream]) -> None:
    """Two streams read in step have different numbers of sentences: read every stream to its end
    and raise LineCountError naming the first whose count differs from ``reference``'s (the gold)."""
    expected = reference.count_all()
    for s in others:
        n = s.count_all()
        if n != expected:
            raise LineCountError(s.name, None, f"{n} {s.unit}; expected {expected} as in the gold {reference.name}")
    raise LineCountError(reference.name, None, "sentence counts differ between blocks of the files read in step")


def read_alignments(
    path: str,
    fmt: str = "pharaoh",
    base: int | None = None,
    reverse: bool = False,
    naacl_ids: Sequence[int] | None = None,
) -> Alignments:
    """Read an alignment file into 0-based ``(src, tgt)`` links; ``reverse`` swaps the file's sides.

    ``naacl_ids`` gives the sentence number of each corpus line for ``naacl`` files; by default
    sentences are numbered 1..max. :class:`AlignmentStream` reads the same files block by block.
    """
    with AlignmentStream(path, fmt, base, reverse, naacl_ids, stream=False) as s:
        blocks = []
        while True:
            blocks.append(s.take(BLOCK_LINES))
            if len(blocks[-1]) < BLOCK_LINES:
                break
    return _concatenate(blocks)


def _concatenate(blocks: Sequence[Alignments]) -> Alignments:
    """Consecutive blocks of sentences as one corpus."""
    if len(blocks) == 1:
        return blocks[0]
    offsets = [np.zeros(1, dtype=np.int64)]
    for b in blocks:
        offsets.append(b.offsets[1:] + offsets[-1][-1])
    return Alignments(
        np.concatenate(offsets),
        np.concatenate([b.src for b in blocks]),
        np.concatenate([b.tgt for b in blocks]),
        np.concatenate([b.sure for b in blocks]),
    )


def format_links(
    links: Sequence[tuple[int, int]],
    possible: Sequence[tuple[int, int]] = (),
    fmt: str = "pharaoh",
    base: int | None = None,
    reverse: bool = False,
) -> str:
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


def write_alignments(
    alignments: Alignments, path: str, fmt: str = "pharaoh", base: int | None = None, reverse: bool = False
) -> None:
    """Write a corpus atomically (a temporary file renamed into place); ``-`` writes to stdout."""
    default = check_format(fmt)
    base = default if base is None else base
    lines: list[str] = []
    for k in range(len(alignments)):
        a, b = alignments.offsets[k], alignments.offsets[k + 1]
        src, tgt, sure = alignments.src[a:b], alignments.tgt[a:b], alignments.sure[a:b]
        if reverse:
            src, tgt = tgt, src
        order = np.lexsort((tgt, src))
        if fmt == "naacl":
            lines.extend(
                f"{k + 1} {s + base} {t + base} {'S' if u else 'P'}"
                for s, t, u in zip(src[order].tolist(), tgt[order].tolist(), sure[order].tolist())
            )
        else:
            toks = []
            for s, t, u in zip(src[order].tolist(), tgt[order].tolist(), sure[order].tolist()):
                if u:
                    toks.append(f"{s + base}-{t + base}")
                else:
                    toks.append(f"{s + base}p{t + base}" if fmt == "talp" else f"{s + base}-{t + base}-P")
            lines.append(" ".join(toks))
    write_text_atomic(path, "".join(line + "\n" for line in lines))
