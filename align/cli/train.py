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
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..io.console import console_main
from .common import empty_flag, number_in, quiet_frameworks, run_naming_extras

TEACHER_COMBINE = "gmean:threshold"
"""The combination of the teacher's two directions: align-extract's soft default (chosen on held-out RWTH halves,
benchmarks/results/bidirectional_rwth.md)."""


def teacher_blend(n_layers: int) -> str:
    """The teacher setting in each direction: the blend of the shipped defaults (a layer-0 AWI setting and the last
    layer's attention AWO, chosen on held-out halves, benchmarks/results/bidirectional_*.md)."""
    return f"alti-awi-layer0+attn-awo-layer{n_layers - 1}"


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
    ap.add_argument("--teacher", help="the blend or setting the teacher uses in each direction "
                    "(default alti-awi-layer0+attn-awo-layerLAST)")  # fmt: skip
    ap.add_argument(
        "--combine",
        default=TEACHER_COMBINE,
        help=f"how the teacher combines the directions (default {TEACHER_COMBINE})",
    )
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
        pairs, corpus = _read_corpus(args.input)
        links = _read_teacher(args.teacher_links, pairs) if args.teacher_links else None
        with ExitStack() as stack:
            try:
                for folder, _ in outs:
                    new = [d for d in (folder, os.path.join(folder, "train")) if not os.path.isdir(d)]
                    stack.callback(lock_folder(folder).close)
                    made += new  # only once locked: a run that lost the lock must not remove the winner's folders
                result = _train(args, outs, pairs, corpus, links)
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


def _read_corpus(path: str) -> tuple[list[tuple[list[str], list[str]]], dict[str, Any]]:
    """The pairs of the corpus (InputError ``file:line`` on a bad one) and what a layer records of it."""
    from ..io.inputs import PairReader

    reader = PairReader(path)
    pairs: list[tuple[list[str], list[str]]] = [(s, t or []) for _, s, t in reader]  # a target always
    if not pairs:
        raise ValueError(f"{path}: no pairs; expected 'source ||| target' lines")
    return pairs, {"file": os.path.basename(path), "sha256": reader.sha256, "pairs": len(pairs)}


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


def _teacher_flags(args: argparse.Namespace, dest: str | None, blend: str) -> Any:
    from ..extraction.plan import Flags
    from ..spec.setting import Blend

    first = Blend.parse(blend).parts[0] if "+" in blend else None
    method, layer, shift = (first.method, first.layer, first.shift) if first else _setting_of(blend)
    return Flags(
        model=args.model,
        input=args.input,
        out=dest,
        overwrite=True,
        methods=method,
        layers=str(layer),
        shifts=shift,
        blend=blend if "+" in blend else None,
        reverse_model=args.reverse_model,
        combine=args.combine if args.reverse_model else None,
        batch_size=args.batch_size,
        device=args.device,
        truncate=args.truncate,
        lowercase=args.lowercase,
        src_lang=args.src_lang,
        tgt_lang=args.tgt_lang,
        framework=args.framework,
        trust_checkpoint=args.trust_checkpoint,
        progress=args.progress,
    )


def _setting_of(name: str) -> tuple[str, int, str]:
    from ..spec.setting import Setting

    s = Setting.parse(name)
    return s.method, s.layer, s.shift


