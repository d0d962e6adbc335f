"""Library of ``data/scripts/enfr_corpus.py``: the En-Fr text of ``../shared/data/parallel`` in the
style of the Hansards gold set (WPT 2003), for training the En->Fr model that force-aligns it.

The gold text is tokenized, hyphens split (``two - thirds``, ``est - ce``), English clitics split
(``General 's``) and French contractions expanded: every elided article or pronoun gets its full
form (``l'opposition`` -> ``le opposition``, ``s'il`` -> ``se il``, ``qu'on`` -> ``que on``) and the
fused articles are split (``du`` -> ``de le``, ``des`` -> ``de les``, ``au`` -> ``à le``, ``aux`` ->
``à les``), ``aujourd'hui`` alone staying ``aujourd' hui``. The raw sets are detokenized text, so the
same rules are applied to them: the model then reads and writes the gold's own words, and the gold
French is never an unusual input to it (the other way, contracting the gold, would change its word
count and every index). Everything is lowercased, as the gold is fed to the model lowercased.

Known deviations from the gold style, kept because the shipped model was trained with them
(counts are Hansard lines): English plural possessives lose their apostrophe (``members'`` ->
``members``, 2,128), a sentence-final abbreviation keeps the full stop as its own (``No.`` at the end
of ``Some hon. members: No.``, about 150), digits and letters are split (``1er`` -> ``1 er``, 531)
and French thousands written with spaces stay two words (``700 000``, 3,670).

Held out of training: the last ``HELD_OUT_VALID + HELD_OUT_TEST`` pairs of the Hansard set (the
last sitting days of the file, a contiguous slice; the set has no duplicate pairs), for validation
and for BLEU. Pairs whose character lengths differ by more than ``MAX_RATIO`` (the sentence-alignment
slips its README describes) or with more than ``MAX_WORDS`` words on a side are dropped and counted.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass, field

HANSARD = "hansard36-house-debates"
HELD_OUT_VALID = 1000
HELD_OUT_TEST = 1000
MAX_RATIO = 2.5
MAX_WORDS = 100

# Abbreviations that keep their full stop in the gold (``Mr.``, ``hon.``, ``M.``, ``p.m.``).
_ABBREV = {
    "en": (
        "mr",
        "mrs",
        "ms",
        "messrs",
        "hon",
        "st",
        "dr",
        "no",
        "nos",
        "p.m",
        "a.m",
        "e.g",
        "i.e",
        "jr",
        "sr",
        "gen",
        "col",
        "lt",
        "vs",
        "etc",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "rev",
        "prof",
    ),
    "fr": (
        "m",
        "mm",
        "mme",
        "mmes",
        "mlle",
        "hon",
        "st",
        "ste",
        "dr",
        "no",
        "nos",
        "p.ex",
        "etc",
        "inc",
        "ltée",
        "cie",
        "art",
        "prof",
    ),
}
# French elisions (the word before the apostrophe) and their full forms, as in the gold.
_ELISION = {
    "l": "le",
    "d": "de",
    "j": "je",
    "qu": "que",
    "c": "ce",
    "n": "ne",
    "s": "se",
    "m": "me",
    "t": "te",
    "jusqu": "jusque",
    "lorsqu": "lorsque",
    "puisqu": "puisque",
    "quelqu": "quelque",
    "presqu": "presque",
    "quoiqu": "quoique",
}
_FUSED = {"du": "de le", "des": "de les", "au": "à le", "aux": "à les"}
_EN_CLITIC = re.compile(r"^(\w+)(n't|'s|'re|'ve|'ll|'d|'m)$")


def _token_re(lang: str) -> re.Pattern:
    abbrev = "|".join(re.escape(a) + r"\." for a in sorted(_ABBREV[lang], key=len, reverse=True))
    return re.compile(
        rf"(?<!\w)(?:{abbrev})(?!\w)"  # abbreviations with their full stop
        r"|\d+(?:[.,]\d+)*"  # numbers: 1,122,000  6.42
        r"|'(?:s|re|ve|ll|d|m|t)(?!\w)"  # English clitics already split off ("man 's")
        r"|\w+(?:'\w+)*'?"  # words with inner apostrophes, elided forms (l', aujourd')
        r"|--|\.\.\.|[^\w\s]",  # punctuation, one symbol at a time
        re.UNICODE,
    )


_TOKEN = {lang: _token_re(lang) for lang in _ABBREV}


def tokenize(text: str, lang: str) -> list[str]:
    """Lowercased gold-style words of raw ``text``: 'L'opposition s'y oppose.' -> ['le', 'opposition', 'se', 'y', 'oppose', '.']."""
    if lang not in _TOKEN:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(sorted(_TOKEN))}")
    text = html.unescape(text).lower().replace("’", "'").replace("`", "'")
    out: list[str] = []
    for tok in _TOKEN[lang].findall(text):
        if lang == "fr":
            out += _french(tok)
        else:
            m = _EN_CLITIC.match(tok)
            out += [m.group(1), m.group(2)] if m else [t for t in tok.split("'") if t] if tok.endswith("'") else [tok]
    return out


def _french(tok: str) -> list[str]:
    words: list[str] = []
    parts = tok.split("'")
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if last:
            if part:
                words += _FUSED.get(part, part).split()
        elif part in _ELISION:
            words.append(_ELISION[part])
        else:  # aujourd'hui and the rare unknown elision keep the apostrophe, as the gold does
            words.append(part + "'")
    return words


@dataclass
class Corpus:
    """Tokenized (en, fr) pairs: ``train``, ``valid`` and ``test`` (held-out Hansard slices), ``dropped`` counts by reason."""

    train: list[tuple[str, str]] = field(default_factory=list)
    valid: list[tuple[str, str]] = field(default_factory=list)
    test: list[tuple[str, str]] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    sets: dict[str, int] = field(default_factory=dict)


def _lines(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def keep(en: list[str], fr: list[str], en_raw: str, fr_raw: str) -> str | None:
    """Why a pair is dropped ('empty', 'ratio', 'length'), or None to keep it."""
    if not en or not fr:
        return "empty"
    if len(en) > MAX_WORDS or len(fr) > MAX_WORDS:
        return "length"
    a, b = len(en_raw), len(fr_raw)
    if max(a, b) > 20 and max(a, b) > MAX_RATIO * min(a, b):
        return "ratio"
    return None


def collect(shared: str, multi30k: bool = True) -> Corpus:
    """Every En-Fr pair of ``shared/parallel/enfr_extra`` (and Multi30k train), gold-style, split as the module says."""
    root = os.path.join(shared, "parallel", "enfr_extra")
    if not os.path.isdir(root):
        raise FileNotFoundError(f"no En-Fr text at {root}")
    corpus = Corpus()
    sources: list[tuple[str, list[str], list[str]]] = []
    for name in sorted(os.listdir(root)):
        en, fr = os.path.join(root, name, name + ".en"), os.path.join(root, name, name + ".fr")
        if os.path.exists(en) and os.path.exists(fr):
            a, b = _lines(en), _lines(fr)
            if len(a) != len(b):
                raise ValueError(f"{en} has {len(a)} lines but {fr} has {len(b)}")
            sources.append((name, a, b))
    if HANSARD not in [s[0] for s in sources]:
        raise FileNotFoundError(f"{root} has no {HANSARD}/ set")
    if multi30k:
        tok = os.path.join(shared, "parallel", "multi30k", "tok")
        sources.append(
            (
                "multi30k",
                _lines(os.path.join(tok, "train.lc.norm.tok.en")),
                _lines(os.path.join(tok, "train.lc.norm.tok.fr")),
            )
        )
    for name, en_lines, fr_lines in sources:
        n = len(en_lines)
        cut = n - HELD_OUT_VALID - HELD_OUT_TEST if name == HANSARD else n
        kept = 0
        for i, (e, f) in enumerate(zip(en_lines, fr_lines)):
            en, fr = tokenize(e, "en"), tokenize(f, "fr")
            why = keep(en, fr, e, f)
            pair = (" ".join(en), " ".join(fr))
            if i >= cut:  # held-out slices are never filtered: BLEU is measured on the slice as it is
                if en and fr:
                    (corpus.valid if i < cut + HELD_OUT_VALID else corpus.test).append(pair)
                continue
            if why:
                corpus.dropped[why] = corpus.dropped.get(why, 0) + 1
                continue
            corpus.train.append(pair)
            kept += 1
        corpus.sets[name] = kept
    return corpus
