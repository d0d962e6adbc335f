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


GROUPS = {"mul", "und", "zxx", "mis", "romance", "gem", "gmq", "gmw", "roa", "sla", "zls", "zle", "zlw", "itc",
          "cel", "bat", "urj", "fiu", "sem", "afa", "map", "poz", "pqe", "aav", "alv", "art", "bnt", "cau", "ccs",
          "cus", "dra", "euq", "grk", "iir", "inc", "ine", "ira", "jpx", "phi", "sit", "tai", "trk", "tut", "zhx",
          "nic", "sal", "ber", "cpp", "cpf", "crp", "aed", "esx"}  # fmt: skip
"""Codes of many languages (``mul``, ISO 639-5 groups such as ``gem`` or ``roa``, opus-mt's ``ROMANCE``): a model
declaring one declares no single language, so nothing is checked against it."""


def base(code: str | None) -> str | None:
    """``eng_Latn`` / ``en_XX`` / ``__en__`` / ``EN`` -> ``en``; None for None and for a code of many languages."""
    if code is None:
        return None
    c = code.strip().strip("_").lower()
    head = re.split(r"[_\-]", c, maxsplit=1)[0]
    if head in GROUPS:
        return None
    return ISO_639_3.get(head, head)


def compare(a: str | None, b: str | None) -> bool | None:
    """True when two codes name the same language, False when they name different ones, None when that cannot
    be told: a side unknown or of many languages, or a two-letter code against a three-letter one this module
    cannot reduce (``uk`` and ``ukr_Cyrl``)."""
    x, y = base(a), base(b)
    if x is None or y is None:
        return None
    if x == y:
        return True
    return False if len(x) == len(y) else None


def same(a: str | None, b: str | None) -> bool:
    """True when both codes are known and name the same language."""
    return compare(a, b) is True
