"""align-extract: word alignments of sentence pairs from any supported translation model.

``align-extract --model MODEL --input PAIRS [--out DIR] [--methods attn,norm] [--layers 0,1]
[--shifts awo,awi] [--translate] [--shard K/N | --shard auto]``. ``MODEL`` is a fairseq model
(``model.pt``, or a folder with ``model.safetensors``, dictionaries and ``spm.model``), a Hugging
Face model folder (``config.json``) or a Hub id ``ORG/NAME[@REVISION]``; ``PAIRS`` holds one
``source ||| target`` pair per line (awesome-align's input; ``-`` for stdin; ``.gz``, ``.xz``,
``.zst`` decompressed), or source lines only with ``--translate``.

The input streams through in chunks (memory does not grow with the corpus); files appear only when
every pair is done, as one folder (``DIR``, or ``DIR/shard-K-of-N``), with ``manifest.json``: the
run's signature (model digest or Hub revision, input digest and line count, every setting).
Exit status: 0 ok, 1 bad input (``file:line: ...``) or model, 2 usage.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import warnings
from contextlib import ExitStack
from typing import Any

import numpy as np

from .. import __version__
from ..extraction.launch import LaunchError, shard_from_env
from ..extraction.outputs import OutputExistsError, check_destination, clean_stale, publishing
from ..io.console import console_main
from ..io.formats import format_links
from ..io.inputs import InputError, PairReader, count_lines
from ..spec.alignspec import LEVELS, SPECIALS
from ..spec.setting import SHIFTS, Blend, base_name, combined_file, reverse_file
from ..spec.signature import Signature, identity_fields, short, spec_settings
from .extras import install_hint, missing_module

# Framework loaders by name, imported only when used: align/ never imports fairseq or transformers.
LOADERS = {
    "fairseq": "fairseq_plugins.hub:NormAligner.from_checkpoint",
    "hf": "hf_plugins.hub:HFAligner.from_pretrained",
}
DEFAULT_COMBINATIONS = "grow-diag-final-and,gmean:threshold"
"""--combine's default: the atools default and the soft combination the held-out protocol chose
(benchmarks/bidirectional.py)."""
CHUNK = 2048
"""Pairs read, (translated,) scored and written at a time: memory is per chunk, never per corpus."""

__all__ = ["InputError", "LOADERS", "build_parser", "framework_of", "load_aligner", "main", "parse_shard"]


def framework_of(path: str) -> str:
    """``hf`` for a folder with config.json or a Hub id (``ORG/NAME``: not a local path), else ``fairseq``."""
    if os.path.isdir(path):
        return "hf" if os.path.isfile(os.path.join(path, "config.json")) else "fairseq"
    return "fairseq" if os.path.exists(path) or path.endswith((".pt", ".safetensors")) else "hf"


def load_aligner(path: str, framework: str | None = None, **kwargs):
    """Load a model as an :class:`align.extraction.aligner.Aligner` with the framework's loader."""
    framework = framework or framework_of(path)
    if framework not in LOADERS:
        raise ValueError(f"unknown framework {framework!r}; valid: {', '.join(LOADERS)}")
    module, _, attr = LOADERS[framework].partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj(path, **{k: v for k, v in kwargs.items() if v is not None})


def _csv(s: str | None) -> list[str]:
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


