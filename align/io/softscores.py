"""Soft alignment scores on disk: one word-level score matrix per sentence, as bytes or float32 (numpy only).

Format (``*.scores.jsonl``, named like the alignment file with ``.scores.jsonl`` instead of
``.align``: ``norm-awi-layer1.align`` -> ``norm-awi-layer1.scores.jsonl``): one line per sentence,
in the same line order as the ``.align`` files, each line a JSON object::

    {"tgt": T, "src": S, "q": "<base64>"}

``q`` is the base64 (standard alphabet, padded) of ``T * S`` unsigned bytes, row-major: rows are
target words, columns source words (the project's convention: score matrices are
``(tgt_len, src_len)``). Each byte is ``round(255 * score / row maximum)`` (nearest, ties to even
as Python's ``round``); a row whose maximum is 0 (or below) stays zeros, and negative scores are
stored as 0. A sentence with an empty side has ``"q": ""``. So each row keeps its shape, not its
scale: the row maximum is 255. Reading accepts ``.gz`` (``.xz``, ``.zst``) files, LF or CRLF line
ends and a UTF-8 byte order mark, as :mod:`align.io.formats` does; ``-`` is standard input.

Full precision (``encode_scores(m, precision="float32")``): the line has ``"dtype": "float32"`` and
``q`` is the base64 of ``T * S`` little-endian IEEE float32 values, row-major, the raw scores as they
were (not rescaled; negative scores kept; finite only)::

    {"tgt": T, "src": S, "q": "<base64 of 4*T*S bytes>", "dtype": "float32"}

A line without ``dtype`` is 8-bit; no other ``dtype`` is valid. :func:`decode_scores` returns uint8
for 8-bit lines and float32 for float32 lines (:data:`PRECISIONS` names the two).

A file of probabilities (``align-extract --calibration`` writes ``NAME.probs.jsonl``) has
``"scale": "absolute"`` in every line: its bytes are ``round(255 * p)`` for probabilities ``p`` in
``[0, 1]``, not relative to the row maximum, so shading shows how sure each link is.

A reverse model's file (``align-extract --reverse-model`` writes ``NAME.reverse.scores.jsonl``) has
``"reverse": true`` in every line: the matrix is the reverse model's own, rows its target words (the pair's
source words), ``"tgt"`` and ``"src"`` counting them as that model does; :func:`iter_scores_meta` says so,
and ``align-view`` turns such a matrix round to show it beside the pair's source-first links.

Examples: the (2, 3) matrix ``[[0.2, 0.6, 0.2], [0, 0, 0]]`` is ``[[85, 255, 85], [0, 0, 0]]``,
the line ``{"tgt": 2, "src": 3, "q": "Vf9VAAAA"}``; the (1, 1) matrix ``[[1.0]]`` in float32 is the
bytes ``00 00 80 3f``, the line ``{"tgt": 1, "src": 1, "q": "AACAPw==", "dtype": "float32"}``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .atomic import write_text_atomic
from .errors import AlignmentFormatError
from .lines import iter_line_chunks

PRECISIONS = ("8bit", "float32")
"""How a score file stores each cell: ``8bit`` (a byte relative to the row maximum, the default) or ``float32``
(the raw score)."""

_DTYPES: dict[str, np.dtype[Any]] = {"float32": np.dtype("<f4")}
"""The ``dtype`` values a line may carry (no ``dtype``: 8-bit bytes) -> the stored element type."""

SUFFIX = ".scores.jsonl"
"""File name suffix of a soft-score file (``.gz`` may follow)."""


class ScoresFormatError(AlignmentFormatError):
    """A malformed line of a soft-score file: ``path:line: what was found; what was expected``."""


def scores_name(align_name: str) -> str:
    """The soft-score file name of an alignment file: ``dump/norm-awi-layer1.align`` ->
    ``dump/norm-awi-layer1.scores.jsonl`` (a name without ``.align`` gets the suffix added)."""
    base = align_name[: -len(".align")] if align_name.endswith(".align") else align_name
    return base + SUFFIX


def quantize_scores(m: np.ndarray) -> np.ndarray:
    """(T, S) scores -> (T, S) uint8: ``round(255 * score / row maximum)``, zero rows (and negative
    scores) as 0. ValueError for a matrix that is not 2-D or holds NaN or infinity."""
    a = np.asarray(m, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"score matrix of shape {a.shape}; expected 2-D (tgt_len, src_len)")
    if not np.isfinite(a).all():
        raise ValueError("score matrix holds NaN or infinity; expected finite scores")
    a = np.maximum(a, 0.0)
    top = a.max(axis=1, keepdims=True) if a.shape[1] else np.zeros((a.shape[0], 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(top > 0, 255.0 * a / np.where(top > 0, top, 1.0), 0.0)
    return np.rint(q).astype(np.uint8)  # rint: nearest, ties to even (Python's round)


def encode_scores(m: np.ndarray, absolute: bool = False, precision: str = "8bit", reverse: bool = False) -> str:
    """One line (no newline) of a soft-score file for a (tgt_len, src_len) score matrix; ``absolute``: the
    matrix holds probabilities in [0, 1], stored as ``round(255 * p)`` with ``"scale": "absolute"``;
    ``precision`` (one of :data:`PRECISIONS`): ``float32`` stores the raw scores with ``"dtype": "float32"``;
    ``reverse``: a reverse model's own (src_len, tgt_len) matrix of the pair, marked ``"reverse": true``."""
    line = _line(m, absolute, precision)
    if reverse:
        line["reverse"] = True
    return json.dumps(line)


