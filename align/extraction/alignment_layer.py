"""An alignment layer's files, and the checks that it belongs to the model it is attached to (torch).

A trained alignment layer (:mod:`align.attribution.learned`) is stored once, beside its model by default, as a
folder of two files: ``layer.safetensors`` (the query and key projections, float32) and ``layer.json`` (what it
is, what it was trained for and on). ``align-extract`` finds it at ``MODEL/alignment_layer/`` or where
``--alignment-layer DIR`` says, and refuses, in one line and before anything is written, a layer trained for
other languages, another tokenizer or another model (its sha256).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any

from ..attribution.learned import AlignmentHead, HeadShape
from ..io.atomic import write_text_atomic
from ..spec.signature import file_digest, identity_fields, model_key

FORMAT = "norm-align/alignment-layer"
VERSION = 1
FOLDER = "alignment_layer"
WEIGHTS = "layer.safetensors"
CONFIG = "layer.json"

# Words both tokenizers must turn into the same ids as when the layer was trained: letters with and without
# accents, capitals (lowercasing models change them), digits, punctuation and a long word (several pieces).
PROBE = "The House , 1997 : été à Zürich ; anticonstitutionnellement ( 42 % ) ?".split()


class AlignmentLayerError(ValueError):
    """An alignment layer that cannot be used with this model, or whose files are unreadable: one line."""


def default_folder(model_path: str) -> str:
    """Where a model's alignment layer is stored: ``alignment_layer/`` in the model's folder, ``NAME.alignment_layer/``
    beside a model file (two checkpoints of one folder get two); AlignmentLayerError for a model that is no local
    path (a Hub id: its layer's folder must be named)."""
    if os.path.isdir(model_path):
        return os.path.join(model_path, FOLDER)
    if os.path.isfile(model_path):
        return os.path.splitext(model_path)[0] + "." + FOLDER
    raise AlignmentLayerError(
        f"{model_path} is not a local folder or file, so it has no alignment layer beside it: name its folder "
        "(align-extract --alignment-layer DIR, align-train --out DIR)"
    )


def tokenizer_fingerprint(aligner: Any) -> str:
    """sha256 of the ids both sides of :data:`PROBE` encode to (after the model's preprocessing): another
    tokenizer, vocabulary or lowercasing gives another fingerprint."""
    src, tgt = aligner.encode_pair(PROBE, PROBE, where="the tokenizer probe", truncate=True)
    return hashlib.sha256(json.dumps([list(map(int, src.ids)), list(map(int, tgt.ids))]).encode()).hexdigest()


def model_fields(aligner: Any) -> dict[str, Any]:
    """What an alignment layer records of its model: identity (sha256 or Hub revision), languages, tokenizer."""
    src, tgt = aligner.languages()
    return {
        "identity": identity_fields(aligner.identity()),
        "languages": [src, tgt],
        "tokenizer_sha256": tokenizer_fingerprint(aligner),
        "decoder_layers": int(aligner.n_layers),
    }


def save(folder: str, head: AlignmentHead, config: Mapping[str, Any]) -> None:
    """Write ``folder/layer.safetensors`` and ``folder/layer.json`` (``config`` plus the shape and the weights'
    digest), each atomically: the JSON, written last, names the weights it belongs to."""
    from safetensors.torch import save_file

    os.makedirs(folder, exist_ok=True)
    weights = os.path.join(folder, WEIGHTS)
    tmp = weights + ".tmp"
    save_file({k: v.detach().float().contiguous().cpu() for k, v in head.state_dict().items()}, tmp)
    os.replace(tmp, weights)
    s = head.shape
    out = {
        "format": FORMAT,
        "version": VERSION,
        "shape": {"layer": s.layer, "dim": s.dim, "heads": s.heads, "shift": s.shift},
        **dict(config),
        "weights_sha256": file_digest(weights),
    }
    write_text_atomic(os.path.join(folder, CONFIG), json.dumps(out, indent=1) + "\n")


def read_config(folder: str) -> dict[str, Any]:
    """``layer.json`` of an alignment layer folder, its format checked; AlignmentLayerError naming the file."""
    path = os.path.join(folder, CONFIG)
    if not os.path.isfile(path):
        raise AlignmentLayerError(f"{folder}: no alignment layer here ({CONFIG} missing); train one with align-train")
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        raise AlignmentLayerError(f"{path}: not readable as JSON ({e})") from None
    if not isinstance(cfg, dict) or cfg.get("format") != FORMAT:
        raise AlignmentLayerError(f"{path}: not an alignment layer (format {FORMAT!r} expected)")
    if cfg.get("version") != VERSION:
        raise AlignmentLayerError(f"{path}: version {cfg.get('version')!r}; this release reads version {VERSION}")
    for key in ("shape", "model"):
        if not isinstance(cfg.get(key), dict):
            raise AlignmentLayerError(f"{path}: no {key!r} object")
    return cfg


def check_model(cfg: Mapping[str, Any], aligner: Any, where: str) -> None:
    """AlignmentLayerError in one line unless the layer was trained for this model: its languages, then its
    tokenizer, then its identity (the clearest difference is named first)."""
    mine = cfg["model"]
    theirs = model_fields(aligner)
    langs, now = mine.get("languages"), theirs["languages"]
    if langs != now and None not in (langs or [None]) and None not in now:
        raise AlignmentLayerError(
            f"{where}: trained for {'->'.join(map(str, langs))}, but the model translates {'->'.join(map(str, now))}"
        )
    if mine.get("tokenizer_sha256") != theirs["tokenizer_sha256"]:
        raise AlignmentLayerError(
            f"{where}: trained for another tokenizer (its probe sentence encodes to other ids; "
            f"lowercasing or vocabulary differ)"
        )
    if model_key(mine.get("identity")) != model_key(theirs["identity"]):  # org/name and org/name@commit: one model
        a, b = mine.get("identity") or {}, theirs["identity"]
        fa, fb = (a.get("sha256") or a.get("revision") or "?"), (b.get("sha256") or b.get("revision") or "?")
        raise AlignmentLayerError(
            f"{where}: trained for model {str(fa)[:12]}, but this model is {str(fb)[:12]} (retrain it with align-train)"
        )


def load(folder: str, aligner: Any, where: str | None = None) -> AlignmentHead:
    """The alignment layer in ``folder``, checked against ``aligner``'s model, on the model's device."""
    import torch
    from safetensors.torch import load_file

    where = where or folder
    cfg = read_config(folder)
    check_model(cfg, aligner, where)
    try:
        s = cfg["shape"]
        shape = HeadShape(int(s["layer"]), int(s["dim"]), int(s["heads"]), str(s.get("shift", "awi")))
    except (KeyError, TypeError, ValueError) as e:
        raise AlignmentLayerError(f"{where}/{CONFIG}: bad shape ({e})") from None
    if not 0 <= shape.layer < aligner.n_layers:
        raise AlignmentLayerError(f"{where}: reads decoder layer {shape.layer}, but the model has {aligner.n_layers}")
    weights = os.path.join(folder, WEIGHTS)
    if not os.path.isfile(weights):
        raise AlignmentLayerError(f"{where}: {WEIGHTS} missing")
    if cfg.get("weights_sha256") and file_digest(weights) != cfg["weights_sha256"]:
        raise AlignmentLayerError(f"{where}: {WEIGHTS} is not the file {CONFIG} names (its sha256 differs)")
    head = AlignmentHead(shape)
    try:
        head.load_state_dict(load_file(weights))
    except (RuntimeError, OSError, ValueError) as e:
        raise AlignmentLayerError(f"{where}: {WEIGHTS} does not fit its shape ({str(e).splitlines()[0]})") from None
    device = next(aligner.model.parameters()).device
    head = head.to(device=device, dtype=torch.float32).eval().requires_grad_(False)
    head.weights_sha256 = file_digest(weights)  # what a run's signature names
    return head


def attach(aligner: Any, model_path: str, folder: str | None = None) -> AlignmentHead:
    """Load the alignment layer for ``aligner`` (from ``folder``, else beside ``model_path``) and attach it: the
    ``learned`` method then reads it. AlignmentLayerError when it is missing or belongs to another model."""
    folder = folder or default_folder(model_path)
    head = load(folder, aligner, folder)
    aligner.alignment_layer = head
    return head
