"""Loading a model as an :class:`~align.extraction.aligner.Aligner`, and a reverse model checked against it.

The framework loaders are named here and imported only when used: ``align`` never imports fairseq or
transformers. Errors are one line: :class:`RunError` for a model or file that cannot be used (exit 1),
:class:`UsageError` for flags that do not fit the model (exit 2); a command prints them as they are.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from ..io.errors import UsageError as UsageError  # the commands import it from here too
from ..spec.alignspec import AlignSpec
from ..spec.languages import compare as compare_languages
from ..spec.signature import model_key

LOADERS = {
    "fairseq": "fairseq_plugins.hub:NormAligner.from_checkpoint",
    "hf": "hf_plugins.hub:HFAligner.from_pretrained",
}
"""Framework name -> ``module:callable`` that loads a model path as an Aligner."""


class RunError(ValueError):
    """A model, file or setting that cannot be used: a command's exit 1, its message one line."""


def one_line(e: BaseException) -> str:
    """An error as one line: a message of several lines is joined with '; ' (one line is promised)."""
    text = "; ".join(x.strip() for x in str(e).splitlines() if x.strip())
    return text if text else type(e).__name__


def framework_of(path: str) -> str:
    """``hf`` for a folder with config.json or a Hub id (``ORG/NAME``: not a local path), else ``fairseq``."""
    if os.path.isdir(path):
        return "hf" if os.path.isfile(os.path.join(path, "config.json")) else "fairseq"
    return "fairseq" if os.path.exists(path) or path.endswith((".pt", ".safetensors")) else "hf"


def load_aligner(path: str, framework: str | None = None, **kwargs: Any) -> Any:
    """Load a model as an :class:`align.extraction.aligner.Aligner` with the framework's loader (``kwargs``
    that are None are left out: the loader's defaults)."""
    framework = framework or framework_of(path)
    if framework not in LOADERS:
        raise ValueError(f"unknown framework {framework!r}; valid: {', '.join(LOADERS)}")
    module, _, attr = LOADERS[framework].partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj(path, **{k: v for k, v in kwargs.items() if v is not None})


def check_reverse(aligner: Any, reverse: Any, path: str) -> bool:
    """RunError unless ``reverse`` translates the other way round from ``aligner``: the languages both declare
    turned round (compared by :func:`align.spec.languages.compare`), and not the model itself with nothing to
    swap. Returns False when the directions could not be checked (a side declares no single language)."""
    (fs, ft), (rs, rt) = aligner.languages(), reverse.languages()
    turned = [compare_languages(rs, ft), compare_languages(rt, fs)]
    if False in turned:
        raise RunError(
            f"--reverse-model {path} translates {rs}->{rt}; expected {ft}->{fs}, the --model's "
            f"direction ({fs}->{ft}) turned round"
        )
    itself = model_key(reverse.identity()) == model_key(aligner.identity())
    # the same model: only a multilingual one with its codes swapped reads the other way (codes compared as
    # written: zho_Hans and zho_Hant are one language but two directions of NLLB)
    codes = [(x or "").lower() for x in (fs, ft, rs, rt)]
    if itself and (None in (fs, ft) or codes[:2] == codes[2:]):
        raise RunError(
            f"--reverse-model {path} is the --model itself with no languages to swap: it would "
            "align the same direction twice; give the model of the other direction, or a multilingual model's "
            "--src-lang and --tgt-lang (the reverse run swaps them)"
        )
    return None not in turned


def check_pair(aligner: Any, langs: tuple[str, str], what: str, model: str) -> bool:
    """RunError unless the model translates ``langs`` (source, target), where it declares its languages: ``what``
    names the text (``test set hansards (en-fr)``). Returns False when that could not be checked (the model
    declares no single language on a side, or a code this release cannot compare)."""
    src, tgt = aligner.languages()
    fits = [compare_languages(src, langs[0]), compare_languages(tgt, langs[1])]
    if False in fits:
        turned = compare_languages(src, langs[1]) is True and compare_languages(tgt, langs[0]) is True
        raise RunError(
            f"{model} translates {src}->{tgt}, but {what} is {langs[0]}->{langs[1]}"
            + (f"; give -l {langs[1]}-{langs[0]} to read the set the other way round" if turned else "")
        )
    return None not in fits