def build_parser() -> argparse.ArgumentParser:
    from ..links.decode import DECODERS

    try:
        from ..attribution.methods import METHODS

        methods = ", ".join(METHODS)
    except ModuleNotFoundError as e:  # numpy alone: --help and --version work; a run names the extra (main)
        if missing_module(e) is None:
            raise
        methods = "the registered methods (listed once torch is installed)"

    ap = argparse.ArgumentParser(
        prog="align-extract",
        description=__doc__.split("\n\n")[0].splitlines()[0],
        epilog="Exit status: 0 ok, 1 bad input or model (file:line: ...), 2 usage.",
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    ap.add_argument(
        "--model",
        required=True,
        help="fairseq model.pt / model folder, Hugging Face folder, or Hub id ORG/NAME[@REVISION]",
    )
    ap.add_argument(
        "--input", help="'source ||| target' per line, or sources with --translate ('-': stdin; .gz/.xz/.zst by suffix)"
    )
    ap.add_argument(
        "-t",
        "--test-set",
        metavar="NAME",
        help="align the text of gold test set NAME instead of "
        "--input (align-eval --list shows the names; its checksums are verified)",
    )
    ap.add_argument(
        "-l",
        "--langs",
        metavar="SRC-TGT",
        help="with -t: the model's direction, e.g. fr-en for hansards (en-fr) (default: the set's own order)",
    )
    ap.add_argument(
        "--testsets-dir",
        metavar="DIR",
        help="with -t: folder of the sets that are not shipped "
        "(default $NORM_ALIGN_TESTSETS, else $NORM_ALIGN_SHARED/gold)",
    )
    ap.add_argument(
        "--out",
        help="folder: one Pharaoh file per (method, shift, layer[, head]) and manifest.json; "
        "default: print one setting",
    )
    ap.add_argument("--overwrite", action="store_true", help="replace an existing --out folder (whole, at the end)")
    ap.add_argument("--methods", default="norm", help=f"comma-separated, of: {methods} (default norm)")
    ap.add_argument("--layers", help="comma-separated decoder layers, 0-based (default: all with --out, else the last)")
    ap.add_argument(
        "--shifts",
        default="awi",
        help=f"comma-separated, of: {', '.join(SHIFTS)} (default awi): AWO "
        "reads target word i at the step that predicts it, AWI where it is the decoder's input",
    )
    ap.add_argument("--heads", help="heads averaged by per-head methods (default all; --out writes one file per head)")
    ap.add_argument(
        "--level",
        default="word",
        choices=LEVELS,
        help="word: subword scores merged (sum over source "
        "pieces, mean over target pieces), then decoded; subword: token positions; word-any: words linked "
        "if any of their pieces are (default word)",
    )
    ap.add_argument(
        "--decoder",
        default="argmax",
        choices=list(DECODERS),
        help="how score rows become links (default argmax: each target word's best source word)",
    )
    ap.add_argument(
        "--threshold",
        type=float,
        help="cutoff of the threshold decoders (share of the row; ratio to the row maximum for relative-threshold)",
    )
    ap.add_argument(
        "--specials",
        default="drop",
        choices=SPECIALS,
        help="drop: EOS removed before decoding; null: a word whose best source is EOS stays unaligned (default drop)",
    )
    ap.add_argument(
        "--translate",
        action="store_true",
        help="input is source lines: translate, then align the output (translations in DIR/translations.txt)",
    )
    ap.add_argument("--beam", type=int, default=5, help="beam size with --translate (default 5)")
    ap.add_argument(
        "--lowercase",
        action="store_true",
        help="lowercase the input (for models trained on lowercased "
        "text that do not say so in their config; the shipped models do, and are lowercased anyway)",
    )
    ap.add_argument(
        "--truncate",
        action="store_true",
        help="cut words off the end of a sentence longer than the "
        "model's positions (default: such a sentence is an error naming its line)",
    )
    ap.add_argument(
        "--save-scores",
        action="store_true",
        help="also write each setting's word-level score matrices, "
        "NAME.scores.jsonl beside NAME.align (align.io.softscores; for align-view)",
    )
    ap.add_argument(
        "--scores-precision",
        choices=("8bit", "float32"),
        default="8bit",
        help="with --save-scores: 8bit (each row scaled to its maximum, a byte a cell: what align-view needs) or "
        "float32 (the raw scores, four times the size: for thresholds and align-symmetrize; "
        "benchmarks/results/score_precision.md measures the difference) (default 8bit)",
    )
    ap.add_argument(
        "--calibration",
        metavar="FILE",
        help="an align-calibrate file for one of the settings: that "
        "setting also gets NAME.probs (each link's probability, in the .align line's order) and "
        "NAME.probs.jsonl (every cell's, for align-view --scores); needs --out",
    )
    ap.add_argument(
        "--reverse-model",
        metavar="MODEL",
        help="the model of the other direction (fairseq, Hugging Face, or the same multilingual model: its "
        "--src-lang/--tgt-lang are swapped), run over the same pairs turned round: --out then also gets "
        "NAME.reverse.align (its links, source first) and NAME.COMBINATION.align for each --combine; with "
        "a bidirectional --calibration its probabilities read both models' scores",
    )
    ap.add_argument(
        "--blend",
        metavar="LIST",
        help="comma-separated blends of settings, each SETTING+SETTING[+...] (e.g. alti-awi-layer0+attn-awo-layer2): "
        "the mean of the settings' row shares, written as NAME.align beside the settings (and reversed, combined "
        "and saved like them); their methods and layers are computed even when --methods/--layers omit them; "
        "needs --out",
    )
    ap.add_argument(
        "--combine",
        metavar="LIST",
        help="with --reverse-model: comma-separated combinations of the two directions: atools heuristics "
        "(intersect, union, grow-diag, grow-diag-final, grow-diag-final-and) on both directions' links, or "
        "COMBINER:DECODER on both score matrices (COMBINER hmean, gmean, mean of the row shares; DECODER "
        "threshold, intersect, itermax, argmax) (default grow-diag-final-and,gmean:threshold: the atools "
        "default and the soft combination chosen on held-out RWTH halves, benchmarks/results/bidirectional_rwth.md)",
    )
    ap.add_argument(
        "--combine-threshold",
        type=float,
        metavar="T",
        help="cutoff of the COMBINER:threshold combinations, in [0, 1] (default 0.2)",
    )
    ap.add_argument(
        "--prob-threshold",
        type=float,
        metavar="P",
        help="with --calibration: the calibrated setting's "
        "links are the cells of probability >= P (instead of --decoder)",
    )
    ap.add_argument(
        "--sentence-scores",
        action="store_true",
        help="with --calibration: write sentence_scores.tsv "
        "(line, score in [0, 1]: P(the pair is a translation)) into --out",
    )
    ap.add_argument(
        "--batch-size", type=int, default=32, help="pairs per forward pass (default 32; never changes an alignment)"
    )
    ap.add_argument(
        "--device", default="cpu", help="cpu, cuda, cuda:1, ... (with --shard auto, cuda means cuda:LOCAL_RANK)"
    )
    ap.add_argument(
        "--dtype",
        choices=("float32", "float16", "bfloat16"),
        default="float32",
        help="the model's dtype (scores are float32 either way)",
    )
    ap.add_argument("--src-lang", help="source language code of multilingual tokenizers (NLLB: eng_Latn)")
    ap.add_argument("--tgt-lang", help="target language code (NLLB: fra_Latn)")
    ap.add_argument(
        "--framework", choices=list(LOADERS), help="default: hf for a folder with config.json or a Hub id, else fairseq"
    )
    ap.add_argument(
        "--trust-checkpoint",
        action="store_true",
        help="unpickle a fairseq .pt fully (can run code: only for a file you trust)",
    )
    ap.add_argument(
        "--shard",
        help="K/N: align lines K, K+N, ... into OUT/shard-K-of-N/ (join with align-merge OUT); "
        "auto: K and N from torchrun/accelerate (RANK, WORLD_SIZE) or Slurm, and the last shard to "
        "finish merges into OUT/merged/",
    )
    ap.add_argument("--no-merge", action="store_true", help="with --shard auto: leave the merge to align-merge")
    ap.add_argument("--format", choices=("text", "json"), default="text", help="the summary line's format")
    ap.add_argument(
        "--progress",
        choices=("auto", "on", "off"),
        default="auto",
        help="progress bar with pairs/s and ETA on stderr (auto: when stderr is a terminal)",
    )
    return ap


def _quiet() -> None:
    """Warnings that say nothing to a user of this command (every run printed them)."""
    warnings.filterwarnings("ignore", message=".*key_padding_mask and attn_mask.*")
    warnings.filterwarnings("ignore", message=".*sacremoses.*")
    warnings.filterwarnings("ignore", category=FutureWarning)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@console_main("align-extract")
def main(argv=None) -> int:
    """align-extract: see the module docstring; exit 0 ok, 1 bad input, 2 usage (or a missing extra:
    one line naming it, :mod:`align.cli.extras`)."""
    return run_naming_extras("align-extract", _main, argv)


def run_naming_extras(prog: str, run, argv) -> int:
    """``run(argv)``; a missing torch or framework is one line naming the extra to install, exit 2 (the extra
    is guessed from ``--framework`` or ``--model``, as the run would choose its loader)."""
    try:
        return run(argv)
    except ModuleNotFoundError as e:
        module = missing_module(e)
        if module is None:
            raise
        p = argparse.ArgumentParser(add_help=False)
        p.add_argument("--model")
        p.add_argument("--framework")
        known, _ = p.parse_known_args(argv)
        framework = known.framework or (framework_of(known.model) if known.model else None)
        print(f"{prog}: {install_hint(module, framework)}", file=sys.stderr)
        return 2


def _main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    t0 = time.time()
    _quiet()
    from ..attribution.methods import METHODS

    try:
        if (args.input is None) == (args.test_set is None):
            raise ValueError("give --input PAIRS or -t NAME (one of them)")
        if args.test_set is None and (args.langs or args.testsets_dir):
            raise ValueError("-l and --testsets-dir apply to -t NAME")
        if args.test_set is not None and args.translate:
            raise ValueError("-t NAME gives sentence pairs; --translate needs source sentences (--input)")
        auto = args.shard == "auto"
        if auto:
            sh = shard_from_env()
            shard, shards = sh.index, sh.count
            if args.device == "cuda" and sh.local_rank is not None:
                args.device = f"cuda:{sh.local_rank}"
        else:
            shard, shards = parse_shard(args.shard)
        if (args.shard is not None) and not args.out:
            raise ValueError("--shard needs --out")
        if args.shard is not None and args.input == "-":
            raise ValueError("--shard needs a file --input (every shard reads the whole input)")
        if args.threshold is not None and args.decoder not in ("threshold", "relative-threshold"):
            raise ValueError(f"--threshold applies to the threshold decoders; --decoder is {args.decoder}")
        if args.scores_precision != "8bit" and not args.save_scores:
            raise ValueError("--scores-precision applies to --save-scores")
        if args.save_scores and (not args.out or args.level != "word"):
            raise ValueError("--save-scores needs --out and --level word (the matrices are word by word)")
        methods, shifts = _csv(args.methods), _csv(args.shifts)
        bad = [m for m in methods if m not in METHODS]
        if bad:
            raise ValueError(f"--methods: unknown {', '.join(bad)}; valid: {', '.join(METHODS)}")
        layers = [int(x) for x in _csv(args.layers)] if args.layers else None
        heads = [int(x) for x in _csv(args.heads)] if args.heads else None
        if args.batch_size < 1:
            raise ValueError("--batch-size must be at least 1")
        if args.calibration and not args.out:
            raise ValueError("--calibration needs --out (it writes NAME.probs beside NAME.align)")
        if (args.prob_threshold is not None or args.sentence_scores) and not args.calibration:
            raise ValueError("--prob-threshold and --sentence-scores need --calibration FILE")
        args.combos = _combinations(args)
        _check_blends(args)
        if args.prob_threshold is not None and not 0.0 < args.prob_threshold <= 1.0:
            raise ValueError(f"--prob-threshold {args.prob_threshold}: expected a probability in (0, 1]")
    except LaunchError as e:
        ap.error(str(e))
    except ValueError as e:
        ap.error(str(e))
    dest = None
    if args.out:  # checked before the model loads: a bad --out loses no work
        dest = os.path.join(args.out, f"shard-{shard}-of-{shards}") if args.shard is not None else args.out
        try:
            check_destination(
                dest,
                args.overwrite,
                "shard folder" if args.shard is not None else "output folder",
                inputs=(args.input,),
            )
        except (OutputExistsError, OSError) as e:
            print(f"align-extract: {e}", file=sys.stderr)
            return 1
        clean_stale(dest)
    with ExitStack() as inputs:
        if args.test_set is not None:
            try:
                args.input = _testset_input(args, inputs)
            except ValueError as e:  # an unknown name or direction is usage; missing or changed files are input
                from ..gold.testsets import UnknownTestSetError

                if isinstance(e, UnknownTestSetError):
                    ap.error(str(e))
                print(f"align-extract: {_one_line(e)}", file=sys.stderr)
                return 1
        return _extract(ap, args, t0, auto, shard, shards, methods, shifts, layers, heads, dest)


def _check_blends(args) -> None:
    """--blend checked before the model loads (its layers are checked against the model later): needs --out,
    known methods and shifts, no blend twice, word level; every file name it makes fits; ValueError if not."""
    from ..extraction.engine import check_blends
    from ..extraction.shards import MAX_NAME_LENGTH
    from ..io.softscores import scores_name

    blends = _csv(args.blend)
    if not blends:
        return
    if not args.out:
        raise ValueError("--blend needs --out (a blend is written beside the settings it averages)")
    check_blends(blends, args.level, args.specials)
    for b in blends:
        name = Blend.parse(b).file
        made = [name, scores_name(name)]
        if args.reverse_model:
            made += [reverse_file(name), scores_name(reverse_file(name))] + [
                combined_file(name, c) for c in args.combos
            ]
        longest = max(made, key=len)
        if len(longest) > MAX_NAME_LENGTH:
            raise ValueError(
                f"--blend {b}: makes the file name {longest!r} of {len(longest)} characters; at most {MAX_NAME_LENGTH} "
                "fit (blend fewer settings)"
            )


def _combinations(args) -> list[str]:
    """The checked ``--combine`` names (none without --reverse-model); ValueError on a bad flag."""
    from ..links.combine import DEFAULT_THRESHOLD, check_combination, is_soft

    if not args.reverse_model:
        if args.combine or args.combine_threshold is not None:
            raise ValueError("--combine and --combine-threshold need --reverse-model")
        return []
    if not args.out:
        raise ValueError("--reverse-model needs --out (it writes forward, reverse and combined files)")
    if args.level != "word":
        raise ValueError("--reverse-model needs --level word (the two models' subwords differ; their words do not)")
    combos = _csv(args.combine if args.combine is not None else DEFAULT_COMBINATIONS)
    for c in combos:
        check_combination(c)
    if len(set(combos)) != len(combos):
        raise ValueError(f"--combine {args.combine}: a combination given twice")
    if args.combine_threshold is not None:
        if not any(is_soft(c) and c.endswith(":threshold") for c in combos):
            raise ValueError("--combine-threshold applies to COMBINER:threshold combinations; --combine has none")
        if not 0.0 <= args.combine_threshold <= 1.0:
            raise ValueError(f"--combine-threshold {args.combine_threshold}: expected a value in [0, 1]")
    else:
        args.combine_threshold = DEFAULT_THRESHOLD
    return combos


def _testset_input(args, stack: ExitStack) -> str:
    """Write the ``-t`` test set's text (in ``-l``'s direction) to a temporary file kept open by ``stack``; its
    path. ``args.input_name`` and ``args.test_set_signature`` name the set in errors and in the signature."""
    import tempfile

    from ..gold import testsets

    ts = testsets.load(args.test_set, args.langs, args.testsets_dir)
    folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="align-extract-"))
    path = os.path.join(folder, f"{ts.name}.{ts.pair}.src-tgt")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(line + "\n" for line in ts.text_lines())
    args.input_name, args.test_set_signature = f"test set {ts.name} ({ts.pair})", ts.signature()
    return path


