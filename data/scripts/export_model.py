"""Ship a trained checkpoint: weights in fp16, no optimizer moments, with the SentencePiece model and
dictionaries beside it. fairseq loads the fp16 weights into its fp32 model (load_state_dict casts);
``fairseq-train --restore-file model.pt`` continues from its update count.

Usage: python data/scripts/export_model.py CHECKPOINT WORKDIR OUTDIR SRC TGT
"""

from __future__ import annotations

import os
import shutil
import sys

import torch


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    ckpt, work, out, src, tgt = argv
    os.makedirs(out, exist_ok=True)
    state = torch.load(ckpt, map_location="cpu", weights_only=False)
    keep = {k: state[k] for k in ("cfg", "args") if state.get(k) is not None}
    keep["model"] = {k: (v.half() if v.is_floating_point() else v) for k, v in state["model"].items()}
    keep["extra_state"] = {"train_iterator": state.get("extra_state", {}).get("train_iterator", {})}
    keep["optimizer_history"] = state.get("optimizer_history", [])[-1:]
    # Adam's moments would triple the size; keep only its hyper-parameters so that
    # `--restore-file model.pt` resumes with the update count and LR schedule, moments afresh.
    opt = state.get("last_optimizer_state")
    if opt is not None:
        keep["last_optimizer_state"] = {"state": {}, "param_groups": opt["param_groups"]}
    if "cfg" in keep:
        keep["cfg"]["task"]["data"] = "."
        keep["cfg"]["checkpoint"]["save_dir"] = "."
    torch.save(keep, os.path.join(out, "model.pt"))
    for name in (f"dict.{src}.txt", f"dict.{tgt}.txt"):
        shutil.copy(os.path.join(work, "bin", name), os.path.join(out, name))
    shutil.copy(os.path.join(work, "spm.model"), os.path.join(out, "spm.model"))
    print(f"wrote {out}: model.pt {os.path.getsize(os.path.join(out, 'model.pt')) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
