"""Language codes compared across toolkits (standard library only): ``en`` (fairseq, FSMT, Marian), ``eng_Latn``
(NLLB), ``en_XX`` (mBART), ``__en__`` (M2M100's tokens) all name English.

:func:`base` reduces a code to its ISO 639-1 letters where it knows them, so that two models' declared
directions, a gold set's languages and a calibration's can be checked against each other whatever toolkit
wrote them. A code it cannot reduce is compared as written (lowercased).
"""

from __future__ import annotations

import re

ISO_639_3 = {
    "eng": "en", "fra": "fr", "fre": "fr", "deu": "de", "ger": "de", "ron": "ro", "rum": "ro", "jpn": "ja",
    "zho": "zh", "chi": "zh", "ces": "cs", "cze": "cs", "hin": "hi", "spa": "es", "ita": "it", "por": "pt",
    "nld": "nl", "dut": "nl", "rus": "ru", "ara": "ar", "swe": "sv", "pol": "pl", "tur": "tr", "kor": "ko",
}  # fmt: skip
"""ISO 639-3 (and 639-2/B) codes of the languages of the shipped gold sets and the usual MT pairs -> 639-1."""


def base(code: str | None) -> str | None:
    """``eng_Latn`` / ``en_XX`` / ``__en__`` / ``EN`` -> ``en``; None stays None."""
    if code is None:
        return None
    c = code.strip().strip("_").lower()
    head = re.split(r"[_\-]", c, maxsplit=1)[0]
    return ISO_639_3.get(head, head)


def same(a: str | None, b: str | None) -> bool:
    """True when both codes are known and name the same language."""
    return a is not None and b is not None and base(a) == base(b)


def direction(pair: tuple[str | None, str | None]) -> str:
    """``en->fr`` (``?`` for a side that is not known)."""
    return f"{pair[0] or '?'}->{pair[1] or '?'}"
