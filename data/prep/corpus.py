"""Library of ``data/scripts/deen_corpus.py``: every German-English pair in ``../shared/data/parallel`` as one ``de ||| en`` file (lowercased,
punctuation split off), for training aligners and De-En/En-De models; Multi30k val (validation)
and FLORES-101 devtest (held-out BLEU) are held out and written beside it.

Sources: Multi30k (train, val, the test sets; already lowercased and Moses-tokenized), Tatoeba
(``deu.txt``), and the 41 sets of ``deen_extra`` (news, Europarl, TED, chat, FLORES). Pairs that
match an RWTH gold sentence were already removed from ``deen_extra`` (see its README).
Usage: python data/scripts/deen_corpus.py SHARED_DATA_DIR OUT_FILE   (also writes OUT_FILE.de, OUT_FILE.en)
"""

from __future__ import annotations

import gzip
import os
import re

# Split off punctuation (not word-internal hyphens, apostrophes or decimal points), as the gold sets are tokenized.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\w+(?:[-'’]\w+)*|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> str:
    """Lowercase and split punctuation from words: 'Das stimmt nicht!' -> 'das stimmt nicht !'."""
    return " ".join(_TOKEN.findall(text.lower()))


def _lines(path: str) -> list[str]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


# Held out of training: Multi30k val (validation) and FLORES-101 devtest (held-out BLEU).
HELD_OUT = ("val.lc.norm.tok", "flores101-devtest")


def collect(shared: str, held_out: tuple[str, ...] = HELD_OUT) -> list[tuple[str, str]]:
    """All (de, en) pairs except the ``held_out`` sets, tokenized and lowercased, empty sides dropped."""
    return split(shared, held_out)[0]


def split(shared: str, held_out: tuple[str, ...] = HELD_OUT) -> tuple[list, dict[str, list]]:
    """One read of ``shared``: the training (de, en) pairs and {held-out set name: its pairs}."""
    train: list[tuple[str, str]] = []
    held: dict[str, list[tuple[str, str]]] = {name: [] for name in held_out}
    for name, p in _named_pairs(shared):
        (held[name] if name in held else train).append(p)
    missing = [name for name, pairs in held.items() if not pairs]
    if missing:
        raise ValueError(f"no de-en set named {', '.join(missing)} under {shared}/parallel")
    return train, held


def _named_pairs(shared: str) -> list[tuple[str, tuple[str, str]]]:
    pairs: list[tuple[str, tuple[str, str]]] = []
    m30 = os.path.join(shared, "parallel", "multi30k", "tok")
    for name in sorted(os.listdir(m30)):
        if name.endswith(".de"):
            stem = name[:-3]
            en = os.path.join(m30, stem + ".en")
            if os.path.exists(en):
                pairs += [(stem, p) for p in zip(_lines(os.path.join(m30, name)), _lines(en))]
    tat = _lines(os.path.join(shared, "parallel", "tatoeba_deu_eng", "deu.txt"))
    for line in tat[1:]:  # header '1<TAB>2'
        en, _, de = line.partition("\t")
        pairs.append(("tatoeba", (de, en)))
    extra = os.path.join(shared, "parallel", "deen_extra")
    for name in sorted(os.listdir(extra)):
        folder = os.path.join(extra, name)
        de, en = os.path.join(folder, name + ".de"), os.path.join(folder, name + ".en")
        if os.path.exists(de) and os.path.exists(en):
            a, b = _lines(de), _lines(en)
            if len(a) != len(b):
                raise ValueError(f"{de} has {len(a)} lines but {en} has {len(b)}")
            pairs += [(name, p) for p in zip(a, b)]
    out = [(name, (tokenize(d), tokenize(e))) for name, (d, e) in pairs]
    return [(name, (d, e)) for name, (d, e) in out if d and e]


def write_sides(out: str, subsets: list[tuple[str, list[tuple[str, str]]]], sides: tuple[str, str]) -> None:
    """``OUT{suffix}.{side}`` for each ``(suffix, pairs)``: one sentence per line, each side its own file
    (the form fairseq's preprocessing reads), written atomically; OUT's folder is created."""
    from align.io.atomic import write_text_atomic

    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    for suffix, pairs in subsets:
        for k, side in enumerate(sides):
            write_text_atomic(f"{out}{suffix}.{side}", "".join(p[k] + "\n" for p in pairs))


def corpus_args(doc: str, out_help: str, argv: list[str] | None):
    """The flags every corpus script takes: the shared data folder and where to write (its usage from ``doc``)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("shared", help="the shared data folder (../shared/data)")
    ap.add_argument("out", help=out_help)
    return ap.parse_args(argv)
