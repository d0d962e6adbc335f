"""An extraction run as one immutable plan, built and checked once before anything is written.

``align-extract`` is flags -> :class:`Flags` -> :func:`check_flags` (everything that needs no model: usage
errors, then the ``--calibration`` file's schema, before a model loads) -> :func:`load_models` and
:func:`load_calibration` (the models,
their spec, the reverse model, the calibration, each checked against the others) ->
:func:`align.extraction.run.extract` (the engine, streamed into :class:`align.extraction.writer.OutputFolder`).
Nothing is written onto the flags: what a step derives is a field of the next step's value. Errors are
:class:`~align.extraction.loading.UsageError` (exit 2) and :class:`~align.extraction.loading.RunError`
(exit 1), one line each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..spec.alignspec import AlignSpec
from ..spec.setting import Blend, combined_file, reverse_file
from .launch import LaunchError, shard_from_env
from .loading import (
    RunError,
    UsageError,
    attach_layer,
    check_language_flags,
    framework_of,
    load_aligner,
    load_reverse,
    one_line,
)

DEFAULT_COMBINATIONS = "grow-diag-final-and,gmean:threshold"
"""--combine's default: the atools default and the soft combination the held-out protocol chose
(benchmarks/bidirectional.py)."""


@dataclass(frozen=True)
class Flags:
    """align-extract's flags as given (``align-extract --help`` says what each means)."""

    model: str
    input: str | None = None
    test_set: str | None = None
    langs: str | None = None
    testsets_dir: str | None = None
    out: str | None = None
    overwrite: bool = False
    methods: str = "norm"
    layers: str | None = None
    shifts: str = "awi"
    heads: str | None = None
    level: str = "word"
    decoder: str = "argmax"
    threshold: float | None = None
    specials: str = "drop"
    translate: bool = False
    beam: int = 5
    lowercase: bool = False
    truncate: bool = False
    save_scores: bool = False
    scores_precision: str = "8bit"
    calibration: str | None = None
    reverse_model: str | None = None
    blend: str | None = None
    combine: str | None = None
    combine_threshold: float | None = None
    prob_threshold: float | None = None
    sentence_scores: bool = False
    sentence_features: bool = False
    alignment_layer: str | None = None
    reverse_alignment_layer: str | None = None
    batch_size: int = 32
    device: str = "cpu"
    dtype: str = "float32"
    src_lang: str | None = None
    tgt_lang: str | None = None
    framework: str | None = None
    trust_checkpoint: bool = False
    shard: str | None = None
    no_merge: bool = False
    format: str = "text"
    progress: str = "auto"

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Flags:
        """The flags of a parsed namespace's ``vars()`` (unknown keys are an error: a flag without a field)."""
        names = {f.name for f in fields(cls)}
        extra = sorted(set(values) - names)
        if extra:
            raise TypeError(f"Flags has no field for {', '.join(extra)}")
        return cls(**dict(values))

    @classmethod
    def for_models_of(cls, opts: Any, **given: Any) -> Flags:
        """Flags that run the models as ``opts`` asks (another command's options: its :data:`MODEL_FLAGS` it has)
        on what ``given`` says (the input, the settings, the output)."""
        return cls(**{k: getattr(opts, k) for k in MODEL_FLAGS if hasattr(opts, k)}, **given)


MODEL_FLAGS = ("model", "reverse_model", "batch_size", "device", "dtype", "truncate", "lowercase", "src_lang",
               "tgt_lang", "framework", "trust_checkpoint", "progress")  # fmt: skip
"""The flags that say which models run and how they read the text, shared by the commands that run them."""


@dataclass(frozen=True)
class Checked:
    """What the flags give before any model loads: the shard, the device, the settings asked for, the checked
    combinations and their threshold, the blends, and the output folder (a shard's own)."""

    shard: int
    shards: int
    auto: bool
    device: str
    methods: tuple[str, ...]
    shifts: tuple[str, ...]
    layers: tuple[int, ...] | None
    heads: tuple[int, ...] | None
    combos: tuple[str, ...]
    combine_threshold: float
    blends: tuple[str, ...]
    dest: str | None


