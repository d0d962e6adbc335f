"""Which extra to install when a command needs a package that is not there.

``pip install norm-align`` gives numpy and zstandard only: ``align-eval``, ``align-view``,
``align-symmetrize`` and ``align-merge`` work with that. ``align-extract`` runs a model, so it needs
torch and a framework; without them it ends with one line naming the extra
(``pip install 'norm-align[fairseq]'`` or ``'norm-align[hf]'``) and exit status 2, never a traceback.
``align-extract --help`` and ``--version`` work without them.
"""

from __future__ import annotations

EXTRA_OF = {
    # top-level module: the extra that installs it (None: the framework's own extra)
    "torch": None,
    "tqdm": None,
    "safetensors": None,
    "sentencepiece": None,
    "fairseq": "fairseq",
    "fairseq_cli": "fairseq",
    "omegaconf": "fairseq",
    "hydra": "fairseq",
    "sacrebleu": "fairseq",
    "transformers": "hf",
    "huggingface_hub": "hf",
    "tokenizers": "hf",
}
"""Modules an extra installs, by top-level name."""

__all__ = ["EXTRA_OF", "install_hint", "missing_module"]


def missing_module(err: BaseException) -> str | None:
    """The top-level name of the optional module whose import failed, or None when ``err`` is no such failure."""
    if not isinstance(err, ModuleNotFoundError) or not err.name:
        return None
    top = err.name.split(".")[0]
    return top if top in EXTRA_OF else None


def install_hint(module: str, framework: str | None) -> str:
    """One line: what is missing and the pip command that installs it.

    ``framework`` is ``fairseq``, ``hf`` or None (unknown: both extras are named)."""
    extra = EXTRA_OF.get(module) or framework
    if extra in ("fairseq", "hf"):
        return f"this needs {module}, which is not installed: pip install 'norm-align[{extra}]'"
    return (
        f"this needs {module}, which is not installed: pip install 'norm-align[fairseq]' (fairseq models) "
        "or 'norm-align[hf]' (Hugging Face models)"
    )
