"""align-train: train an alignment layer on a frozen model's own alignments of a corpus (no gold).

``align-train --model MODEL --reverse-model REV --input PAIRS`` aligns the ``source ||| target`` pairs with both
models (``align-extract --reverse-model``, the teacher blend in each direction, combined), then trains one
attention layer on top of each frozen model to reproduce those links (:mod:`align.attribution.learned`, after
Shift-AET). Each layer is stored once beside its model (``MODEL/alignment_layer/``: ``layer.safetensors`` and
``layer.json``, naming the model's sha256, languages, tokenizer, corpus and teacher); ``align-extract --methods
learned`` then reads it. Checkpoints every ``--checkpoint-every`` steps in ``OUT/train/`` (an interrupted run
resumes there); a second training into the same folder is refused.
Exit status: 0 ok, 1 bad input (``file:line: ...``) or model, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack

from .. import __version__
from ..extraction.layer_training import TEACHER_COMBINE, TrainOptions, read_corpus, read_teacher, train_layers
from ..io.console import console_main
from .common import empty_flag, number_in, quiet_frameworks, run_naming_extras


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="align-train",
        description=__doc__.split("\n\n")[0].removeprefix("align-train: "),
        epilog="Exit status: 0 ok, 1 bad input or model, 2 usage.",
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    ap.add_argument("--model", required=True, help="the translation model (as align-extract takes it)")
    ap.add_argument(
        "--reverse-model",
        help="the model of the other direction: the teacher combines both directions, and its layer is trained too",
    )
    ap.add_argument("--input", required=True, help="'source ||| target' pairs, one per line (.gz/.xz/.zst)")
    ap.add_argument("--out", help="the --model's alignment layer folder (default MODEL/alignment_layer)")
    ap.add_argument("--reverse-out", help="the --reverse-model's (default REVERSE_MODEL/alignment_layer)")
    ap.add_argument("--overwrite", action="store_true", help="replace a finished alignment layer in --out")
    ap.add_argument(
        "--teacher-links",
        metavar="FILE",
        help="Pharaoh links of --input to learn (0-based src-tgt, one line per pair) instead of aligning it first",
    )
    ap.add_argument("--teacher", type=_teacher_name, help="the blend or setting the teacher uses in each direction "
                    "(default alti-awi-layer0+attn-awo-layerLAST)")  # fmt: skip
    ap.add_argument("--combine", help=f"how the teacher combines the directions (default {TEACHER_COMBINE})")
    ap.add_argument(
        "--layer", type=int, help="the decoder layer whose states the alignment layer reads (default: the middle one)"
    )
    ap.add_argument(
        "--epochs", type=number_in(int, 0, low_open=True), default=1, help="passes over the corpus (default 1)"
    )
    ap.add_argument(
        "--lr", type=number_in(float, 0, low_open=True), default=1e-3, help="Adam's learning rate (default 1e-3)"
    )
    ap.add_argument(
        "--batch-size", type=number_in(int, 0, low_open=True), default=32, help="pairs per step (default 32)"
    )
    ap.add_argument("--seed", type=int, default=1, help="the batches' order (default 1)")
    ap.add_argument(
        "--checkpoint-every",
        type=number_in(int, 0, low_open=True),
        default=500,
        help="steps between checkpoints (default 500)",
    )
    ap.add_argument("--truncate", action="store_true", help="cut words off sentences longer than the model's positions")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--lowercase", action="store_true", help="lowercase the input (the shipped models do anyway)")
    ap.add_argument("--src-lang")
    ap.add_argument("--tgt-lang")
    ap.add_argument("--framework", choices=("fairseq", "hf"))
    ap.add_argument("--trust-checkpoint", action="store_true")
    ap.add_argument("--format", choices=("text", "json"), default="text", help="the summary line's format")
    ap.add_argument("--progress", choices=("auto", "on", "off"), default="auto", help="progress bars on stderr")
    return ap


def _teacher_name(text: str) -> str:
    """An argparse ``type``: a setting or blend name (``align.spec.setting.parse``), else a usage error."""
    from ..spec.setting import parse

    try:
        parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


@console_main("align-train")
def main(argv: Sequence[str] | None = None) -> int:
    """align-train: see the module docstring; exit 0 ok, 1 bad input or model, 2 usage."""
    return run_naming_extras("align-train", _main, argv)


def _main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    empty = empty_flag(ap, vars(args))
    if empty:
        ap.error(f"{empty} is empty; give a value or leave the flag out")
    if args.reverse_out and not args.reverse_model:
        ap.error("--reverse-out needs --reverse-model")
    if not args.reverse_model and not args.teacher_links:
        ap.error("give --reverse-model (the teacher combines both directions) or --teacher-links FILE")
    if args.teacher_links and (args.teacher or args.combine):
        ap.error("--teacher and --combine say how the corpus is aligned; with --teacher-links it is not")
    args.combine = args.combine or TEACHER_COMBINE
    if args.input == "-":
        ap.error("the corpus is read twice (the teacher, then the training): give a file, not standard input")
    quiet_frameworks()
    from ..extraction.alignment_layer import AlignmentLayerError, default_folder
    from ..extraction.loading import RunError, UsageError, one_line
    from ..extraction.train_layer import TrainingLockedError, lock_folder

    t0 = time.time()
    try:
        outs = [(args.out or default_folder(args.model), args.model)]
        if args.reverse_model:
            outs.append((args.reverse_out or default_folder(args.reverse_model), args.reverse_model))
    except AlignmentLayerError as e:
        ap.error(str(e))
    if len(outs) == 2 and os.path.realpath(outs[0][0]) == os.path.realpath(outs[1][0]):
        ap.error(f"--out and --reverse-out are one folder ({outs[0][0]}): each model's layer needs its own")
    for folder, model in outs:
        if os.path.isdir(model) and os.path.realpath(folder) == os.path.realpath(model):
            # a model folder's files are its identity (sha256): the layer's files there would change it
            ap.error(f"{folder} is the model's own folder: the layer's files would change the model's sha256 and the "
                     f"layer would no longer fit it; give another folder (default {default_folder(model)})")  # fmt: skip
    made: list[str] = []
    try:
        _check_out(outs, args.overwrite)
        # the corpus and the teacher file first: a bad line is found before any folder or model
        pairs, corpus = read_corpus(args.input)
        links = read_teacher(args.teacher_links, pairs, corpus["sha256"]) if args.teacher_links else None
        with ExitStack() as stack:
            try:
                for folder, _ in outs:
                    new = [d for d in (folder, os.path.join(folder, "train")) if not os.path.isdir(d)]
                    stack.callback(lock_folder(folder).close)
                    made += new  # only once locked: a run that lost the lock must not remove the winner's folders
                result = train_layers(TrainOptions.of(args), outs, pairs, corpus, links)
            except BaseException:
                _remove_empty(made)  # while the locks are held: no other run locks a file about to be removed
                raise
    except UsageError as e:
        _remove_empty(made)
        ap.error(str(e))
    except (RunError, TrainingLockedError, FileExistsError, OSError, ValueError) as e:
        # OSError, ValueError: InputError (file:line), a teacher that does not fit, a checkpoint of another run
        _remove_empty(made)
        print(f"align-train: {one_line(e)}", file=sys.stderr)
        return 1
    result["seconds"] = round(time.time() - t0, 1)
    if args.format == "json":
        print(json.dumps(result))
    else:
        parts = [
            f"{r['folder']} (decoder layer {r['layer']}, {r['steps']} steps, loss {r['loss_first']:.3f} -> "
            f"{r['loss_last']:.3f})"
            for r in result["layers"]
        ]
        print(
            f"trained {len(parts)} alignment layer(s) on {result['pairs']} pairs in {result['seconds']} s: "
            + "; ".join(parts),
            file=sys.stderr,
        )
    return 0


def _remove_empty(made: list[str]) -> None:
    """The folders this run created, removed again when it failed before writing anything in them but its lock."""
    for d in reversed(made):
        lock = os.path.join(d, "lock")
        if os.path.isfile(lock) and os.listdir(d) == ["lock"]:
            os.remove(lock)
        try:
            os.rmdir(d)
        except OSError:
            pass  # not empty: something worth keeping (the teacher's links, a checkpoint)


def _check_out(outs: list[tuple[str, str]], overwrite: bool) -> None:
    """FileExistsError when a folder holds a finished layer and --overwrite is not given; a pair stored half (a run
    stopped between storing the two layers) says so."""
    from ..extraction.alignment_layer import CONFIG

    done = [f for f, _ in outs if os.path.isfile(os.path.join(f, CONFIG))]
    if not done or overwrite:
        return
    rest = [f for f, _ in outs if f not in done and os.path.isfile(os.path.join(f, "train", "checkpoint_last.pt"))]
    if rest:
        raise FileExistsError(
            f"{done[0]}: a trained alignment layer is there but not yet {rest[0]}'s (a run stopped between storing "
            "the two); --overwrite resumes it and stores both"
        )
    raise FileExistsError(f"{done[0]}: a trained alignment layer is already there; --overwrite replaces it")


if __name__ == "__main__":
    sys.exit(main())
