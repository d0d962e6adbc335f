"""Load fairseq checkpoints without running code from them, and a safetensors shipping format.

A ``.pt`` checkpoint is a pickle: unpickling it may call any function the file names. Here it is read
with ``torch.load(weights_only=True)`` and an explicit allow-list of the few classes fairseq
checkpoints hold (an ``argparse.Namespace`` for the model's arguments; omegaconf containers in older
ones). Anything else is refused with :class:`UnsafeCheckpointError`; ``trust=True`` (on the command
line ``--trust-checkpoint``) loads a file the user trusts the old way.

The shipping format has no pickle at all: ``model.safetensors`` (the weights, dtypes as stored) and
``model_config.json`` (fairseq's config as plain JSON), written by :func:`save_safe`.

>>> model, cfg, task = load_model_and_task("data/models/enfr")          # doctest: +SKIP
>>> state = load_checkpoint("work/enfr/checkpoints/checkpoint_last.pt")  # doctest: +SKIP

``install_safe_loader()``, called when the plugin is imported (``--user-dir fairseq_plugins``), routes
fairseq's own loading (``fairseq-generate``, ``fairseq-interactive``, ``fairseq-train --restore-file``)
through :func:`load_checkpoint`, and lets ``--path`` name a safetensors model or a model folder.
"""

from __future__ import annotations

import argparse
import collections
import enum
import json
import numbers
import os
import pickle
import re
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import torch

from align.io.atomic import replace_atomic

WEIGHTS = "model.safetensors"
FORMAT = "norm-align/fairseq-safetensors"
TRUST_HINT = (
    "if you trust this file, load it with --trust-checkpoint (command line) or trust=True (Python), "
    "which runs any code it contains, or convert it once: "
    "python data/scripts/to_safetensors.py --trust-checkpoint CHECKPOINT OUT_DIR"
)
TRUST_CHECKPOINT_HELP = (
    "load --path checkpoints with full unpickling, which runs any code in the file: only for "
    "files you trust (default: only the classes fairseq checkpoints need)"
)

_NAMESPACE = "__namespace__"  # JSON marker of an argparse.Namespace (fairseq keeps the model's args as one)
_TIED = "norm_align_tied"  # safetensors metadata: {dropped key: kept key} for tensors stored once


class CheckpointError(ValueError):
    """A file that is not a readable fairseq checkpoint or safetensors model."""


class UnsafeCheckpointError(CheckpointError):
    """A checkpoint whose unpickling needs a class or function outside the allow-list."""

    def __init__(self, path: str, names: list[str], detail: str = "") -> None:
        self.path, self.names = path, names
        super().__init__(
            f"{path}: refused: unpickling it would load {', '.join(names)}, which is not among the "
            f"classes a fairseq checkpoint needs (it could run code from the file); {TRUST_HINT}"
            + (f"\n(torch: {detail})" if detail else "")
        )


def allowed_globals() -> list[Callable]:
    """The classes and types that :func:`load_checkpoint` lets a checkpoint's pickle name."""
    # Found by trying: shipped models and fairseq-train checkpoints need only Namespace (cfg["model"]);
    # checkpoints whose cfg was pickled as an omegaconf DictConfig need the rest.
    names: list[Callable] = [
        argparse.Namespace,
        collections.OrderedDict,
        collections.defaultdict,
        typing.Any,
        int,
        float,
        str,
        bool,
        dict,
        list,
        tuple,
        set,
    ]
    try:
        from omegaconf import DictConfig, ListConfig
        from omegaconf.base import ContainerMetadata, Metadata
        from omegaconf.nodes import AnyNode, BooleanNode, FloatNode, IntegerNode, StringNode
    except ImportError:  # no omegaconf (no fairseq): such checkpoints are refused with the class named
        return names
    # Value nodes only: EnumNode would need the enum's own class, which is refused and named.
    return names + [
        DictConfig,
        ListConfig,
        ContainerMetadata,
        Metadata,
        AnyNode,
        StringNode,
        IntegerNode,
        FloatNode,
        BooleanNode,
    ]


