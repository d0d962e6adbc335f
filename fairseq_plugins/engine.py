"""fairseq glue for the engine of :mod:`align.extraction.engine`: dictionaries, pieces and word maps.

A piece that the fairseq dictionary lacks is binarized as ``<unk>`` and loses its word marker, so
word boundaries are rebuilt from the real pieces whenever they are known (the Python API and
``align-extract`` keep them; the plugin reads them with ``--alignment-text``), and a sentence whose
``<unk>`` hides a boundary fails with an error that names it instead of shifting every later word.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from align.links.subwords import SPECIAL, WordMapError, word_map


def detect_scheme(dictionary) -> str:
    """sentencepiece if many symbols start with '▁', subword-nmt if many end with '@@', else none."""
    symbols = dictionary.symbols[dictionary.nspecial :]
    sp = sum(s.startswith("\u2581") for s in symbols)
    bpe = sum(s.endswith("@@") for s in symbols)
    if max(sp, bpe) < 0.05 * max(len(symbols), 1):
        return "none"
    return "sentencepiece" if sp >= bpe else "subword-nmt"


def specials_of(dictionary) -> tuple[str, ...]:
    """The dictionary's special symbols that belong to no word (EOS, BOS, padding)."""
    return (dictionary[dictionary.eos()], dictionary[dictionary.bos()], dictionary[dictionary.pad()])


def piece_words(pieces: Sequence[str], scheme: str, specials: Sequence[str], unk: str, what: str) -> np.ndarray:
    """Word id per piece (-1 for specials); WordMapError naming ``what`` if an ``<unk>`` hides a word
    boundary (its own marker is lost, so it could open a word or continue one)."""
    if unk in pieces:
        k = list(pieces).index(unk)
        raise WordMapError(
            f"{what}: token {k} is {unk} (a piece outside the model's dictionary), so its word "
            "boundary is unknown and every later word index could shift; pass the segmented text "
            "with --alignment-text PREFIX (the files given to fairseq-preprocess), or align the pair "
            "with align-extract or the Python API, which keep the real pieces"
        )
    return word_map(pieces, scheme, specials)


def encode_pieces(pieces: Sequence[str], dictionary, scheme: str) -> tuple[list[int], np.ndarray]:
    """Ids of SentencePiece/subword-nmt pieces plus EOS, and each id's word (-1 for EOS); a piece
    outside the dictionary becomes ``<unk>`` but keeps its place in its word."""
    ids = [dictionary.index(p) for p in pieces] + [dictionary.eos()]
    words = np.append(word_map(list(pieces), scheme), SPECIAL)
    return ids, words