def _extract(ap, args, t0, auto, shard, shards, methods, shifts, layers, heads, dest) -> int:
    """The run after the flags are checked: load the model, align, publish, print the summary."""
    if args.input != "-":  # a pipe or FIFO (<(...)) is read as it comes, as - is
        problem = (
            "no such file"
            if not os.path.exists(args.input)
            else "is a folder"
            if os.path.isdir(args.input)
            else "is a pipe, which can be read once"
            if args.shard is not None and not os.path.isfile(args.input)
            else ""
        )
        if problem:
            print(
                f"align-extract: {args.input}: {problem}; expected the input pairs"
                + (" in a file (every shard reads the whole input)" if "pipe" in problem else ""),
                file=sys.stderr,
            )
            return 1
    import torch

    fw = args.framework or framework_of(args.model)
    kwargs = dict(device=args.device, dtype=getattr(torch, args.dtype))
    if fw == "hf":
        kwargs.update(src_lang=args.src_lang, tgt_lang=args.tgt_lang)
    else:
        kwargs.update(trust=args.trust_checkpoint or None)
    try:
        aligner = load_aligner(args.model, fw, **kwargs)
    except Exception as e:  # OSError, ValueError, a framework's own error types: one line, no traceback
        if missing_module(e):
            raise  # main names the extra to install
        msg = _one_line(e)
        print(f"align-extract: {msg if msg.startswith(args.model) else f'{args.model}: {msg}'}", file=sys.stderr)
        return 1
    if args.lowercase:
        aligner.lowercase = True
    if layers is None:
        layers = list(range(aligner.n_layers)) if args.out else [aligner.n_layers - 1]
    opts = {}
    if args.threshold is not None:
        opts["threshold" if args.decoder == "threshold" else "ratio"] = args.threshold
    try:
        spec = aligner.spec(
            methods, layers, shifts, args.level, args.decoder, heads, args.specials, blends=_csv(args.blend), **opts
        )
    except ValueError as e:  # a layer, head, shift or blend this model does not have
        ap.error(str(e))
    if not args.out and (len(spec.methods), len(spec.layers), len(spec.shifts)) != (1, 1, 1):
        ap.error("without --out, give one method, one layer and one shift (or --out DIR for many)")
    args.reverse = None
    if args.reverse_model:
        loaded = _load_reverse(ap, args, aligner, spec, kwargs, opts)
        if isinstance(loaded, int):
            return loaded
        args.reverse = loaded
    args.calibrated = None
    if args.calibration:
        from dataclasses import replace

        from ..confidence.calibration import CalibrationError, read_calibration
        from .calibrate import calibration_setting

        try:
            cal = read_calibration(args.calibration)
            cal.check(identity_fields(aligner.identity()), cal.setting, args.calibration)
        except CalibrationError as e:
            print(f"align-extract: {e}", file=sys.stderr)
            return 1
        want = {k: v for k, v in cal.setting.items() if k != "reverse_model"}
        if cal.bidirectional != bool(args.reverse_model):
            ap.error(
                f"--calibration {args.calibration} is "
                + (
                    "bidirectional: give the --reverse-model it was fitted with"
                    if cal.bidirectional
                    else "of one direction: give it without --reverse-model"
                )
            )
        reverse, rspec = None, None
        if args.reverse is not None:
            reverse = args.reverse[0]
            got = identity_fields(reverse.identity())
            if got != cal.setting.get("reverse_model"):
                print(
                    f"align-extract: {args.calibration}: fitted with reverse model "
                    f"{cal.setting.get('reverse_model')}; --reverse-model is {got}",
                    file=sys.stderr,
                )
                return 1
            one = {"methods": (want.get("method"),), "layers": (want.get("layer"),), "shifts": (want.get("shift"),)}
            rspec = replace(args.reverse[1], **one, blends=())
        match = [
            n
            for n, m, la, sh, h in aligner.settings(spec, spec.heads is None)
            if h is None and calibration_setting(spec, m, la, sh) == want
        ]
        if not match:
            ap.error(
                f"--calibration {args.calibration} holds for {want.get('method')} layer {want.get('layer')} "
                f"{want.get('shift')} ({', '.join(f'{k}={v}' for k, v in want.items())}); this run does not "
                "compute that setting (add it to --methods, --layers, --shifts)"
            )
        m0, la0, sh0 = (want.get("method"),), (want.get("layer"),), (want.get("shift"),)
        args.calibrated = (
            match[0], cal, reverse, rspec, replace(spec, methods=m0, layers=la0, shifts=sh0, blends=())
        )  # fmt: skip
        fitted = str(cal.fitted_on.get("gold", ""))
        if getattr(args, "test_set_signature", None) and fitted.split("|")[0] == args.test_set_signature.split("|")[0]:
            print(
                f"align-extract: warning: {args.calibration} was fitted on {fitted} (sentences: "
                f"{cal.fitted_on.get('fold', 'all')}); what this run measures on them is in-sample",
                file=sys.stderr,
            )
    try:
        stats = run(aligner, spec, args, shard, shards, dest)
    except BrokenPipeError:
        raise  # the reader closed stdout (| head): console_main says it in one line
    except (OSError, ValueError) as e:  # InputError, WordMapError, TooLongError, OutputExistsError: file:line
        print(f"align-extract: {_one_line(e)}", file=sys.stderr)
        return 1
    merged = None
    if args.shard is not None:
        from ..extraction.shards import drop_stale_merged, merge_when_complete

        drop_stale_merged(args.out, stats["signature"])  # merged/ of an earlier run never stays beside new shards
        if auto and not args.no_merge:  # one process too: one command always ends in DIR/merged/
            try:
                merged, why = merge_when_complete(args.out, stats["signature"])
            except (OSError, ValueError) as e:
                print(
                    f"align-extract: shard {shard}/{shards} written, but the merge failed: {_one_line(e)}",
                    file=sys.stderr,
                )
                return 1
            if why:
                print(f"align-extract: shard {shard}/{shards} written, but not merged: {why}", file=sys.stderr)
                return 1
    summary = {
        "model": args.model,
        "framework": fw,
        "pairs": stats["pairs"],
        "lines": stats["lines"],
        "truncated": stats["truncated"],
        "truncated_reverse": stats["truncated_reverse"],
        "methods": list(spec.methods),
        "layers": list(spec.layers),
        "shifts": list(spec.shifts),
        "blends": [base_name(b) for b in spec.blends],
        "out": dest,
        "shard": f"{shard}/{shards}",
        "merged": merged,
        "preprocessing": aligner.preprocessing(),
        "reverse_model": args.reverse_model,
        "combine": list(args.combos),
        "signature": stats["signature"],
        "seconds": round(time.time() - t0, 1),
    }
    if args.format == "json":
        print(json.dumps(summary), file=sys.stderr if not args.out else sys.stdout)
    else:
        model = summary["signature"]["model"]
        rev = f"@{model['revision'][:12]}" if "revision" in model else ""
        print(
            f"aligned {stats['pairs']} pairs with {fw} {args.model}{rev}: {len(spec.methods)} method(s) x "
            f"{len(spec.layers)} layer(s) x {len(spec.shifts)} shift(s)"
            + (f" + {len(spec.blends)} blend(s)" if spec.blends else "")
            + f" in {summary['seconds']} s"
            + (
                f"; and the other way round with {args.reverse_model} ({len(args.combos)} combination(s))"
                if args.reverse is not None
                else ""
            )
            + (f", {stats['truncated']} truncated" if stats["truncated"] else "")
            + (f", {stats['truncated_reverse']} truncated by the reverse model" if stats["truncated_reverse"] else "")
            + (", lowercased" if aligner.lowercase else "")
            + (f"; files in {dest}" if dest else "")
            + (f"; merged into {merged}" if merged else "")
            + f" [{short(summary['signature'])}]",
            file=sys.stderr,
        )
    return 0


