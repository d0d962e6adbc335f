"""Word alignments from translation models, in layers that the folders show:

- :mod:`align.spec`: a setting, a blend, what a run computes and its signature (standard library);
- :mod:`align.links`: links, subword-to-word maps, decoders, symmetrization, combinations, blends;
  :mod:`align.io`: files (alignments, text, compressed input, score files, atomic writes);
  :mod:`align.gold`: the gold test sets by name; :mod:`align.confidence`: link probabilities
  (standard library and numpy; never torch);
- :mod:`align.attribution`: the attribution math and the method registry (torch, no framework);
- :mod:`align.extraction`: the engine, the adapters' interface, the Python API, shards and output
  folders (torch for the engine; never fairseq or transformers);
- :mod:`align.cli`: the console scripts' ``main`` functions (argparse, printing, exit codes).

Importing ``align`` loads the numpy layers only. Convention everywhere: links are 0-based
``(src, tgt)``; score matrices are ``(tgt_len, src_len)``.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

from .io import (
    FORMATS,
    AlignmentFormatError,
    LineCountError,
    LinkRangeError,
    read_alignments,
    read_text_pairs,
    write_alignments,
)
from .links import (
    DECODERS,
    SYMMETRIZERS,
    WORD_MAPS,
    Alignments,
    aggregate_scores,
    decode,
    subword_links_to_words,
    symmetrize,
    symmetrize_corpus,
    word_map,
)

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
__version__ = "0.2.0"
"""The one version number: setup.cfg reads it, every console script's ``--version`` prints it, and
signatures and manifests record it."""

MOVED = {
    "align.formats": "align.io",
    "align.subwords": "align.links.subwords",
    "align.decode": "align.links.decode",
    "align.symmetrize": "align.links.symmetrize",
    "align.extract": "align.links.rows",
    "align.softscores": "align.io.softscores",
    "align.inputs": "align.io.inputs",
    "align.norms": "align.attribution.norms",
    "align.contrib": "align.attribution.contrib",
    "align.methods": "align.attribution.methods",
    "align.adapters": "align.extraction.adapters",
    "align.engine": "align.extraction.engine",
    "align.aligner": "align.extraction.aligner",
    "align.shards": "align.extraction.shards",
    "align.outputs": "align.extraction.outputs",
    "align.signature": "align.spec.signature",
    "align.extraction.signature": "align.spec.signature",
    "align.cli.extras": "align.extraction.extras",
    "align.links.formats": "align.io",
    "align.links.inputs": "align.io.inputs",
    "align.links.softscores": "align.io.softscores",
    "align.links.console": "align.io.console",
    "align.links.testsets": "align.gold.testsets",
    "align.links.calibration": "align.confidence.calibration",
    "align.launch": "align.extraction.launch",
    "align.extract_cli": "align.cli.extract",
}
"""Module paths of release 0.1.0 that moved in 0.2.0 (and those of 0.2.0 that moved after it: the signature,
the file layer, the gold sets and the calibration), and where they are now: importing an old path still works in
0.2.x, with a DeprecationWarning naming the new one;
the old paths go in 0.3.0."""


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as its new module (the same module object, not a copy)."""

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec):
        warnings.warn(
            f"{spec.name} moved to {MOVED[spec.name]}; the old path goes away in 0.3.0",
            DeprecationWarning,
            stacklevel=3,
        )
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module) -> None:
        pass


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())