def _train(
    args: argparse.Namespace,
    outs: list[tuple[str, str]],
    pairs: list[tuple[list[str], list[str]]],
    corpus: dict[str, Any],
    links: list[list[tuple[int, int]]] | None,
) -> dict[str, Any]:
    """Align the corpus (unless ``links``, --teacher-links, are given), train each model's layer, then store them
    all (none is stored before every one is trained: a run interrupted in the second resumes, flags unchanged)."""
    from ..attribution.methods import METHODS
    from ..extraction.alignment_layer import model_fields, save
    from ..extraction.loading import UsageError
    from ..extraction.plan import check_flags
    from ..extraction.prepare import build_plan
    from ..spec.signature import model_key

    with ExitStack() as stack:
        # the models loaded and checked against each other as align-extract does (nothing is written here)
        probe = _teacher_flags(args, os.path.join(outs[0][0], "train", "teacher"), "attn-awi-layer0")
        try:
            checked = check_flags(probe, METHODS)
        except ValueError as e:
            raise UsageError(str(e)) from None
        plan, notes = build_plan(probe, checked, stack)  # loads and checks the models (and the reverse one)
        for line in notes:
            print(f"align-train: {line}", file=sys.stderr)
        aligner = plan.aligner
        reverse = plan.reverse[0] if plan.reverse else None
        n_layers = aligner.n_layers
        layer = n_layers // 2 if args.layer is None else args.layer
        if not 0 <= layer < n_layers:
            raise UsageError(f"--layer {layer}: the decoder has layers 0..{n_layers - 1}")
        if reverse is not None and not 0 <= layer < reverse.n_layers:
            raise UsageError(f"--layer {layer}: the reverse model's decoder has layers 0..{reverse.n_layers - 1}")
        blend = args.teacher or teacher_blend(min(n_layers, reverse.n_layers if reverse else n_layers))
        todo = [(aligner, outs[0][0], False)] + ([(reverse, outs[1][0], True)] if reverse is not None else [])
        # every pair through both models' tokenizers first: a line they cannot read (a word SentencePiece leaves
        # no piece for, a side too long without --truncate) is found before the teacher's long pass, not after
        encoded = [_encode_all(args, model, pairs, turned) for model, _, turned in todo]
        fields = [model_fields(model) for model, _, _ in todo]  # the tokenizer probed once per model
        if links is not None:
            teacher: dict[str, Any] = {"file": os.path.basename(args.teacher_links)}
        else:
            # what makes the teacher's links: each model (not how it was named), its languages and tokenizer
            models = [{**model_key(f["identity"]), "languages": f["languages"],
                       "tokenizer_sha256": f["tokenizer_sha256"]} for f in fields]  # fmt: skip
            loaded = (aligner, reverse)
            links, teacher = _run_teacher(args, outs[0][0], blend, corpus, models + [aligner.preprocessing()], loaded)
            if len(links) != len(pairs):
                raise ValueError(f"the teacher's links have {len(links)} lines for {len(pairs)} pairs")
        teacher["sha256"] = hashlib.sha256(json.dumps(links).encode()).hexdigest()
        # every folder's checkpoint checked before any layer trains: one of another run is refused first
        ready = []
        for (model, folder, turned), codes, f in zip(todo, encoded, fields):
            model_links = [[(b, a) for a, b in ls] for ls in links] if turned else links
            ready.append(_prepare_one(args, model, f, folder, layer, codes, model_links, corpus, teacher))
        trained = [(r.folder, *_train_one(args, r)) for r in ready]
        for folder, head, config, _ in trained:
            save(folder, head, config)
    return {"pairs": len(pairs), "layers": [t[3] for t in trained], "teacher": teacher, "version": __version__}


def _read_teacher(path: str, pairs: list[tuple[list[str], list[str]]]) -> list[list[tuple[int, int]]]:
    """The --teacher-links file: one line per pair, every link inside its pair's words (file:line otherwise)."""
    from ..io.formats import read_alignments
    from ..io.inputs import InputError

    al = read_alignments(path)
    if len(al) != len(pairs):
        raise InputError(path, None, f"{len(al)} lines; expected {len(pairs)}, one per pair of the input")
    out = al.to_lists()
    for k, (ls, (s, t)) in enumerate(zip(out, pairs)):
        for a, b in ls:
            if a >= len(s) or b >= len(t):
                raise InputError(
                    path, k + 1, f"link {a}-{b} (0-based) but the pair has {len(s)} source and {len(t)} target words"
                )
    return [[(int(a), int(b)) for a, b in ls] for ls in out]


def _run_teacher(
    args: argparse.Namespace,
    folder: str,
    blend: str,
    corpus: dict[str, Any],
    models: list[Any],
    loaded: tuple[Any, Any],
) -> tuple[list[list[tuple[int, int]]], dict[str, Any]]:
    """The models' own combined links of the corpus (align-extract into ``folder/train/teacher``, with ``loaded``,
    the (aligner, reverse) already loaded), reused when an earlier run of the same corpus, models (``models``:
    their identities and preprocessing) and teacher finished them."""
    from ..attribution.methods import METHODS
    from ..extraction.plan import check_flags
    from ..extraction.prepare import build_plan
    from ..extraction.run import extract
    from ..io.atomic import write_text_atomic
    from ..io.formats import read_alignments
    from ..spec.setting import combined_file

    dest = os.path.join(folder, "train", "teacher")
    name = combined_file(blend + ".align", args.combine)
    done = os.path.join(folder, "train", "teacher.json")
    want = {"corpus_sha256": corpus["sha256"], "blend": blend, "combine": args.combine, "models": models,
            "truncate": args.truncate}  # fmt: skip
    reuse = False
    if os.path.isfile(done):
        with open(done, encoding="utf-8") as f:
            had = json.load(f).get("want") or {}
        reuse = had == want and os.path.isfile(os.path.join(dest, name))
        other = any(had.get(k) != want[k] for k in ("corpus_sha256", "blend", "combine"))  # links surely differ
        if other and not args.overwrite and os.path.isfile(os.path.join(folder, "train", "checkpoint_last.pt")):
            # refused before the long pass that would replace that run's teacher, not after it
            raise ValueError(
                f"{os.path.join(folder, 'train')}: a checkpoint of another training (its teacher was aligned from "
                "another corpus or with another teacher setting); give another --out, or --overwrite to start again"
            )
    if not reuse:
        print(
            f"align-train: aligning the corpus with both models ({blend}, {args.combine}): the teacher", file=sys.stderr
        )
        flags = _teacher_flags(args, dest, blend)
        with ExitStack() as stack:
            plan, _ = build_plan(flags, check_flags(flags, METHODS), stack, loaded)
            stats = extract(plan)
        write_text_atomic(done, json.dumps({"want": want, "signature": stats["signature"]}, indent=1) + "\n")
    links = [[(int(a), int(b)) for a, b in ls] for ls in read_alignments(os.path.join(dest, name)).to_lists()]
    return links, {"blend": blend, "combine": args.combine}


