"""fairseq ``--user-dir`` plugin: norm-aware word alignments (Kobayashi et al. 2020, 2021).

``fairseq-generate DATA --user-dir fairseq_plugins --task translation_norm_align --path CKPT
--print-alignment --alignment-method norm [--score-reference] [--alignment-dump DIR]``
"""

import os

# torch >= 2.6 refuses fairseq checkpoints (pickled argparse Namespaces) under weights_only loading.
os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")

from . import tasks  # noqa: E402,F401  (registers translation_norm_align)
