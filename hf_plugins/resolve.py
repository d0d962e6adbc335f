"""Hugging Face models by folder or Hub id (``ORG/NAME[@REVISION]``), resolved the way transformers
resolves them, and loaded without running code from the model and without noise.

- A local folder of the given name wins (as in transformers).
- A Hub id is looked up in the standard cache (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
  ``~/.cache/huggingface/hub``; read when called, not when imported); when the cache holds the
  revision nothing goes to the network. Otherwise it is downloaded, unless ``HF_HUB_OFFLINE`` is set.
  Only safetensors weights, configs and tokenizer files are fetched.
- The commit hash of the revision used is recorded (``source["revision"]``), so a run's signature
  says which weights made its alignments.
Every failure is a :class:`ModelSourceError` with a one-line message saying what to do.
"""

from __future__ import annotations

import os
import re
import warnings

from align.extraction.adapters import HF_POST_LN, HF_PRE_LN, UnsupportedModelError
from align.spec.signature import files_digest

HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<rev>[^\s@]+))?$")
PATTERNS = ["*.json", "*.safetensors", "*.model", "*.spm", "*.txt", "*.tiktoken", "vocab*", "merges*"]
"""What a download fetches: configs, safetensors weights and tokenizer files (no pickled weights)."""


class ModelSourceError(ValueError):
    """A model that cannot be found or loaded; the message says what to do."""


_REV_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def check_revision(rev: str) -> str:
    """``rev`` if it is a branch, tag or commit name (git's rules: ``/``-separated parts, none empty,
    ``.``, ``..`` or hidden); ModelSourceError otherwise: a revision names a folder of the cache, and
    must never lead out of its repository's."""
    parts = rev.split("/")
    if len(rev) > 255 or not all(_REV_PART.match(p) and not p.endswith((".lock", ".")) for p in parts) or ".." in rev:
        raise ModelSourceError(
            f"revision {rev[:80]!r} is not a branch, tag or commit name; expected letters, digits, "
            "'.', '_', '-', '+' in '/'-separated parts (no '..', no part starting with '.' or '-')"
        )
    return rev


def _check_snapshot(folder: str, cache: str, repo: str, requested: str) -> str:
    """The snapshot folder, checked to be ``models--ORG--NAME/snapshots/COMMIT`` of this repository."""
    snapshots = os.path.realpath(os.path.join(cache, "models--" + repo.replace("/", "--"), "snapshots"))
    real = os.path.realpath(folder)
    if os.path.dirname(real) != snapshots or not _COMMIT.match(os.path.basename(real)):
        raise ModelSourceError(
            f"revision {requested!r} resolves to {folder}, outside {snapshots}; expected a "
            "commit folder of this repository's cache"
        )
    return folder


def hub_cache() -> str:
    """The Hub cache folder, from the environment as it is now."""
    env = os.environ
    if env.get("HF_HUB_CACHE"):
        return env["HF_HUB_CACHE"]
    home = env.get("HF_HOME") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return os.path.join(home, "hub")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _cached_revisions(cache: str, repo: str) -> str:
    """What the cache holds of ``repo``, for messages: ``main -> 1a2b3c4, snapshots 1a2b3c4``."""
    folder = os.path.join(cache, "models--" + repo.replace("/", "--"))
    refs = []
    for root, _, names in os.walk(os.path.join(folder, "refs")):
        for n in names:
            try:
                commit = open(os.path.join(root, n)).read().strip()
            except OSError:
                continue
            refs.append(f"{os.path.relpath(os.path.join(root, n), os.path.join(folder, 'refs'))} -> {commit[:12]}")
    snaps = (
        sorted(os.listdir(os.path.join(folder, "snapshots")))
        if os.path.isdir(os.path.join(folder, "snapshots"))
        else []
    )
    if not refs and not snaps:
        return "nothing"
    return ", ".join(refs + [f"snapshot {s[:12]}" for s in snaps])


