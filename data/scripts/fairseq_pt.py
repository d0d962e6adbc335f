"""Print the path of a .pt that fairseq itself reads for a model folder shipped as safetensors
(written once into the cache from model.safetensors + model_config.json, verified by its sha256):
for ``fairseq-train --restore-file`` and other tools that run without the plugin.

Usage: python data/scripts/fairseq_pt.py MODEL_DIR        # e.g. data/models/deen
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a model folder (model.safetensors + model_config.json), or a .pt (printed as is)")
    args = ap.parse_args(argv)
    from fairseq_plugins.checkpoint import CheckpointError, fairseq_checkpoint

    try:
        path = fairseq_checkpoint(args.model)
    except (CheckpointError, OSError) as e:
        sys.exit(f"fairseq_pt: {e}")  # exit status 1, the message on stderr
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