@dataclass(frozen=True)
class Calibrated:
    """The setting a calibration file holds for: its file name, the calibration, the reverse model and spec
    it reads (bidirectional), and the spec of that one setting."""

    name: str
    calibration: Any
    reverse: Any
    reverse_spec: AlignSpec | None
    spec: AlignSpec
    sha256: str = ""
    """The file's digest, taken when the plan is built (the run's signature records it)."""


@dataclass(frozen=True)
class ExtractPlan:
    """Everything a run needs, checked: flags, what they give, the input (a file; ``-t`` writes the set's text
    to one), the models and specs of both directions, and the calibration."""

    flags: Flags
    checked: Checked
    input: str
    input_name: str | None
    test_set_signature: str | None
    framework: str
    aligner: Any
    spec: AlignSpec
    reverse: tuple[Any, AlignSpec] | None
    calibrated: Calibrated | None

    @property
    def combos(self) -> tuple[str, ...]:
        """The combinations of the two directions (none without a reverse model)."""
        return self.checked.combos


def csv(s: str | None) -> list[str]:
    """A comma-separated flag's values, blanks dropped."""
    return [x.strip() for x in s.split(",") if x.strip()] if s else []


def parse_shard(s: str | None) -> tuple[int, int]:
    """``K/N`` (K 0-based) -> (K, N)."""
    if s is None:
        return 0, 1
    try:
        k, n = (int(x) for x in s.split("/"))
    except ValueError:
        raise ValueError(f"--shard {s!r}: expected K/N such as 0/4, or auto") from None
    if not (n >= 1 and 0 <= k < n):
        raise ValueError(f"--shard {s!r}: K must be in 0..N-1")
    return k, n


def check_flags(f: Flags, methods: Mapping[str, Any]) -> Checked:
    """Every check that needs no model, in the order a user meets them; UsageError (or LaunchError) if one fails.
    ``methods``: the method registry's names."""
    try:
        return _check_flags(f, methods)
    except LaunchError:
        raise
    except ValueError as e:
        raise UsageError(str(e)) from None


def read_run_calibration(path: str, methods: Mapping[str, Any]) -> Any:
    """``--calibration``'s file, read once before any model loads, every field checked
    (:mod:`align.confidence.schema`) and its method one of ``methods``; RunError (exit 1) in one line,
    ``FILE: FIELD: found X; expected Y``, if not. Whether it fits the model and the run is checked once they
    are known (:func:`load_calibration`)."""
    import json

    from ..confidence.calibration import CalibrationError, read_calibration

    try:
        cal = read_calibration(path)
    except CalibrationError as e:
        raise RunError(one_line(e)) from None
    method = cal.setting["method"]
    if method not in methods:
        raise RunError(
            f"{path}: setting.method: found {json.dumps(method)}; expected one of {', '.join(methods)} "
            "(the methods this release computes)"
        )
    return cal


