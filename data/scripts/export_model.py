"""Ship a trained checkpoint: weights in fp16, no optimizer moments, with the SentencePiece model and
dictionaries beside it: the pickle-free model.safetensors + model_config.json (what is committed) and
model.pt (fairseq's pickle, for local use; *.pt is never committed). fairseq loads the fp16 weights
into its fp32 model (load_state_dict casts);
``fairseq-train --user-dir fairseq_plugins --restore-file`` either one continues from its update count.

Usage: python data/scripts/export_model.py CHECKPOINT WORKDIR OUTDIR SRC TGT [--continues PREV]

--continues: CHECKPOINT continued PREV (a shipped model folder, or a .pt) with its optimizer reset, as fp16 training
on a GPU must (fairseq loads no fp32 FairseqAdam record into an FP16Optimizer, whose one flat parameter fits no
CPU run either). The export then counts PREV's updates too and keeps PREV's optimizer record after the run's
own, so that ``--restore-file`` from the export on a CPU resumes at the sum, on the CPU recipe's schedule.
"""

from __future__ import annotations

import os
import shutil
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from fairseq_plugins.checkpoint import CheckpointError, load_checkpoint, read_state, save_safe  # noqa: E402

# What data/scripts/prepare.py does to the text (recorded in model_config.json; every entry point applies it)
PREPROCESSING = {
    "lowercase": True,
    "note": "trained on lowercased, word-tokenized text (data/README.md); "
    "align-extract, the Python API and the plugin lowercase the input; tokenization stays the user's",
}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    prev_path = None
    if "--continues" in argv:
        i = argv.index("--continues")
        if i + 1 >= len(argv):
            print(__doc__, file=sys.stderr)
            return 2
        prev_path = argv[i + 1]
        del argv[i : i + 2]
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    ckpt, work, out, src, tgt = argv
    try:
        state = load_checkpoint(ckpt)  # our own training's checkpoint, yet read without running code all the same
        prev = read_state(prev_path) if prev_path else None  # a shipped folder (safetensors) or a .pt
    except (CheckpointError, OSError) as e:
        print(f"export_model: {e}", file=sys.stderr)
        return 1
    if prev is not None and not (
        prev.get("optimizer_history") and prev.get("last_optimizer_state") and state.get("optimizer_history")
    ):
        print(
            f"export_model: --continues needs an optimizer record (optimizer_history, and last_optimizer_state in "
            f"the earlier model) in both {ckpt} and {prev_path}",
            file=sys.stderr,
        )
        return 1
    if prev is not None:
        run, before = state["optimizer_history"][-1], prev["optimizer_history"][-1]
        if run["optimizer_name"] == before["optimizer_name"] and run["num_updates"] >= before["num_updates"]:
            # a run resumed with its optimizer (a CPU run) already counts PREV's updates: the sum would count twice
            print(
                f"export_model: {ckpt} ({run['optimizer_name']}, {run['num_updates']} updates) resumed {prev_path} "
                f"({before['num_updates']} updates) with its optimizer; --continues is for a run whose optimizer "
                "was reset: export without it",
                file=sys.stderr,
            )
            return 1
    os.makedirs(out, exist_ok=True)
    keep = {k: state[k] for k in ("cfg", "args") if state.get(k) is not None}
    # Tied weights (shared embeddings: three keys, one tensor in the checkpoint) stay one tensor, so that
    # torch.save writes them once: halving each key apart stored a 16k x 256 embedding three times. A GPU
    # run's checkpoint holds three equal copies (fairseq moves each key to the CPU on its own), so equal
    # values count as one tensor too; loading copies values into each parameter, so sharing loses nothing.
    halves: dict[tuple, torch.Tensor] = {}
    by_value: dict[tuple, list[torch.Tensor]] = {}
    keep["model"] = {}
    for k, v in state["model"].items():
        if v.is_floating_point():
            tie = (v.data_ptr(), tuple(v.shape), tuple(v.stride()))
            if tie not in halves:
                h = v.half()
                same = by_value.setdefault((tuple(h.shape), h.dtype), [])
                halves[tie] = next((u for u in same if torch.equal(u, h)), h)
                if halves[tie] is h:
                    same.append(h)
            v = halves[tie]
        keep["model"][k] = v
    keep["extra_state"] = {"train_iterator": state.get("extra_state", {}).get("train_iterator", {})}
    keep["optimizer_history"] = state.get("optimizer_history", [])[-1:]
    # Adam's moments would triple the size; keep only its hyper-parameters so that
    # `--restore-file model.pt` resumes with the update count and LR schedule, moments afresh.
    opt = state.get("last_optimizer_state")
    if opt is not None:
        keep["last_optimizer_state"] = {"state": {}, "param_groups": opt["param_groups"]}
    if prev is not None:
        total = before["num_updates"] + run["num_updates"]
        keep["optimizer_history"] = [dict(run), dict(before, num_updates=total)]
        keep["last_optimizer_state"] = {"state": {}, "param_groups": prev["last_optimizer_state"]["param_groups"]}
        print(f"{prev_path}: {before['num_updates']} updates + {run['num_updates']} here = {total}")
    if "cfg" in keep:
        keep["cfg"]["task"]["data"] = "."
        keep["cfg"]["checkpoint"]["save_dir"] = "."
        # where training resumed from is a path of the training machine: fairseq's default instead
        keep["cfg"]["checkpoint"]["restore_file"] = "checkpoint_last.pt"
        # train.sh's --user-dir (the safe loader) is a path on the training machine, needed by no reader
        if isinstance(keep["cfg"].get("common"), dict):
            keep["cfg"]["common"]["user_dir"] = None
        if hasattr(keep["cfg"].get("model"), "user_dir"):
            keep["cfg"]["model"].user_dir = None
        if hasattr(keep["cfg"].get("model"), "data"):  # the training machine's path again
            keep["cfg"]["model"].data = "."
        if hasattr(keep["cfg"].get("model"), "restore_file"):
            keep["cfg"]["model"].restore_file = "checkpoint_last.pt"
    torch.save(keep, os.path.join(out, "model.pt"))
    save_safe(keep, out, preprocessing=PREPROCESSING)
    record_training_text(work, out)
    for name in (f"dict.{src}.txt", f"dict.{tgt}.txt"):
        shutil.copy(os.path.join(work, "bin", name), os.path.join(out, name))
    shutil.copy(os.path.join(work, "spm.model"), os.path.join(out, "spm.model"))
    size = {f: os.path.getsize(os.path.join(out, f)) / 1e6 for f in ("model.pt", "model.safetensors")}
    print(f"wrote {out}: " + ", ".join(f"{f} {mb:.1f} MB" for f, mb in size.items()) + ", model_config.json")
    return 0


def record_training_text(work: str, out: str) -> None:
    """What the training text held of the gold test sentences (WORK/prepare.json, data/scripts/prepare.py), kept as
    ``training_text`` in OUT/model_config.json: ``test_repeat`` N (every test sentence N times) or ``test_halves``
    (the odd-numbered once, the even-numbered never). The demo and the benchmarks label their figures with it."""
    import json

    path = os.path.join(work, "prepare.json")
    if not os.path.isfile(path):
        return  # an older work folder: the model card says it
    with open(path, encoding="utf-8") as f:
        prep = json.load(f)
    cfg_path = os.path.join(out, "model_config.json")
    with open(cfg_path, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["training_text"] = {
        "train_pairs": prep.get("train_pairs"),
        "test_file": os.path.basename(str(prep.get("test_file") or "")),
        "test_pairs": prep.get("test_pairs"),
        "test_repeat": prep.get("test_repeat"),
        "test_halves": prep.get("test_halves"),
    }
    with open(cfg_path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(cfg_path + ".tmp", cfg_path)


if __name__ == "__main__":
    sys.exit(main())