def _load_reverse(ap, args, aligner, spec, kwargs: dict, opts: dict):
    """``(reverse aligner, its spec)`` for --reverse-model, checked against the forward model: the same
    settings exist in it, and the languages it declares are the forward model's turned round. An int (the
    exit status) when it cannot be used; usage errors exit 2 through ``ap``."""
    path = args.reverse_model
    rfw = framework_of(path)
    rkwargs = {k: v for k, v in kwargs.items() if k not in ("src_lang", "tgt_lang", "trust")}
    if rfw == "hf":  # the same multilingual model the other way round: its languages swapped
        rkwargs.update(src_lang=args.tgt_lang, tgt_lang=args.src_lang)
    else:
        rkwargs.update(trust=args.trust_checkpoint or None)
    try:
        reverse = load_aligner(path, rfw, **rkwargs)
    except Exception as e:  # the framework's own errors: one line
        if missing_module(e):
            raise
        msg = _one_line(e)
        print(f"align-extract: --reverse-model {msg if msg.startswith(path) else f'{path}: {msg}'}", file=sys.stderr)
        return 1
    if args.lowercase:
        reverse.lowercase = True
    (fs, ft), (rs, rt) = aligner.languages(), reverse.languages()
    if None not in (fs, ft, rs, rt) and (rs, rt) != (ft, fs):
        print(
            f"align-extract: --reverse-model {path} translates {rs}->{rt}; expected {ft}->{fs}, the --model's "
            f"direction ({fs}->{ft}) turned round",
            file=sys.stderr,
        )
        return 1
    same = identity_fields(reverse.identity()) == {k: v for k, v in aligner.identity().items() if k != "path"}
    if same and (None in (fs, ft) or (fs, ft) == (rs, rt)):
        print(
            f"align-extract: --reverse-model {path} is the --model itself with no languages to swap: it would "
            "align the same direction twice; give the model of the other direction, or a multilingual model's "
            "--src-lang and --tgt-lang (the reverse run swaps them)",
            file=sys.stderr,
        )
        return 1
    if reverse.lowercase != aligner.lowercase:
        print(
            f"align-extract: --reverse-model {path} was trained on "
            + ("lowercased" if reverse.lowercase else "cased")
            + f" text and --model {args.model} on "
            + ("lowercased" if aligner.lowercase else "cased")
            + " text; the two directions would read different words (give both the same preprocessing, "
            "e.g. --lowercase)",
            file=sys.stderr,
        )
        return 1
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
        ap.error(f"--reverse-model {path}: {e}")
    per_head = spec.heads is None
    mine = [n for n, *_ in aligner.settings(spec, per_head)]
    theirs = [n for n, *_ in reverse.settings(rspec, per_head)]
    if mine != theirs:
        extra = sorted(set(mine) ^ set(theirs))
        ap.error(
            f"--reverse-model {path}: has {reverse.n_heads} heads per layer and --model {aligner.n_heads}, so "
            f"their per-head files differ ({', '.join(extra[:3])}); give --heads"
        )
    return reverse, rspec