@contextmanager
def _allowing(extra: list[Callable]) -> Iterator[None]:
    """torch's safe-globals list extended by ``extra`` for the duration, leaving entries the caller had."""
    had = set(torch.serialization.get_safe_globals())
    added: list[Callable[..., Any] | tuple[Callable[..., Any], str]] = [g for g in extra if g not in had]
    with torch.serialization.safe_globals(added):
        yield


def _refused_names(path: str, message: str) -> list[str]:
    """The globals torch's weights-only unpickler refused, from its message or from the pickle itself."""
    names = re.findall(r"GLOBAL ([\w.]+)", message)
    if names:
        return sorted(set(names))
    try:  # reads the pickle's opcodes only: nothing is called
        allowed = {f"{g.__module__}.{g.__qualname__}" for g in allowed_globals()}
        return [n for n in torch.serialization.get_unsafe_globals_in_checkpoint(path) if n not in allowed]
    except Exception:  # a legacy (non-zip) file: the message is all there is
        return []


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _refusal_detail(message: str) -> str:
    """The line of torch's weights-only message that says what was refused."""
    text = message.split("WeightsUnpickler error:", 1)[1] if "WeightsUnpickler error:" in message else message
    lines = [line.strip() for line in text.splitlines() if "GLOBAL" in line or "Unsupported" in line]
    # torch goes on to suggest allow-listing the global: not advice to pass on for an unknown file
    return lines[0].split(" Please use", 1)[0] if lines else ""


