"""The layers, as data: each folder, what its modules may import, and what they must never import.

``tests/test_imports.py`` checks every import statement of every module against :data:`LAYERS`, and the
documentation's layout page (``docs/guides/layout.md``) is drawn from it and from the tree, so the rules,
the check and the page cannot drift apart. Standard library only.
"""

from __future__ import annotations

FRAMEWORKS = frozenset({"fairseq", "fairseq_cli", "transformers", "huggingface_hub", "omegaconf", "hydra"})
"""Modules only the plugins (``fairseq_plugins/``, ``hf_plugins/``) may import."""

_NUMPY_LAYERS = ("align.io", "align.gold", "align.confidence")
_ABOVE = ("align.attribution", "align.extraction", "align.cli", "eval")

LAYERS: dict[str, tuple[str, frozenset[str]]] = {
    # folder: (what it may import, what its modules must never import), lowest layer first
    "align/spec": (
        "the standard library",
        frozenset({"numpy", "torch", "align.links", *_NUMPY_LAYERS, *_ABOVE}) | FRAMEWORKS,
    ),
    "align/links": (
        "numpy, `align.spec`",
        frozenset({"torch", "matplotlib", *_NUMPY_LAYERS, *_ABOVE}) | FRAMEWORKS,
    ),
    "align/io": (
        "numpy, `align.spec`, `align.links`",
        frozenset({"torch", "matplotlib", "align.gold", "align.confidence", *_ABOVE}) | FRAMEWORKS,
    ),
    "align/gold": (
        "numpy, `align.io`, `align.links`",
        frozenset({"torch", "matplotlib", "align.confidence", *_ABOVE}) | FRAMEWORKS,
    ),
    "align/confidence": (
        "numpy, `align.io`, `align.links`",
        frozenset({"torch", "matplotlib", "align.gold", *_ABOVE}) | FRAMEWORKS,
    ),
    "align/attribution": (
        "torch, the numpy layers",
        frozenset({"align.extraction", "align.cli", "eval", "numpy.distutils"}) | FRAMEWORKS,
    ),
    "align/extraction": ("torch, the layers above", frozenset({"align.cli", "eval"}) | FRAMEWORKS),
    "align/cli": (
        "any `align` layer (frameworks only through loaders named at run time)",
        frozenset({"eval"}) | FRAMEWORKS,
    ),
    "eval": (
        "numpy, `align.spec` and the numpy layers",
        frozenset({"torch", "align.attribution", "align.extraction", "align.cli"}) | FRAMEWORKS,
    ),
}
"""Folder -> (what its modules may import, in words; the module prefixes they must never import)."""