def _score_reverse(args, items: list) -> dict:
    """With --reverse-model: ``{k: (source, target, scores)}`` of the reverse model for ``items[k]`` turned
    round (its source is the pair's target), batched by length as the forward pass is."""
    if args.reverse is None:
        return {}
    reverse, rspec = args.reverse
    # the reverse model's "source" is the pair's target: say so in its errors
    turned = [
        (f"{where} (turned round for the reverse model: its source is the pair's target)", t, s)
        for where, s, t in items
    ]
    return {
        k: (rse, rte, rsc) for k, rse, rte, rsc in reverse.score_items(turned, rspec, args.batch_size, args.truncate)
    }


def _both_directions(args, names: list[str], links_of: dict, fwd: dict, rev: dict, scored: tuple) -> dict:
    """The reverse links (turned round to ``(src, tgt)``) and every --combine of one pair, keyed by file name.
    ``fwd``/``rev``: word-score matrices by setting name, forward (T, S) and reverse (S, T); under
    --truncate the two models may keep different numbers of words: the forward's words are the pair's, and
    a word the reverse model cut has no score from it (zeros)."""
    from ..links.combine import combine, combine_links, reverse_links

    reverse, rspec = args.reverse
    rlinks = reverse.links(*scored, rspec, rspec.heads is None, rev)
    out = {}
    for name in names:
        back = reverse_links(rlinks[name])
        out[reverse_file(name)] = back
        if fwd:  # float32, as --scores-precision float32 stores them: align-symmetrize on the files gives these links
            f, r = fwd[name].astype(np.float32), fit_shape(rev[name], fwd[name].shape[::-1]).astype(np.float32)
        for c in args.combos:
            if ":" in c:
                out[combined_file(name, c)] = combine(c, f, r, args.combine_threshold)
            else:
                out[combined_file(name, c)] = combine_links(c, links_of[name], back)
    return out