def _line(m: np.ndarray, absolute: bool, precision: str) -> dict[str, Any]:
    """The JSON object of one line (see :func:`encode_scores`)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; valid: {', '.join(PRECISIONS)}")
    if precision == "float32":
        if absolute:
            raise ValueError("probabilities (absolute=True) are stored 8-bit; expected precision='8bit'")
        return _float32_line(m)
    if absolute:
        a = np.asarray(m, dtype=np.float64)
        if a.ndim != 2 or not np.isfinite(a).all():
            raise ValueError(f"probability matrix of shape {a.shape}; expected a finite 2-D (tgt_len, src_len)")
        q = np.rint(255.0 * np.clip(a, 0.0, 1.0)).astype(np.uint8)
    else:
        q = quantize_scores(m)
    line: dict[str, Any] = {
        "tgt": int(q.shape[0]),
        "src": int(q.shape[1]),
        "q": base64.b64encode(q.tobytes()).decode("ascii"),
    }
    if absolute:
        line["scale"] = "absolute"
    return line


def _float32_line(m: np.ndarray) -> dict[str, Any]:
    a = np.asarray(m)
    if a.ndim != 2:
        raise ValueError(f"score matrix of shape {a.shape}; expected 2-D (tgt_len, src_len)")
    with np.errstate(over="ignore"):
        f = a.astype("<f4")
    if not np.isfinite(f).all():
        raise ValueError("score matrix holds NaN or infinity (or a value beyond float32); expected finite scores")
    raw = base64.b64encode(f.tobytes()).decode("ascii")
    return {"tgt": int(f.shape[0]), "src": int(f.shape[1]), "q": raw, "dtype": "float32"}


def _size(obj: dict[str, Any], key: str, path: str, lineno: int) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ScoresFormatError(path, lineno, f"{key!r} is {v!r}; expected a word count (integer >= 0)")
    return v


def decode_scores(line: str, path: str, lineno: int) -> np.ndarray:
    """The (T, S) matrix of one line: uint8 for an 8-bit line, float32 for a ``"dtype": "float32"`` line;
    ScoresFormatError naming ``path:lineno`` if the line is not such a JSON object or its byte count is
    not T * S (4 * T * S for float32)."""
    return _decode(line, path, lineno)[0]


def _decode(line: str, path: str, lineno: int) -> tuple[np.ndarray, bool]:
    """The matrix of one line and whether it is marked ``"reverse": true``."""
    expected = 'expected {"tgt": T, "src": S, "q": "<base64 of T*S bytes>"}'
    try:
        obj = json.loads(line)
    except ValueError:
        shown = line if len(line) <= 60 else line[:57] + "..."
        raise ScoresFormatError(path, lineno, f"found {shown!r}, not JSON; {expected}") from None
    if not isinstance(obj, dict):
        raise ScoresFormatError(path, lineno, f"found a JSON {type(obj).__name__}; {expected}")
    missing = [k for k in ("tgt", "src", "q") if k not in obj]
    if missing:
        raise ScoresFormatError(path, lineno, f"no {', '.join(repr(k) for k in missing)}; {expected}")
    t, s = _size(obj, "tgt", path, lineno), _size(obj, "src", path, lineno)
    dtype: np.dtype[Any] = np.dtype(np.uint8)
    if "dtype" in obj:
        if not isinstance(obj["dtype"], str) or obj["dtype"] not in _DTYPES:
            raise ScoresFormatError(
                path,
                lineno,
                f"'dtype' is {obj['dtype']!r}; expected one of {', '.join(_DTYPES)} (or no 'dtype' for 8-bit bytes)",
            )
        dtype = _DTYPES[obj["dtype"]]
    if not isinstance(obj["q"], str):
        raise ScoresFormatError(path, lineno, f"'q' is a JSON {type(obj['q']).__name__}; expected a base64 string")
    try:
        raw = base64.b64decode(obj["q"], validate=True)
    except (binascii.Error, ValueError):
        raise ScoresFormatError(
            path, lineno, "'q' is not valid base64; expected the standard alphabet, padded"
        ) from None
    size = dtype.itemsize
    if len(raw) != size * t * s:
        what = f"tgt * src = {t} * {s} = {t * s}" if size == 1 else f"4 * tgt * src = 4 * {t} * {s} = {4 * t * s}"
        raise ScoresFormatError(path, lineno, f"'q' holds {len(raw)} bytes; expected {what}")
    m: np.ndarray = np.frombuffer(raw, dtype=dtype).reshape(t, s).astype(dtype.newbyteorder("="))
    if size > 1 and not np.isfinite(m).all():
        raise ScoresFormatError(path, lineno, "'q' holds NaN or infinity; expected finite float32 scores")
    rev = obj.get("reverse", False)
    if not isinstance(rev, bool):
        raise ScoresFormatError(path, lineno, f"'reverse' is {rev!r}; expected true or false")
    return m, rev


def iter_scores(path: str) -> Iterator[np.ndarray]:
    """Yield the (T, S) matrix (uint8, or float32 for float32 lines) of each line of a soft-score file, in
    order (streaming: memory is one block of lines). Errors name ``path:line``."""
    name = "<stdin>" if path == "-" else str(path)
    for first, lines in iter_line_chunks(path):
        for i, line in enumerate(lines):
            yield decode_scores(line, name, first + i)


def iter_scores_meta(path: str) -> Iterator[tuple[np.ndarray, bool]]:
    """As :func:`iter_scores`, each matrix with its ``"reverse"`` mark (True: a reverse model's (S, T) matrix)."""
    name = "<stdin>" if path == "-" else str(path)
    for first, lines in iter_line_chunks(path):
        for i, line in enumerate(lines):
            yield _decode(line, name, first + i)


def read_scores(path: str) -> list[np.ndarray]:
    """Every matrix of a soft-score file (see :func:`iter_scores`)."""
    return list(iter_scores(path))


def write_scores(path: str, matrices: Iterable[np.ndarray], precision: str = "8bit") -> None:
    """Write one line per (tgt_len, src_len) matrix, atomically (``.gz``: gzipped; ``-``: stdout); ``precision``
    one of :data:`PRECISIONS`."""
    write_text_atomic(os.fspath(path), "".join(encode_scores(m, precision=precision) + "\n" for m in matrices))
