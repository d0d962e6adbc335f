"""Links proper: alignments, subword-to-word maps, decoders, symmetrization, combinations of two
directions, blends, score rows to links. Standard library and numpy only, and nothing of the file layer
(:mod:`align.io`), the gold sets (:mod:`align.gold`) or above (``tests/test_imports.py`` keeps it so)."""

from .alignments import Alignments
from .decode import DECODERS, decode
from .subwords import WORD_MAPS, aggregate_scores, subword_links_to_words, word_map
from .symmetrize import SYMMETRIZERS, symmetrize, symmetrize_corpus

__all__ = [
    "Alignments",
    "DECODERS",
    "SYMMETRIZERS",
    "WORD_MAPS",
    "aggregate_scores",
    "decode",
    "subword_links_to_words",
    "symmetrize",
    "symmetrize_corpus",
    "word_map",
]