def check_language_flags(aligner: Any, src_lang: str | None, tgt_lang: str | None, model: str) -> None:
    """RunError when ``--src-lang``/``--tgt-lang`` contradict the languages the model declares itself (fairseq's
    task, FSMT's config, a Marian tokenizer, an opus-mt name): the flags choose a multilingual model's languages,
    they do not turn a fixed pair into another."""
    if src_lang is None and tgt_lang is None:
        return
    own = getattr(aligner, "declared_languages", aligner.languages)()
    for flag, given, mine in (("--src-lang", src_lang, own[0]), ("--tgt-lang", tgt_lang, own[1])):
        if given is not None and compare_languages(mine, given) is False:
            raise RunError(
                f"{model} translates {own[0]}->{own[1]}, but {flag} is {given} (the flags choose the languages of "
                "a multilingual model; this one has its own)"
            )


def check_same_preprocessing(aligner: Any, reverse: Any, path: str, forward_path: str) -> None:
    """RunError unless the two directions' models read the same words: both lowercased or both cased."""
    if reverse.lowercase != aligner.lowercase:
        raise RunError(
            f"--reverse-model {path} was trained on "
            + ("lowercased" if reverse.lowercase else "cased")
            + f" text and --model {forward_path} on "
            + ("lowercased" if aligner.lowercase else "cased")
            + " text; the two directions would read different words (give both the same preprocessing, "
            "e.g. --lowercase)"
        )


def load_reverse(
    path: str,
    aligner: Any,
    spec: AlignSpec,
    forward_kwargs: Mapping[str, Any],
    opts: Mapping[str, float],
    *,
    lowercase: bool = False,
    forward_path: str = "",
    alignment_layer: str | None = None,
    loaded: Any = None,
) -> tuple[Any, AlignSpec]:
    """``(reverse aligner, its spec)`` for ``--reverse-model`` (``loaded``: already loaded), checked against the
    forward model: the same
    settings exist in it, and the languages it declares are the forward model's turned round. RunError when it
    cannot be used, UsageError when the flags do not fit it; a missing framework's ModuleNotFoundError passes."""
    from .extras import missing_module

    rfw = framework_of(path)
    rkwargs = {k: v for k, v in forward_kwargs.items() if k not in ("src_lang", "tgt_lang", "trust")}
    if rfw == "hf":  # the same multilingual model the other way round: its languages swapped
        rkwargs.update(src_lang=forward_kwargs.get("tgt_lang"), tgt_lang=forward_kwargs.get("src_lang"))
    else:
        rkwargs.update(trust=forward_kwargs.get("trust"))
    try:
        reverse = loaded if loaded is not None else load_aligner(path, rfw, **rkwargs)
    except Exception as e:  # the framework's own errors: one line
        if missing_module(e):
            raise
        msg = one_line(e)
        raise RunError(f"--reverse-model {msg if msg.startswith(path) else f'{path}: {msg}'}") from None
    if lowercase:
        reverse.lowercase = True
    check_language_flags(reverse, forward_kwargs.get("tgt_lang"), forward_kwargs.get("src_lang"), path)
    check_reverse(aligner, reverse, path)
    check_same_preprocessing(aligner, reverse, path, forward_path)
    if "learned" in spec.score_methods or alignment_layer:
        attach_layer(reverse, path, alignment_layer, f"--reverse-model {path}: ")
    heads = list(spec.heads) if spec.heads else None
    try:
        rspec = reverse.spec(
            spec.methods,
            spec.layers,
            spec.shifts,
            spec.level,
            spec.decoder,
            heads,
            spec.specials_policy,
            blends=spec.blends,
            **opts,
        )
    except ValueError as e:  # a layer or head the reverse model does not have
        raise UsageError(f"--reverse-model {path}: {e}") from None
    per_head = spec.heads is None
    mine = [n for n, *_ in aligner.settings(spec, per_head)]
    theirs = [n for n, *_ in reverse.settings(rspec, per_head)]
    if mine != theirs:
        extra = sorted(set(mine) ^ set(theirs))
        raise UsageError(
            f"--reverse-model {path}: has {reverse.n_heads} heads per layer and --model {aligner.n_heads}, so "
            f"their per-head files differ ({', '.join(extra[:3])}); give --heads"
        )
    return reverse, rspec


def attach_layer(aligner: Any, model_path: str, folder: str | None, flag: str) -> None:
    """Attach the alignment layer of ``model_path`` (``folder``, else beside the model); RunError in one line when
    it is missing or was trained for another model (``flag``: ``--reverse-model PATH`` in messages, or "")."""
    from .alignment_layer import AlignmentLayerError, attach

    try:
        attach(aligner, model_path, folder)
    except AlignmentLayerError as e:
        raise RunError(f"{flag}alignment layer {e}" if flag else f"alignment layer {e}") from None