def _check_flags(f: Flags, methods: Mapping[str, Any]) -> Checked:
    if (f.input is None) == (f.test_set is None):
        raise ValueError("give --input PAIRS or -t NAME (one of them)")
    if f.test_set is None and (f.langs or f.testsets_dir):
        raise ValueError("-l and --testsets-dir apply to -t NAME")
    if f.reverse_alignment_layer and not f.reverse_model:
        raise ValueError("--reverse-alignment-layer needs --reverse-model (it is the reverse model's layer)")
    if f.test_set is not None and f.translate:
        raise ValueError("-t NAME gives sentence pairs; --translate needs source sentences (--input)")
    auto, device = f.shard == "auto", f.device
    if auto:
        sh = shard_from_env()
        shard, shards = sh.index, sh.count
        if device == "cuda" and sh.local_rank is not None:
            device = f"cuda:{sh.local_rank}"
    else:
        shard, shards = parse_shard(f.shard)
    if (f.shard is not None) and not f.out:
        raise ValueError("--shard needs --out")
    if f.shard is not None and f.input == "-":
        raise ValueError("--shard needs a file --input (every shard reads the whole input)")
    if f.threshold is not None and f.decoder not in ("threshold", "relative-threshold"):
        raise ValueError(f"--threshold applies to the threshold decoders; --decoder is {f.decoder}")
    if f.scores_precision != "8bit" and not f.save_scores:
        raise ValueError("--scores-precision applies to --save-scores")
    if f.save_scores and (not f.out or f.level != "word"):
        raise ValueError("--save-scores needs --out and --level word (the matrices are word by word)")
    names = csv(f.methods)
    bad = [m for m in names if m not in methods]
    if bad:
        raise ValueError(f"--methods: unknown {', '.join(bad)}; valid: {', '.join(methods)}")
    layers = tuple(int(x) for x in csv(f.layers)) if f.layers else None
    heads = tuple(int(x) for x in csv(f.heads)) if f.heads else None
    if f.batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    if f.calibration and not f.out:
        raise ValueError("--calibration needs --out (it writes NAME.probs beside NAME.align)")
    if (f.prob_threshold is not None or f.sentence_scores or f.sentence_features) and not f.calibration:
        raise ValueError("--prob-threshold, --sentence-scores and --sentence-features need --calibration FILE")
    combos, threshold = _combinations(f)
    blends = _check_blends(f, combos, methods)
    if f.prob_threshold is not None and not 0.0 < f.prob_threshold <= 1.0:
        raise ValueError(f"--prob-threshold {f.prob_threshold}: expected a probability in (0, 1]")
    dest = None
    if f.out:
        dest = os.path.join(f.out, f"shard-{shard}-of-{shards}") if f.shard is not None else f.out
    return Checked(shard, shards, auto, device, tuple(names), tuple(csv(f.shifts)), layers, heads, combos,
                   threshold, blends, dest)  # fmt: skip


def _combinations(f: Flags) -> tuple[tuple[str, ...], float]:
    """The checked ``--combine`` names (none without --reverse-model) and the soft threshold; ValueError."""
    from ..links.combine import DEFAULT_THRESHOLD, check_combination, is_soft

    if not f.reverse_model:
        if f.combine or f.combine_threshold is not None:
            raise ValueError("--combine and --combine-threshold need --reverse-model")
        return (), DEFAULT_THRESHOLD
    if not f.out:
        raise ValueError("--reverse-model needs --out (it writes forward, reverse and combined files)")
    if f.level != "word":
        raise ValueError("--reverse-model needs --level word (the two models' subwords differ; their words do not)")
    combos = csv(f.combine if f.combine is not None else DEFAULT_COMBINATIONS)
    for c in combos:
        check_combination(c)
    if len(set(combos)) != len(combos):
        raise ValueError(f"--combine {f.combine}: a combination given twice")
    if f.combine_threshold is None:
        return tuple(combos), DEFAULT_THRESHOLD
    if not any(is_soft(c) and c.endswith(":threshold") for c in combos):
        raise ValueError("--combine-threshold applies to COMBINER:threshold combinations; --combine has none")
    if not 0.0 <= f.combine_threshold <= 1.0:
        raise ValueError(f"--combine-threshold {f.combine_threshold}: expected a value in [0, 1]")
    return tuple(combos), f.combine_threshold


def _check_blends(f: Flags, combos: tuple[str, ...], methods: Mapping[str, Any]) -> tuple[str, ...]:
    """--blend checked before the model loads (its layers are checked against the model later): needs --out,
    known methods and shifts, no blend twice, word level; every file name it makes fits; ValueError if not."""
    from ..io.softscores import scores_name
    from ..spec.alignspec import check_blends
    from .shards import MAX_NAME_LENGTH

    blends = csv(f.blend)
    if not blends:
        return ()
    if not f.out:
        raise ValueError("--blend needs --out (a blend is written beside the settings it averages)")
    check_blends(blends, methods, f.level, f.specials)
    for b in blends:
        name = Blend.parse(b).file
        made = [name, scores_name(name)]
        if f.reverse_model:
            made += [reverse_file(name), scores_name(reverse_file(name))] + [combined_file(name, c) for c in combos]
        longest = max(made, key=len)
        if len(longest) > MAX_NAME_LENGTH:
            raise ValueError(
                f"--blend {b}: makes the file name {longest!r} of {len(longest)} characters; at most {MAX_NAME_LENGTH} "
                "fit (blend fewer settings)"
            )
    return tuple(blends)


