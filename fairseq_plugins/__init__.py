"""fairseq ``--user-dir`` plugin: norm-aware word alignments (Kobayashi et al. 2020, 2021).

``fairseq-generate DATA --user-dir fairseq_plugins --task translation_norm_align --path CKPT
--print-alignment --alignment-method norm [--score-reference] [--alignment-dump DIR]``
"""

import logging
import sys


def _import_keeping_logging() -> None:
    """Import the plugin (and so fairseq) without fairseq's logging set-up taking over a library user's process.

    Importing fairseq calls ``logging.basicConfig(level=DEBUG)`` (fairseq/models/wav2vec/wav2vec2_classification.py)
    and logs INFO lines while it loads; afterwards every DEBUG record would print (matplotlib's font search
    alone: over 200 lines). A placeholder handler, passing on warnings only, makes those basicConfig calls
    no-ops for the import. When the root logger already has a handler (fairseq's CLIs load the plugin after
    importing fairseq; a user who set up logging first) nothing changes; so a process that imported fairseq
    itself before the plugin keeps fairseq's DEBUG set-up.
    """
    root = logging.getLogger()
    placeholder = None
    if not root.handlers:
        placeholder = logging.StreamHandler(sys.stderr)
        placeholder.setLevel(logging.WARNING)
        placeholder.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
        root.addHandler(placeholder)
    try:
        from . import tasks  # noqa: F401  (registers translation_norm_align)
    finally:
        if placeholder is not None:
            root.removeHandler(placeholder)


_import_keeping_logging()

from .checkpoint import install_safe_loader  # noqa: E402

# fairseq's checkpoint reading allows only the classes fairseq checkpoints need (and safetensors models).
install_safe_loader()