def resolve_model(spec: str) -> tuple[str, dict]:
    """``(local folder, source)`` for a model folder or a Hub id ``ORG/NAME[@REVISION]``; ``source``
    is ``{"path", "sha256"}`` for a folder, ``{"hub_id", "revision", "requested"}`` for the Hub."""
    if os.path.isdir(spec):
        files = [
            os.path.join(spec, n)
            for n in os.listdir(spec)
            if os.path.isfile(os.path.join(spec, n)) and not n.startswith(".") and n.lower() != "readme.md"
        ]
        return spec, {"path": spec, "sha256": files_digest(files)}
    m = HUB_ID.match(spec)
    if not m or os.path.exists(spec):
        raise ModelSourceError("no such model folder or file, and not a Hub id ORG/NAME[@REVISION]")
    repo, requested = m["repo"], check_revision(m["rev"] or "main")
    if any(p in (".", "..") for p in repo.split("/")):
        raise ModelSourceError(f"{repo!r} is not a Hub id; expected ORG/NAME")
    from huggingface_hub import errors as hub_errors, snapshot_download

    cache = hub_cache()
    folder = None
    try:
        folder = snapshot_download(
            repo, revision=requested, cache_dir=cache, local_files_only=True, allow_patterns=PATTERNS
        )
    except (hub_errors.LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
        if _offline():
            raise ModelSourceError(
                f"revision {requested!r} is not in the Hub cache {cache} (it holds {_cached_revisions(cache, repo)}) "
                f"and HF_HUB_OFFLINE is set; download it first (hf download {repo} --revision {requested}) "
                "or unset HF_HUB_OFFLINE"
            ) from None
    if folder is None:
        try:
            folder = snapshot_download(repo, revision=requested, cache_dir=cache, allow_patterns=PATTERNS)
        except hub_errors.GatedRepoError:
            raise ModelSourceError(
                f"{repo} is gated: accept its conditions on huggingface.co and log in (hf auth login), then try again"
            ) from None
        except hub_errors.RepositoryNotFoundError:
            raise ModelSourceError(
                f"no repository {repo} on the Hub (or it is private: log in with hf auth login)"
            ) from None
        except hub_errors.RevisionNotFoundError:
            raise ModelSourceError(f"{repo} has no revision {requested!r}; give a branch, tag or commit hash") from None
        except Exception as e:  # no network, a proxy error, ...
            raise ModelSourceError(
                f"cannot download {repo}@{requested} ({type(e).__name__}: "
                f"{str(e).splitlines()[0] if str(e) else ''}); with no network, download it "
                "elsewhere into the cache and set HF_HUB_OFFLINE=1"
            ) from None
    _check_snapshot(folder, cache, repo, requested)
    return folder, {"hub_id": repo, "revision": os.path.basename(os.path.normpath(folder)), "requested": requested}


def load_quietly(folder: str, dtype):
    """(model, tokenizer) of a folder: safetensors only, eager attention, no remote code, no
    progress bars or advice; ModelSourceError / UnsupportedModelError otherwise."""
    import transformers
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    families = ", ".join(HF_POST_LN + HF_PRE_LN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sacremoses advice, deprecation notes of the tokenizers
        try:
            config = AutoConfig.from_pretrained(folder, trust_remote_code=False)
        except Exception as e:  # an unknown model_type, remote code refused, a broken config.json
            raise UnsupportedModelError(
                f"cannot read its config ({_line(e)}); this toolkit runs the families "
                f"{families}, never a model's own code"
            ) from None
        if getattr(config, "model_type", None) not in HF_POST_LN + HF_PRE_LN:
            raise UnsupportedModelError(
                f"model type {getattr(config, 'model_type', None)!r} is not supported; supported: {families}"
            )
        try:
            model = AutoModelForSeq2SeqLM.from_pretrained(
                folder,
                config=config,
                use_safetensors=True,
                attn_implementation="eager",
                dtype=dtype,
                trust_remote_code=False,
            )
        except Exception as e:  # no safetensors file, a corrupted one
            raise ModelSourceError(
                f"cannot load the weights ({_line(e)}); expected model.safetensors (pickled weights are refused)"
            ) from None
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
        except Exception as e:
            raise ModelSourceError(f"cannot load the tokenizer ({_line(e)})") from None
    return model, tokenizer


def _line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:200]}" if text else type(e).__name__
