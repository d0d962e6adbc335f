"""The file layer: alignment files (:mod:`.formats`), lines of plain or compressed text (:mod:`.lines`),
sentence text (:mod:`.text`), files written whole (:mod:`.atomic`), align-extract's input (:mod:`.inputs`),
soft-score files (:mod:`.softscores`), a forward and a reverse file of one corpus read together and checked
against each other and the text (:mod:`.directions`), the errors that name file and line (:mod:`.errors`)
and the console scripts' output plumbing (:mod:`.console`). Standard library and numpy; it reads and
writes :class:`align.links.alignments.Alignments` and nothing above them.

``align.links.formats`` (0.2.0) is this package now: its names are all here but ``shared_data_dir``, which is
:func:`align.gold.testsets.shared_data_dir`.
"""

from .atomic import new_file_mode, replace_atomic, write_text_atomic
from .errors import AlignmentFormatError, LineCountError, LinkRangeError
from .formats import (
    FORMATS,
    MAX_SENTENCE_NUMBER,
    AlignmentStream,
    CountedStream,
    TextLengthStream,
    check_format,
    format_links,
    raise_count_mismatch,
    read_alignments,
    write_alignments,
)
from .lines import BLOCK_LINES, iter_line_chunks, open_binary_input, read_lines
from .text import check_links_in_range, read_text_pairs, read_wpt_text, split_tokens

__all__ = [
    "BLOCK_LINES",
    "FORMATS",
    "MAX_SENTENCE_NUMBER",
    "AlignmentFormatError",
    "AlignmentStream",
    "CountedStream",
    "LineCountError",
    "LinkRangeError",
    "TextLengthStream",
    "check_format",
    "check_links_in_range",
    "format_links",
    "iter_line_chunks",
    "new_file_mode",
    "open_binary_input",
    "raise_count_mismatch",
    "read_alignments",
    "read_lines",
    "read_text_pairs",
    "read_wpt_text",
    "replace_atomic",
    "split_tokens",
    "write_alignments",
    "write_text_atomic",
]