def check_input(f: Flags, path: str) -> None:
    """RunError when ``--input`` cannot be read as it must (``-`` and pipes are read as they come)."""
    if path == "-":
        return
    problem = (
        "no such file"
        if not os.path.exists(path)
        else "is a folder"
        if os.path.isdir(path)
        else "is a pipe, which can be read once"
        if f.shard is not None and not os.path.isfile(path)
        else ""
    )
    if problem:
        raise RunError(
            f"{path}: {problem}; expected the input pairs"
            + (" in a file (every shard reads the whole input)" if "pipe" in problem else "")
        )


def load_models(
    f: Flags, c: Checked, loaded: tuple[Any, Any] | None = None
) -> tuple[str, Any, AlignSpec, tuple[Any, AlignSpec] | None]:
    """``(framework, aligner, spec, reverse)``: the model loaded (or ``loaded``: the aligners an earlier plan of
    the same flags loaded, reused) and its spec checked (UsageError for a layer, head, shift or blend it lacks),
    the reverse model checked against it."""
    import torch

    from .extras import missing_module

    fw = f.framework or framework_of(f.model)
    kwargs: dict[str, Any] = dict(device=c.device, dtype=getattr(torch, f.dtype))
    if fw == "hf":
        kwargs.update(src_lang=f.src_lang, tgt_lang=f.tgt_lang)
    else:
        kwargs.update(trust=f.trust_checkpoint or None)
    try:
        aligner = loaded[0] if loaded else load_aligner(f.model, fw, **kwargs)
    except Exception as e:  # OSError, ValueError, a framework's own error types: one line, no traceback
        if missing_module(e):
            raise  # the command names the extra to install
        msg = one_line(e)
        raise RunError(msg if msg.startswith(f.model) else f"{f.model}: {msg}") from None
    check_language_flags(aligner, f.src_lang, f.tgt_lang, f.model)
    if f.lowercase:
        aligner.lowercase = True
    learned = uses_learned(c.methods, c.blends)
    if learned or f.alignment_layer:
        attach_layer(aligner, f.model, f.alignment_layer, "")
    layers = c.layers
    if layers is None:
        layers = tuple(range(aligner.n_layers)) if f.out else (aligner.n_layers - 1,)
    opts = {}
    if f.threshold is not None:
        opts["threshold" if f.decoder == "threshold" else "ratio"] = f.threshold
    heads = list(c.heads) if c.heads else None
    try:
        spec = aligner.spec(c.methods, layers, c.shifts, f.level, f.decoder, heads, f.specials, blends=c.blends, **opts)
    except ValueError as e:  # a layer, head, shift or blend this model does not have
        raise UsageError(str(e)) from None
    if not f.out and (len(spec.methods), len(spec.layers), len(spec.shifts)) != (1, 1, 1):
        raise UsageError("without --out, give one method, one layer and one shift (or --out DIR for many)")
    reverse = None
    if f.reverse_model:
        loader_kwargs = {**kwargs, "src_lang": f.src_lang, "tgt_lang": f.tgt_lang, "trust": f.trust_checkpoint or None}
        reverse = load_reverse(
            f.reverse_model,
            aligner,
            spec,
            loader_kwargs,
            opts,
            lowercase=f.lowercase,
            forward_path=f.model,
            alignment_layer=f.reverse_alignment_layer,
            loaded=loaded[1] if loaded else None,
        )
    return fw, aligner, spec, reverse


def uses_learned(methods: tuple[str, ...], blends: tuple[str, ...]) -> bool:
    """Whether the settings or blends asked for read a trained alignment layer (the ``learned`` method)."""
    return "learned" in methods or any(p.method == "learned" for b in blends for p in Blend.parse(b).parts)
