"""Reading text files line by line, a block at a time: standard input, ``.gz``, ``.xz`` and ``.zst`` by suffix
(every zstd frame, a stream cut short refused), a UTF-8 BOM skipped, CR LF and CR ends stripped, bytes that
are not UTF-8 an error naming the file and line."""

from __future__ import annotations

import gzip
import io
import itertools
import lzma
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, cast

from .errors import AlignmentFormatError

BLOCK_LINES = 1 << 14
"""Lines (sentences) per block when streaming: memory is per block, never per file."""

_BOM = b"\xef\xbb\xbf"

_READ_ERRORS = (OSError, EOFError, gzip.BadGzipFile, zlib.error, lzma.LZMAError)  # a bad .zst: OSError


def display_name(path: str) -> str:
    return "<stdin>" if path == "-" else str(path)


class _ZstdRaw(io.RawIOBase):
    """A .zst file's decompressed bytes, every frame in turn; errors are OSError (a damaged .zst
    reads like a damaged .gz). A stream that ends inside a frame is an error, as ``zstd -d`` says
    "premature end": zstandard's own stream reader returns what it has and stops silently."""

    _READ = 1 << 17

    def __init__(self, path: str) -> None:
        try:
            import zstandard
        except ImportError:
            raise OSError("reading .zst files needs the zstandard package (pip install zstandard)") from None
        self._zstd = zstandard
        self._f = open(path, "rb")
        self._dobj: Any = None  # the decompressor of the frame being read; None between frames
        self._pending = b""  # decompressed bytes not yet returned
        self._eof = False

    def readable(self) -> bool:
        return True

    def _fill(self) -> None:
        while not self._pending and not self._eof:
            raw = self._f.read(self._READ)
            if not raw:
                if self._dobj is not None:  # the file ended inside a frame
                    raise OSError("the zstd stream ends inside a frame (premature end: the file is cut short)")
                self._eof = True
                return
            while raw:
                if self._dobj is None:
                    self._dobj = self._zstd.ZstdDecompressor().decompressobj()
                try:
                    self._pending += self._dobj.decompress(raw)
                except self._zstd.ZstdError as e:
                    raise OSError(f"not a valid zstd stream ({e})") from None
                if not self._dobj.eof:
                    break
                raw = self._dobj.unused_data  # the next frame starts here
                self._dobj = None

    def readinto(self, b: Any) -> int:
        self._fill()
        n = min(len(b), len(self._pending))
        b[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            self._f.close()
        super().close()


COMPRESSED: dict[str, Callable[[str], IO[bytes]]] = {
    ".gz": lambda path: cast(IO[bytes], gzip.open(path, "rb")),
    ".xz": lambda path: cast(IO[bytes], lzma.open(path, "rb")),
    ".zst": lambda path: io.BufferedReader(_ZstdRaw(path)),
}
"""Suffix -> opener of a compressed file, decompressed as it is read."""


def strip_compression(name: str) -> str:
    """``name`` without a compression suffix (:data:`COMPRESSED`): ``x.align.zst`` -> ``x.align``."""
    for ext in COMPRESSED:
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def open_binary_input(path: str) -> IO[bytes]:
    """A file (``-``: standard input) opened for reading bytes; ``.gz``, ``.xz`` and ``.zst`` are
    decompressed as they are read (by suffix)."""
    path = str(path)
    if path == "-":
        return sys.stdin.buffer
    for ext, opener in COMPRESSED.items():
        if path.endswith(ext):
            return opener(path)
    return open(path, "rb")


@contextmanager
def _open_binary(path: str) -> Iterator[IO[bytes]]:
    f = open_binary_input(path)
    try:
        yield f
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def decode_line(raw: bytes, name: str, lineno: int) -> str:
    """One line's text, newline and one trailing CR stripped; AlignmentFormatError if not UTF-8."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AlignmentFormatError(
            name, lineno, f"bytes {raw[e.start : e.end + 3]!r} are not UTF-8; expected a UTF-8 text file"
        ) from None
    if line.endswith("\n"):
        line = line[:-1]
    return line[:-1] if line.endswith("\r") else line


def iter_line_chunks(path: str) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(first_line_number, lines)`` chunks of a UTF-8 file: newline, CR and a leading BOM stripped."""
    with LineReader(path) as reader:
        while True:
            first = reader.next_line
            raw = reader.take(BLOCK_LINES)
            if not raw:
                return
            yield first, [decode_line(b, reader.name, first + i) for i, b in enumerate(raw)]


def read_lines(path: str) -> list[str]:
    """All lines of a UTF-8 text file (newline stripped), with file:line errors for bad bytes."""
    out: list[str] = []
    for _, lines in iter_line_chunks(path):
        out.extend(lines)
    return out


class LineReader:
    """A file's raw lines (bytes, newline kept), taken in blocks; a UTF-8 BOM at the start is dropped.
    Read errors (missing file, bad gzip) become AlignmentFormatError ``path: cannot read``."""

    def __init__(self, path: str) -> None:
        self.name = display_name(path)
        self.next_line = 1  # number of the next line to be taken
        self._cm = _open_binary(path)
        try:
            self._f = self._cm.__enter__()
        except _READ_ERRORS as e:
            raise AlignmentFormatError(self.name, None, f"cannot read: {e}") from None

    def take(self, n: int) -> list[bytes]:
        """The next ``n`` lines (fewer only at the end of the file)."""
        try:
            lines = list(itertools.islice(self._f, n))
        except _READ_ERRORS as e:
            raise AlignmentFormatError(self.name, None, f"cannot read: {e}") from None
        if lines and self.next_line == 1 and lines[0].startswith(_BOM):
            lines[0] = lines[0][len(_BOM) :]
            if not lines[0]:  # the file is a BOM and nothing else
                lines.pop()
        self.next_line += len(lines)
        return lines

    def skip_all(self) -> int:
        """Read to the end; the number of lines skipped."""
        n = 0
        while True:
            k = len(self.take(BLOCK_LINES))
            n += k
            if k < BLOCK_LINES:
                return n

    def close(self) -> None:
        self._cm.__exit__(None, None, None)

    def __enter__(self) -> LineReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
