"""Word alignment core: links, file formats, subword-to-word maps, decoders, symmetrization.

Numpy only; the norm math that needs torch lives in :mod:`align.norms` and is not imported here.
Convention everywhere: links are 0-based ``(src, tgt)``; score matrices are ``(tgt_len, src_len)``.
"""

from .decode import DECODERS, decode
from .formats import (FORMATS, AlignmentFormatError, LineCountError, LinkRangeError, read_alignments,
                      read_text_pairs, write_alignments)
from .links import Alignments
from .subwords import WORD_MAPS, aggregate_scores, subword_links_to_words, word_map
from .symmetrize import SYMMETRIZERS, symmetrize, symmetrize_corpus

__all__ = ["Alignments", "AlignmentFormatError", "DECODERS", "FORMATS", "LineCountError",
           "LinkRangeError", "SYMMETRIZERS", "WORD_MAPS", "aggregate_scores", "decode",
           "read_alignments", "read_text_pairs", "subword_links_to_words", "symmetrize",
           "symmetrize_corpus", "word_map", "write_alignments"]
__version__ = "0.1.0"
