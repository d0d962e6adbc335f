"""Convert a fairseq checkpoint to the pickle-free shipping format: model.safetensors (weights, dtypes as
stored) + model_config.json (fairseq's config as JSON), with the dictionaries and spm.model of a model
folder copied beside them. The written model is read back and compared tensor by tensor.

Usage: python data/scripts/to_safetensors.py [--trust-checkpoint] MODEL_DIR_OR_PT OUT_DIR
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

# files of a model folder that travel with the weights
COMPANIONS = ("dict.*.txt", "spm.model", "MODEL_CARD.md")


def mismatches(a: dict, b: dict) -> list[str]:
    """Keys of two state dicts whose tensors differ in presence, dtype, shape or value."""
    import torch

    bad = sorted(set(a) ^ set(b))
    for k in sorted(set(a) & set(b)):
        if a[k].dtype != b[k].dtype or a[k].shape != b[k].shape or not torch.equal(a[k], b[k]):
            bad.append(k)
    return bad


def convert(src: str, out: str, trust: bool = False) -> list[str]:
    """Write ``out``/model.safetensors and model_config.json from ``src`` (a .pt or a folder holding model.pt),
    copy a folder's dictionaries, spm.model and card; returns the paths written."""
    from fairseq_plugins.checkpoint import (
        CheckpointError,
        fairseq_checkpoint,
        load_checkpoint,
        load_safe,
        read_preprocessing,
        save_safe,
    )

    folder = src if os.path.isdir(src) else None
    pt = os.path.join(src, "model.pt") if folder else src
    if folder and not os.path.isfile(pt) and os.path.isfile(os.path.join(src, "model.safetensors")):
        pt = fairseq_checkpoint(src)  # a shipped folder (safetensors only): its cached .pt, re-exported
    if not os.path.isfile(pt):
        raise FileNotFoundError(f"{pt}: no such checkpoint")
    state = load_checkpoint(pt, trust=trust)
    weights = save_safe(state, out, preprocessing=read_preprocessing(folder or pt))
    bad = mismatches(state["model"], load_safe(out)["model"])
    if bad:
        raise CheckpointError(f"{weights}: read back differs from {pt} at {', '.join(bad[:5])}")
    written = [weights, os.path.join(out, "model_config.json")]
    if folder and os.path.abspath(folder) != os.path.abspath(out):
        for pattern in COMPANIONS:
            for f in sorted(glob.glob(os.path.join(folder, pattern))):
                written.append(shutil.copy(f, os.path.join(out, os.path.basename(f))))
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", metavar="MODEL_DIR_OR_PT", help="a model folder holding model.pt, or a .pt checkpoint")
    ap.add_argument("out", metavar="OUT_DIR", help="folder to write (may be the model folder itself)")
    ap.add_argument(
        "--trust-checkpoint",
        action="store_true",
        help="unpickle the checkpoint fully, which runs any code in it: only for a file you trust",
    )
    args = ap.parse_args(argv)
    from fairseq_plugins.checkpoint import CheckpointError

    try:
        written = convert(args.model, args.out, trust=args.trust_checkpoint)
    except (CheckpointError, OSError) as e:
        print(f"to_safetensors: {e}", file=sys.stderr)
        return 1
    for p in written:
        print(f"wrote {p} ({os.path.getsize(p) / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