def fit_shape(m: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``m`` cut or padded with zeros to ``shape`` (the words one model kept under --truncate, the other's)."""
    if m.shape == shape:
        return m
    out = np.zeros(shape, dtype=m.dtype)
    t, s = min(m.shape[0], shape[0]), min(m.shape[1], shape[1])
    out[:t, :s] = m[:t, :s]
    return out


def _write_calibrated(
    aligner, se, te, sc, args, links_of: dict, files: dict, prefix: str, line: int, scored: tuple | None
) -> None:
    """The calibrated setting's probabilities (and links, under --prob-threshold) and the pair's sentence score;
    ``scored``: the reverse model's (source, target, scores) of the pair, with a bidirectional calibration."""
    from ..io.softscores import encode_scores

    name, cal, reverse, rspec, cspec = args.calibrated
    w = aligner.word_scores(se, te, sc, cspec, null=True)[name]  # only the calibrated setting's matrix
    both: tuple = ()
    if reverse is not None and scored is not None:
        rw = reverse.word_scores(*scored, rspec, null=True)[name]
        t, s = w.shape[0], w.shape[1] - 1
        both = (fit_shape(rw[:, :-1], (s, t)), fit_shape(rw[:, -1:], (s, 1))[:, 0])  # --truncate: see fit_shape
    probs = cal.probabilities(w[:, :-1], w[:, -1], *both)
    if args.prob_threshold is not None:
        links_of[name] = [(int(s), int(t)) for t, s in zip(*np.nonzero(probs >= args.prob_threshold))]
    links = sorted(links_of[name])  # format_links writes them in this order: the probabilities follow it
    links_of[name] = links
    base = name.removesuffix(".align")
    files[base + ".probs"].write(prefix + " ".join(f"{probs[t, s]:.4f}" for s, t in links) + "\n")
    files[base + ".probs.jsonl"].write(prefix + encode_scores(probs, absolute=True) + "\n")
    if "sentence_scores.tsv" in files:
        files["sentence_scores.tsv"].write(f"{prefix}{line + 1}\t{cal.sentence_score(probs):.6f}\n")


def _one_line(e: BaseException) -> str:
    """An error as one line: a message of several lines is joined with '; ' (one line is promised)."""
    text = "; ".join(x.strip() for x in str(e).splitlines() if x.strip())
    return text if text else type(e).__name__


def signature(aligner, spec, args, reader: PairReader) -> Signature:
    """Everything that changes this run's output: :mod:`align.spec.signature`."""
    settings = spec_settings(spec)
    blends = settings.pop("blends", None)
    settings.update(
        preprocessing=aligner.preprocessing(),
        translate={"beam": args.beam} if args.translate else False,
        truncate=args.truncate,
        dtype=args.dtype,
        device=args.device.split(":")[0],
        # True for 8-bit files (as before --scores-precision existed), else the precision's name
        save_scores=_precision_of(args) if args.save_scores else False,
        src_lang=args.src_lang,
        tgt_lang=args.tgt_lang,
        calibration=_calibration_signature(args),
    )
    if blends:
        settings["blends"] = blends
    reverse_model = None
    if getattr(args, "reverse", None) is not None:  # only then: one direction's signature stays as it was
        reverse = args.reverse[0]
        reverse_model = {**identity_fields(reverse.identity()), "preprocessing": reverse.preprocessing()}
        settings["combine"] = {"combinations": list(args.combos), "threshold": args.combine_threshold}
    test_set = getattr(args, "test_set_signature", None)
    return Signature(
        model=identity_fields(aligner.identity() if hasattr(aligner, "identity") else {}),
        input={"sha256": reader.sha256, "lines": reader.lines, **({"test_set": test_set} if test_set else {})},
        settings=settings,
        version=__version__,
        reverse_model=reverse_model,
    )


def _precision_of(args) -> str | bool:
    """The --save-scores part of the signature: True for 8-bit files, else the precision's name."""
    p = getattr(args, "scores_precision", "8bit")
    return True if p == "8bit" else p


def _calibration_signature(args) -> dict | bool:
    """The calibration file's digest and how it was used (False without one)."""
    if not getattr(args, "calibration", None):
        return False
    import hashlib

    with open(args.calibration, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    reverse = args.calibrated[2] if getattr(args, "calibrated", None) else None
    return {
        "sha256": digest,
        "prob_threshold": args.prob_threshold,
        "sentence_scores": args.sentence_scores,
        "reverse_model": identity_fields(reverse.identity()) if reverse else None,
        "fitted_on": args.calibrated[1].fitted_on if getattr(args, "calibrated", None) else None,
    }


def _chunks(reader: PairReader):
    buf = []
    for row in reader:
        buf.append(row)
        if len(buf) >= CHUNK:
            yield buf
            buf = []
    if buf:
        yield buf


def run(aligner, spec, args, shard: int, shards: int, dest: str | None) -> dict:
    """Align every (shard's) pair of ``args.input``, streaming: read, (translate,) score and write a
    chunk at a time. With a destination, files go to a temporary folder published whole at the end;
    without, one setting is printed as it goes. Returns pairs, lines, truncated and the signature."""
    from ..extraction.engine import links_for
    from ..io.softscores import encode_scores, scores_name

    reader = PairReader(args.input, args.translate, (shard, shards))
    if getattr(args, "input_name", None):  # a named test set's text: errors name the set, not a temporary file
        reader.name = args.input_name
    sharded = args.shard is not None
    per_head_files = spec.heads is None
    stats: dict[str, Any] = {"pairs": 0, "truncated": 0, "truncated_reverse": 0}
    total = (
        count_lines(args.input)
        if (args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty())) and os.path.isfile(args.input)
        else None
    )  # a pipe cannot be read twice
    bar = None
    if args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty()):
        from tqdm import tqdm

        bar = tqdm(
            total=None if total is None else len(range(shard, total, shards)),
            desc="aligning",
            unit="pair",
            file=sys.stderr,
            dynamic_ncols=True,
        )
    calibrated: dict = {}  # the calibrated setting's extra files (with --out and --calibration)
    scores_files: dict = {}
    names: list[str] = []
    precision = getattr(args, "scores_precision", "8bit")
    with ExitStack() as stack:
        if dest is not None:
            tmp = stack.enter_context(publishing(dest, args.overwrite))
            names = aligner.output_names(spec, per_head_files)
            both = (
                [n2 for n in names for n2 in [reverse_file(n)] + [combined_file(n, c) for c in args.combos]]
                if args.reverse is not None
                else []
            )
            opened = {
                n: stack.enter_context(open(os.path.join(tmp, n), "w", encoding="utf-8", newline="\n"))
                for n in names + both
            }  # every setting's file, so an empty input gives empty files
            scored_names = names + ([reverse_file(n) for n in names] if args.reverse is not None else [])
            scores_files = (
                {
                    n: stack.enter_context(open(os.path.join(tmp, scores_name(n)), "w", encoding="utf-8", newline="\n"))
                    for n in scored_names
                }
                if args.save_scores
                else {}
            )
            translations = (
                stack.enter_context(open(os.path.join(tmp, "translations.txt"), "w", encoding="utf-8", newline="\n"))
                if args.translate
                else None
            )
            if args.calibrated:
                cal_name = args.calibrated[0].removesuffix(".align")
                extra = [cal_name + ".probs", cal_name + ".probs.jsonl"] + (
                    ["sentence_scores.tsv"] if args.sentence_scores else []
                )
                calibrated = {
                    n: stack.enter_context(open(os.path.join(tmp, n), "w", encoding="utf-8", newline="\n"))
                    for n in extra
                }
        out = sys.stdout
        for chunk in _chunks(reader):
            where = [f"{reader.name}:{i + 1}" for i, _, _ in chunk]
            prefix = [f"{i}\t" if sharded else "" for i, _, _ in chunk]  # shards tag lines with global ids
            if args.translate:
                hyps = aligner.translate([s for _, s, _ in chunk], batch_size=args.batch_size, beam=args.beam)
                chunk = [(i, s, h) for (i, s, _), h in zip(chunk, hyps)]
                if dest is not None and translations is not None:
                    translations.writelines(p + " ".join(h) + "\n" for p, (_, _, h) in zip(prefix, chunk))
            items = [(w, s, t) for w, (_, s, t) in zip(where, chunk)]
            lines = []
            rev_scored = _score_reverse(args, items) if dest is not None else {}
            soft = bool(scores_files) or any(":" in c for c in args.combos)
            for k, se, te, sc in aligner.score_items(items, spec, args.batch_size, args.truncate):
                stats["truncated"] += bool(se.dropped or te.dropped)
                if dest is None:
                    (m,), (la,), (sh,) = spec.methods, spec.layers, spec.shifts
                    lines.append(format_links(links_for(sc, se.words, te.words, spec, m, la, sh)) + "\n")
                    continue
                fwd = aligner.word_scores(se, te, sc, spec, per_head_files) if soft else {}
                links_of = aligner.links(se, te, sc, spec, per_head_files, fwd)
                rev: dict = {}
                if args.reverse is not None:
                    rse, rte, rsc = rev_scored[k]
                    stats["truncated_reverse"] += bool(rse.dropped or rte.dropped)
                    reverse, rspec = args.reverse
                    rev = reverse.word_scores(rse, rte, rsc, rspec, per_head_files) if soft else {}
                if calibrated:  # first: under --prob-threshold its links are NAME.align's, which the combinations read
                    _write_calibrated(
                        aligner, se, te, sc, args, links_of, calibrated, prefix[k], chunk[k][0], rev_scored.get(k)
                    )
                if args.reverse is not None:
                    links_of.update(_both_directions(args, names, links_of, fwd, rev, rev_scored[k]))
                for name, links in links_of.items():
                    opened[name].write(prefix[k] + format_links(links) + "\n")
                if scores_files:
                    for name, m in fwd.items():
                        scores_files[name].write(prefix[k] + encode_scores(m, precision=precision) + "\n")
                    for name, m in rev.items():
                        scores_files[reverse_file(name)].write(
                            prefix[k] + encode_scores(m, precision=precision, reverse=True) + "\n"
                        )
            if dest is None:
                out.writelines(lines)
                out.flush()
            stats["pairs"] += len(chunk)
            if bar is not None:
                bar.update(len(chunk))
        stats["lines"] = reader.lines
        stats["signature"] = signature(aligner, spec, args, reader).as_dict()
        if dest is not None:
            from ..extraction.shards import shard_manifest, write_manifest

            if sharded:
                man = shard_manifest(
                    shard,
                    shards,
                    reader.lines,
                    stats["pairs"],
                    list(opened)
                    + [scores_name(n) for n in scores_files]
                    + (["translations.txt"] if args.translate else [])
                    + list(calibrated),
                    stats["signature"],
                )
                man["model_path"] = args.model
            else:
                man = {
                    "sentences": stats["pairs"],
                    "files": sorted(
                        list(opened)
                        + [scores_name(n) for n in scores_files]
                        + (["translations.txt"] if args.translate else [])
                        + list(calibrated)
                    ),
                    "signature": stats["signature"],
                    "model_path": args.model,
                }
            if args.reverse is not None:
                man["reverse_model_path"] = args.reverse_model
            for f in (
                list(opened.values())
                + list(scores_files.values())
                + ([translations] if translations else [])
                + list(calibrated.values())
            ):
                f.close()
            write_manifest(tmp, man)
    if bar is not None:
        bar.close()
    return stats


if __name__ == "__main__":
    sys.exit(main())