def load_checkpoint(path: str | os.PathLike, trust: bool = False) -> dict:
    """Read a ``.pt`` checkpoint to CPU without running code from it (``trust=True``: full unpickling)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such checkpoint file")
    with open(path, "rb") as f:
        head = f.read(4)
    # torch.save writes a zip archive (PK..); older checkpoints are a pickle (protocol 2+: 0x80). Anything
    # else is no checkpoint at all: say so, and do not offer to unpickle it.
    if not (head.startswith(b"PK") or head[:1] == b"\x80"):
        raise CheckpointError(
            f"{path}: not a torch checkpoint (it starts with {head!r}; expected a zip archive or a pickle, as "
            "torch.save writes them): give a fairseq model.pt, a model folder or a Hugging Face folder"
        )
    try:
        if trust:
            state = torch.load(path, map_location="cpu", weights_only=False)
        else:
            with _allowing(allowed_globals()):
                state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        msg = str(e)
        if not trust and "Weights only load failed" in msg:
            names = _refused_names(path, msg)
            if names:
                raise UnsafeCheckpointError(path, names, _refusal_detail(msg)) from None
            # no class to name: a damaged file, or a pickle built from opcodes the safe loader lacks
            raise CheckpointError(
                f"{path}: not a readable torch checkpoint for the safe loader "
                f"({_refusal_detail(msg) or 'weights-only unpickling failed'}); if it is a "
                "checkpoint you trust, --trust-checkpoint / trust=True unpickles it fully"
            ) from None
        raise CheckpointError(f"{path}: not a readable torch checkpoint ({_first_line(msg) or repr(e)})") from e
    except Exception as e:  # torch raises RuntimeError, EOFError, even KeyError on a damaged file
        raise CheckpointError(
            f"{path}: not a readable torch checkpoint ({type(e).__name__}: {_first_line(str(e))})"
        ) from e
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: holds a {type(state).__name__}, expected a checkpoint dict")
    return state


# ---- JSON form of fairseq configs ----


def to_json_config(obj: Any, where: str = "cfg") -> Any:
    """A fairseq config (dicts, omegaconf containers, Namespaces) as JSON-able values; Namespaces marked."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, enum.Enum):
        return obj.name
    if isinstance(obj, numbers.Integral):  # numpy scalars in optimizer and scheduler states
        return int(obj)
    if isinstance(obj, numbers.Real):
        return float(obj)
    if isinstance(obj, argparse.Namespace):
        return {_NAMESPACE: to_json_config(vars(obj), where)}
    try:
        from omegaconf import OmegaConf

        if OmegaConf.is_config(obj):
            obj = OmegaConf.to_container(obj, resolve=True, enum_to_str=True)
    except ImportError:
        pass
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise CheckpointError(f"{where}: key {k!r} is a {type(k).__name__}, expected a string")
            out[k] = to_json_config(v, f"{where}.{k}")
        return out
    if isinstance(obj, (list, tuple)):
        return [to_json_config(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    raise CheckpointError(f"{where}: a {type(obj).__name__} has no JSON form; expected config values")


def from_json_config(obj: Any) -> Any:
    """Inverse of :func:`to_json_config`: marked dicts become ``argparse.Namespace`` again."""
    if isinstance(obj, dict):
        if set(obj) == {_NAMESPACE}:
            return argparse.Namespace(**from_json_config(obj[_NAMESPACE]))
        return {k: from_json_config(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [from_json_config(v) for v in obj]
    return obj


# ---- safetensors ----


def _safetensors():
    try:
        import safetensors.torch
    except ImportError:
        raise ImportError(
            "the safetensors format needs the safetensors package: pip install 'norm-align[fairseq]'"
        ) from None
    return safetensors.torch


def _config_path(weights: str) -> str:
    return weights[: -len(".safetensors")] + "_config.json"


def _weights_path(model: str) -> str:
    """``model.safetensors`` inside a folder, or the given ``.safetensors`` file."""
    return os.path.join(model, WEIGHTS) if os.path.isdir(model) else model


def is_safe_format(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a ``.safetensors`` file or a folder holding ``model.safetensors``."""
    path = os.fspath(path)
    return path.endswith(".safetensors") or os.path.isfile(os.path.join(path, WEIGHTS))


def _dedupe(state: Mapping[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Tensors to write and {dropped: kept} for equal ones (tied embeddings: safetensors refuses shared storage)."""
    keep: dict[str, torch.Tensor] = {}
    tied: dict[str, str] = {}
    seen: dict[tuple, list[str]] = collections.defaultdict(list)
    for k, v in state.items():
        if not isinstance(v, torch.Tensor):
            raise CheckpointError(f"model.{k}: a {type(v).__name__}, expected a tensor")
        group = seen[(v.dtype, tuple(v.shape), v.device)]
        same = next((o for o in group if torch.equal(keep[o], v)), None)
        if same is not None:
            tied[k] = same
        else:
            group.append(k)
            keep[k] = v.detach().contiguous()
    return keep, tied


COMPANIONS = ("spm.model",)
"""Files beside a checkpoint that its model needs (with ``dict.*.txt``): copied by :func:`save_safe`."""


def save_safe(
    checkpoint: Mapping | str | os.PathLike,
    out_dir: str | os.PathLike,
    trust: bool = False,
    preprocessing: Mapping | None = None,
) -> str:
    """Write ``model.safetensors`` + ``model_config.json`` from a checkpoint dict or ``.pt``; returns the
    weights. From a ``.pt``, the dictionaries and ``spm.model`` beside it are copied too (so the folder
    loads on its own) and its folder's recorded ``preprocessing`` is kept unless one is given."""
    state: Mapping[Any, Any]
    if isinstance(checkpoint, (str, os.PathLike)):
        name: str = os.fspath(checkpoint)
        state, src_folder = load_checkpoint(name, trust=trust), os.path.dirname(os.path.abspath(name))
    else:
        state, name, src_folder = checkpoint, "checkpoint", ""
    if preprocessing is None and src_folder and os.path.isfile(os.path.join(src_folder, "model_config.json")):
        preprocessing = read_preprocessing(name)
    if "model" not in state:
        raise CheckpointError(f"{name}: no 'model' state dict")
    if state.get("cfg") is None and state.get("args") is None:
        raise CheckpointError(f"{name}: neither 'cfg' nor 'args': fairseq could not build its model")
    hist = (state.get("optimizer_history") or [{}])[-1]
    config = {
        "format": FORMAT,
        "version": 1,
        "cfg": to_json_config(state.get("cfg")),
        "args": to_json_config(state.get("args"), "args"),
        # what fairseq reads besides cfg: the update count (set_num_updates) and, for resuming, the schedule
        "optimizer_history": [to_json_config({k: v for k, v in hist.items() if k != "optimizer"}, "optimizer_history")],
        "extra_state": {
            "train_iterator": to_json_config(
                (state.get("extra_state") or {}).get("train_iterator"), "extra_state.train_iterator"
            )
        },
    }
    opt = state.get("last_optimizer_state")
    if isinstance(opt, Mapping) and "param_groups" in opt:
        # hyper-parameters only, as export_model.py keeps: `--restore-file` resumes the update count and
        # LR schedule with the optimizer's moments afresh
        config["last_optimizer_state"] = {
            "state": {},
            "param_groups": to_json_config(opt["param_groups"], "param_groups"),
        }
    if preprocessing:
        config["preprocessing"] = dict(preprocessing)
    tensors, tied = _dedupe(state["model"])
    os.makedirs(out_dir, exist_ok=True)
    if src_folder and os.path.abspath(src_folder) != os.path.abspath(out_dir):
        import shutil

        for f in sorted(os.listdir(src_folder)):
            if f in COMPANIONS or (f.startswith("dict.") and f.endswith(".txt")):
                shutil.copy(os.path.join(src_folder, f), os.path.join(out_dir, f))
    weights = os.path.join(os.fspath(out_dir), WEIGHTS)
    metadata = {"format": "pt", _TIED: json.dumps(tied)}
    _write_atomic(weights, lambda tmp: _safetensors().save_file(tensors, tmp, metadata=metadata))
    _write_atomic(_config_path(weights), lambda tmp: _write_json(tmp, config))
    return weights


def _write_json(path: str, obj: Any) -> None:
    _write_text(path, json.dumps(obj, indent=1, sort_keys=True) + "\n")


def _write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _write_atomic(path: str, write: Callable[[str], Any]) -> None:
    """``write(tmp)`` then rename: a reader never sees half a file."""
    tmp = f"{path}.tmp{os.getpid()}.{os.urandom(4).hex()}"  # processes filling one cache entry never share it
    try:
        write(tmp)
        replace_atomic(tmp, path)  # safetensors writes 0o600
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_safe(model: str | os.PathLike, tie: bool = False) -> dict:
    """A checkpoint-like dict (``cfg``, ``args``, ``model``, ...) from a safetensors folder or ``.safetensors`` file;
    tied weights (the shared embeddings) are separate tensors, or with ``tie`` one tensor under every key (to save
    them once)."""
    weights = _weights_path(os.fspath(model))
    config_path = _config_path(weights)
    for p in (weights, config_path):
        if not os.path.isfile(p):
            raise FileNotFoundError(f"{p}: missing (a safetensors model is {WEIGHTS} + model_config.json)")
    with open(config_path, encoding="utf-8") as f:
        try:
            config = json.load(f)
        except json.JSONDecodeError as e:
            raise CheckpointError(f"{config_path}:{e.lineno}: {e.msg}; expected JSON") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise CheckpointError(
            f"{config_path}: format {config.get('format') if isinstance(config, dict) else None!r}, expected {FORMAT!r}"
        )
    st = _safetensors()
    try:
        state_dict = st.load_file(weights, device="cpu")
        from safetensors import safe_open

        with safe_open(weights, framework="pt") as f:
            tied = json.loads((f.metadata() or {}).get(_TIED, "{}"))
    except Exception as e:  # safetensors raises its own SafetensorError for a bad header
        raise CheckpointError(f"{weights}: not a readable safetensors file ({e})") from e
    for dropped, kept in tied.items():
        # separate tensors, as in the checkpoint it came from; tied, torch.save writes the matrix once
        state_dict[dropped] = state_dict[kept] if tie else state_dict[kept].clone()
    hist = (config.get("optimizer_history") or [{}])[-1]
    # fairseq's _upgrade_state_dict expects these keys on the last optimizer_history entry
    hist = {"criterion_name": None, "optimizer_name": None, "lr_scheduler_state": {}, "num_updates": 0, **hist}
    return {
        "cfg": from_json_config(config.get("cfg")),
        "args": from_json_config(config.get("args")),
        "model": state_dict,
        "optimizer_history": [hist],
        "extra_state": {k: v for k, v in (config.get("extra_state") or {}).items() if v is not None},
        **({"last_optimizer_state": config["last_optimizer_state"]} if config.get("last_optimizer_state") else {}),
    }


# ---- fairseq glue ----

_trust = False  # set by set_trust_checkpoint (the task's --trust-checkpoint), read by fairseq's wrapped loader


def set_trust_checkpoint(trust: bool) -> None:
    """Whether fairseq's loading (once :func:`install_safe_loader` ran) unpickles ``.pt`` files fully."""
    global _trust
    _trust = bool(trust)


def read_state(path: str | os.PathLike, trust: bool = False) -> dict:
    """The raw checkpoint dict of a ``.pt`` file (:func:`load_checkpoint`), a safetensors model
    (:func:`load_safe`) or a model folder (:func:`resolve_model_path`)."""
    path = resolve_model_path(path)
    return load_safe(path) if is_safe_format(path) else load_checkpoint(path, trust=trust)


def prepare_for_fairseq(state: dict, arg_overrides: Mapping[str, Any] | None = None) -> dict:
    """What fairseq 0.12's ``load_checkpoint_to_cpu`` does after reading: overrides, omegaconf cfg, upgrades."""
    from fairseq.checkpoint_utils import _upgrade_state_dict
    from fairseq.dataclass.utils import overwrite_args_by_name
    from omegaconf import OmegaConf

    if state.get("args") is not None and arg_overrides:
        for k, v in arg_overrides.items():
            setattr(state["args"], k, v)
    if state.get("cfg") is not None:
        # allow_objects: the model's args stay an argparse.Namespace inside the config, as fairseq expects
        state["cfg"] = OmegaConf.create(state["cfg"], flags={"allow_objects": True})
        if arg_overrides:
            overwrite_args_by_name(state["cfg"], dict(arg_overrides))
    return _upgrade_state_dict(state)


_loaded: list[str] = []  # the paths fairseq's loading read, in order (the plugin's run signature names the model)


def last_loaded() -> str | None:
    """The last checkpoint path fairseq read through the safe loader, or None."""
    return _loaded[-1] if _loaded else None


def _safe_load_checkpoint_to_cpu(path: str, arg_overrides: dict | None = None, load_on_all_ranks: bool = False) -> dict:
    """Drop-in for ``fairseq.checkpoint_utils.load_checkpoint_to_cpu`` that reads safely (local files: no
    iopath download, so ``load_on_all_ranks`` has nothing to do)."""
    state = prepare_for_fairseq(read_state(path, trust=_trust), arg_overrides)
    _loaded.append(os.fspath(path))
    return state


def install_safe_loader() -> None:
    """Route fairseq's checkpoint reading through :func:`read_state` (idempotent)."""
    # fairseq reads with a bare torch.load, whose weights_only default a process environment variable can
    # flip; only the read changes here, and fairseq's own helpers do the rest (prepare_for_fairseq).
    # Every caller (generate, interactive, trainer, load_model_ensemble_and_task) looks the name up on the
    # module, so replacing the attribute covers them.
    from fairseq import checkpoint_utils

    if getattr(checkpoint_utils.load_checkpoint_to_cpu, "_norm_align_safe", False):
        return
    _safe_load_checkpoint_to_cpu._norm_align_safe = True  # type: ignore[attr-defined]
    checkpoint_utils.load_checkpoint_to_cpu = _safe_load_checkpoint_to_cpu


def cache_dir() -> str:
    """Where derived files go (never committed): ``NORM_ALIGN_CACHE``, else ``XDG_CACHE_HOME/norm-align``,
    else ``~/.cache/norm-align``."""
    env = os.environ
    return env.get("NORM_ALIGN_CACHE") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "norm-align"
    )


def fairseq_checkpoint(model: str | os.PathLike) -> str:
    """A ``.pt`` file fairseq itself can read, for a model shipped once as safetensors: a ``.pt`` as
    given (or the ``model.pt`` of a folder without safetensors); otherwise one written on first use from ``model.safetensors``
    + ``model_config.json`` into :func:`cache_dir`, named by the sha256 of both and verified by the
    sha256 of the ``.pt`` it wrote (rewritten when it does not match). For ``fairseq-train
    --restore-file`` and tools without the plugin; the plugin and align-extract take the folder."""
    from align.spec.signature import file_digest, files_digest

    path = resolve_model_path(model)
    if not is_safe_format(path):
        return path
    source = files_digest([path, _config_path(path)])
    # the layout version joins the name: a .pt written another way (v1 held the tied embeddings thrice) is not reused
    folder = os.path.join(cache_dir(), "fairseq", f"v2-{source[:32]}")
    pt, check = os.path.join(folder, "model.pt"), os.path.join(folder, "model.pt.sha256")
    if os.path.isfile(pt) and os.path.isfile(check):
        with open(check) as f:
            if f.read().strip() == file_digest(pt):
                return pt
    os.makedirs(folder, exist_ok=True)
    state = load_safe(path, tie=True)
    _write_atomic(pt, lambda tmp: torch.save(state, tmp))
    _write_atomic(check, lambda tmp: _write_text(tmp, file_digest(pt) + "\n"))
    return pt


def resolve_model_path(path: str | os.PathLike) -> str:
    """A folder's ``model.safetensors`` (preferred: no pickle) or ``model.pt``; a file as given."""
    path = os.fspath(path)
    if os.path.isdir(path):
        for name in (WEIGHTS, "model.pt"):
            if os.path.isfile(os.path.join(path, name)):
                return os.path.join(path, name)
        raise FileNotFoundError(f"{path}: holds neither {WEIGHTS} nor model.pt")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such model file or folder")
    return path


def read_preprocessing(path: str | os.PathLike) -> dict:
    """The text preprocessing a model was trained with, from the ``preprocessing`` entry of its
    ``model_config.json`` (the safetensors config, or the one beside a ``.pt``): e.g.
    ``{"lowercase": true}``; ``{}`` when the model records none."""
    weights = resolve_model_path(path)
    config = (
        _config_path(weights)
        if weights.endswith(".safetensors")
        else os.path.join(os.path.dirname(weights), "model_config.json")
    )
    if not os.path.isfile(config):
        return {}
    try:
        with open(config, encoding="utf-8") as f:
            pre = json.load(f).get("preprocessing") or {}
    except (OSError, ValueError, AttributeError) as e:
        raise CheckpointError(f"{config}: not a readable model config ({e})") from None
    if not isinstance(pre, dict):
        raise CheckpointError(f"{config}: 'preprocessing' is a {type(pre).__name__}; expected an object")
    return pre


def training_vocab(folder: str | os.PathLike, names: tuple[str, ...]) -> dict[str, str]:
    """The absolute path of each of ``names`` (``spm.model``, ``dict.L.txt``) in a training run's ``folder`` or in its
    ``bin/`` (data/scripts/make_models.sh keeps the dictionaries there, spm.model above them). A name in neither
    raises :class:`CheckpointError` naming it."""
    base = os.fspath(folder)
    out = {}
    for name in names:
        hit = next((os.path.join(d, name) for d in (base, os.path.join(base, "bin")) if os.path.isfile(os.path.join(d, name))), None)  # fmt: skip
        if hit is None:
            raise CheckpointError(f"{base}: no {name} in it or in its bin/")
        out[name] = os.path.abspath(hit)
    return out


def model_files(path: str | os.PathLike) -> list[str]:
    """The files a fairseq model's output depends on: its weights, their config, and the dictionaries
    and SentencePiece model beside them."""
    weights = resolve_model_path(path)
    folder = os.path.dirname(os.path.abspath(weights))
    out = [weights]
    for name in sorted(os.listdir(folder)):
        if name == "model_config.json" or name == "spm.model" or (name.startswith("dict.") and name.endswith(".txt")):
            out.append(os.path.join(folder, name))
    return out


def load_model_and_task(
    path_or_dir: str | os.PathLike,
    data_dir: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    trust: bool = False,
) -> tuple[torch.nn.Module, Any, Any]:
    """(model in eval mode, cfg, task) from a ``.pt``, ``.safetensors`` or model folder; dictionaries from
    ``data_dir`` (default: the model's folder)."""
    from fairseq import checkpoint_utils

    weights = resolve_model_path(path_or_dir)
    over = {"data": data_dir or os.path.dirname(os.path.abspath(weights)), **(overrides or {})}
    state = prepare_for_fairseq(read_state(weights, trust=trust), over)
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task([weights], arg_overrides=over, state=state)
    return models[0].eval(), cfg, task