def _encode_all(
    args: argparse.Namespace, aligner: Any, pairs: Sequence[tuple[list[str], list[str]]], turned: bool
) -> list[tuple[Any, Any]]:
    """Each pair's (source, target) encoding by ``aligner`` (turned round for the reverse model); the first pair it
    cannot encode is an error naming the corpus file and line."""
    note = " (turned round for the reverse model: its source is the pair's target)" if turned else ""
    out = []
    for k, (s, t) in enumerate(pairs):
        a, b = (t, s) if turned else (s, t)
        out.append(aligner.encode_pair(a, b, k, f"{args.input}:{k + 1}{note}", truncate=args.truncate))
    return out


@dataclass
class _Prepared:
    """One model's layer, ready to train: its state (resumed when a checkpoint of the same run is there)."""

    aligner: Any
    folder: str
    layer: int
    examples: list[Any]
    state: Any
    fingerprint: str
    fields: dict[str, Any]
    training: dict[str, Any]
    corpus: dict[str, Any]
    teacher: dict[str, Any]
    truncated: int
    resumed: bool
    total: int  # the steps of the whole run (epochs x batches)


def _prepare_one(
    args: argparse.Namespace,
    aligner: Any,
    fields: dict[str, Any],
    folder: str,
    layer: int,
    encoded: Sequence[tuple[Any, Any]],
    links: Sequence[Sequence[tuple[int, int]]],
    corpus: dict[str, Any],
    teacher: dict[str, Any],
) -> _Prepared:
    """One model's examples and training state (``fields``: its :func:`model_fields`), resumed from ``folder``'s
    checkpoint of the same run (one of another run: ValueError, or with --overwrite a fresh start)."""
    from ..attribution.learned import HeadShape
    from ..extraction.train_layer import Example, load_checkpoint, n_steps, new_state, target_rows
    from ..spec.signature import model_key

    examples = []
    truncated = 0
    for (se, te), ls in zip(encoded, links):
        truncated += bool(se.dropped or te.dropped)
        rows, dist = target_rows(se, te, ls, "awi")
        examples.append(Example.of(se.ids, te.ids, rows, dist))
    sites = aligner.adapter.decoder_layers(aligner.model)
    dim = int(sites[layer].cross.attn.q_proj.weight.shape[1])
    shape = HeadShape(layer, dim, aligner.n_heads, "awi")
    device = next(aligner.model.parameters()).device
    state = new_state(shape, sites[layer].cross.attn, args.lr, device)
    training = {"epochs": args.epochs, "lr": args.lr, "batch_size": args.batch_size, "seed": args.seed,
                "optimizer": "adam", "loss": "cross-entropy to the teacher's rows (awi)"}  # fmt: skip
    key = {**fields, "identity": model_key(fields["identity"])}  # the model, however it was named
    fingerprint = hashlib.sha256(
        json.dumps([key, corpus["sha256"], teacher["sha256"], shape.__dict__, training], sort_keys=True).encode()
    ).hexdigest()
    total = n_steps(examples, args.batch_size, args.epochs)
    if total == 0:
        raise ValueError(f"{args.input}: no pair has a teacher link the model can read; nothing to train on")
    resumed = load_checkpoint(folder, state, fingerprint, discard_other=args.overwrite)
    return _Prepared(aligner, folder, layer, examples, state, fingerprint, fields, training, corpus, teacher,
                     truncated, resumed, total)  # fmt: skip


def _train_one(args: argparse.Namespace, p: _Prepared) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Train one model's alignment layer: the head, the config to store with it, and its summary."""
    from ..extraction.train_layer import train_head

    state = p.state
    model_name = os.path.basename(os.path.normpath(str(p.aligner.identity().get("path") or p.folder)))
    bar = _bar(args, p.total, state.step, model_name)
    try:
        train_head(p.aligner, p.examples, p.folder, state, p.fingerprint, args.epochs, args.batch_size, args.seed,
                   args.checkpoint_every, bar)  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    losses = state.losses or [(state.step, 0.0)]
    config = {
        "model": p.fields,
        "corpus": p.corpus,
        "teacher": p.teacher,
        "training": {**p.training, "steps": state.step, "truncated_pairs": p.truncated, "losses": losses},
        "trained_with": f"align-train {__version__}",
    }
    summary = {
        "folder": p.folder,
        "layer": p.layer,
        "steps": state.step,
        "resumed": p.resumed,
        "loss_first": losses[0][1],
        "loss_last": losses[-1][1],
    }
    return state.head, config, summary


def _bar(args: argparse.Namespace, total: int, done: int, name: str) -> Any:
    show = args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty())
    if not show:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, desc=f"training {name}'s alignment layer", unit="step")


if __name__ == "__main__":
    sys.exit(main())
