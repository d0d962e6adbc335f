"""Streaming input of ``align-extract``: ``source ||| target`` pairs, or source lines for
``--translate`` (standard library only).

Lines are read as bytes and split on ``\\n`` only (``\\r\\n`` is one line end; a UTF-8 byte order
mark at the start is skipped; ``.gz``, ``.xz`` and ``.zst`` are decompressed by suffix), so a stray
carriage return or Unicode line separator never shifts later lines. Such a character inside a line
is refused with ``file:line``: a tokenizer would read it as a space and make a word the text does
not have. The reader hashes what it reads, so a run's signature names its input exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from .errors import AlignmentFormatError
from .lines import BLOCK_LINES, LineReader
from .text import split_tokens

LINE_BREAKS = {
    "\r": "a carriage return (\\r)",
    "\x0b": "a vertical tab",
    "\x0c": "a form feed",
    "\x1c": "a file separator (U+001C)",
    "\x1d": "a group separator (U+001D)",
    "\x1e": "a record separator (U+001E)",
    "\x85": "a next-line character (U+0085)",
    "\u2028": "a line separator (U+2028)",
    "\u2029": "a paragraph separator (U+2029)",
}
"""Characters that Python's str.splitlines (and text-mode files) treat as line ends, besides \\n."""


class InputError(AlignmentFormatError):
    """Bad input: ``file:line: what was found; what was expected``."""


class PairReader:
    """Iterate ``(0-based line, source words, target words or None)`` over a file (``-``: stdin).

    With ``shard=(K, N)`` only lines K, K + N, ... (0-based) are parsed and yielded; every line is
    hashed. After the iteration, ``lines`` is the number of lines and ``sha256`` the digest of their bytes.
    """

    def __init__(self, path: str, translate: bool = False, shard: tuple[int, int] = (0, 1)) -> None:
        self.path, self.translate, self.shard = path, translate, shard
        self.name = "<stdin>" if path == "-" else path
        self.lines = 0
        self._hash = hashlib.sha256()

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    def __iter__(self) -> Iterator[tuple[int, list[str], list[str] | None]]:
        with LineReader(self.path) as reader:
            while True:
                first = reader.next_line
                block = reader.take(BLOCK_LINES)
                k0, n = self.shard
                for k, raw in enumerate(block):
                    self._hash.update(raw)
                    if (first + k - 1) % n == k0:
                        yield self.parse(raw, first + k)
                self.lines += len(block)
                if len(block) < BLOCK_LINES:
                    return

    def parse(self, raw: bytes, n: int) -> tuple[int, list[str], list[str] | None]:
        """One raw line (newline included) -> ``(n - 1, source words, target words or None)``."""
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(
                self.name,
                n,
                f"bytes {raw[e.start : e.end + 3]!r} at column {e.start + 1} are not UTF-8; expected a UTF-8 text file",
            ) from None
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        for ch, what in LINE_BREAKS.items():
            col = line.find(ch)
            if col >= 0:
                raise InputError(
                    self.name,
                    n,
                    f"{what} at column {col + 1} inside the line; expected one sentence "
                    "(pair) per line, ended by \\n: replace it with a space or remove it",
                )
        if "\0" in line:
            raise InputError(self.name, n, f"a NUL byte at column {line.index(chr(0)) + 1}; expected text")
        if self.translate:
            if "|||" in line:
                raise InputError(self.name, n, "found '|||'; --translate expects source sentences only")
            src, tgt = split_tokens(line), None
        else:
            parts = line.split("|||")
            if len(parts) != 2:
                raise InputError(
                    self.name, n, f"found {len(parts) - 1} '|||' separators; expected one line 'source ||| target'"
                )
            src, tgt = split_tokens(parts[0]), split_tokens(parts[1])
            if not tgt:
                raise InputError(self.name, n, "the target side is empty; expected words on both sides of '|||'")
        if not src:
            raise InputError(self.name, n, "the source side is empty; expected at least one word")
        return n - 1, src, tgt


def count_lines(path: str) -> int | None:
    """Lines of a file (a last line without ``\\n`` counts), read in blocks; None for stdin."""
    if path == "-":
        return None
    with LineReader(path) as reader:
        return reader.skip_all()
