"""fairseq ``--user-dir`` plugin: norm-aware word alignments (Kobayashi et al. 2020, 2021).

``fairseq-generate DATA --user-dir fairseq_plugins --task translation_norm_align --path CKPT
--print-alignment --alignment-method norm [--score-reference] [--alignment-dump DIR]``
"""

from . import tasks  # noqa: F401  (registers translation_norm_align)
from .checkpoint import install_safe_loader

# fairseq's checkpoint reading allows only the classes fairseq checkpoints need (and safetensors models).
install_safe_loader()
