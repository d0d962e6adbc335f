"""The text and link layer: alignments, file formats, subword-to-word maps, decoders,
symmetrization, score rows to links, soft-score files and align-extract's input readers.
Standard library and numpy only: never torch (``tests/test_imports.py`` keeps it so)."""

from .alignments import Alignments
from .decode import DECODERS, decode
from .formats import (
    FORMATS,
    AlignmentFormatError,
    LineCountError,
    LinkRangeError,
    read_alignments,
    read_text_pairs,
    write_alignments,
)
from .subwords import WORD_MAPS, aggregate_scores, subword_links_to_words, word_map
from .symmetrize import SYMMETRIZERS, symmetrize, symmetrize_corpus

__all__ = [
    "Alignments",
    "AlignmentFormatError",
    "DECODERS",
    "FORMATS",
    "LineCountError",
    "LinkRangeError",
    "SYMMETRIZERS",
    "WORD_MAPS",
    "aggregate_scores",
    "decode",
    "read_alignments",
    "read_text_pairs",
    "subword_links_to_words",
    "symmetrize",
    "symmetrize_corpus",
    "word_map",
    "write_alignments",
]
