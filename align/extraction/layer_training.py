"""The ``align-train`` run: the models' own combined alignments of a corpus (the teacher), then one alignment
layer per frozen model trained to reproduce them (:mod:`align.extraction.train_layer`), checkpointed, resumed, and
stored beside each model (:mod:`align.extraction.alignment_layer`). The command (:mod:`align.cli.train`) parses
its flags into :class:`TrainOptions` and calls :func:`train_layers`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from .. import __version__

TEACHER_COMBINE = "gmean:threshold"
"""The combination of the teacher's two directions: align-extract's soft default (chosen on held-out RWTH halves,
benchmarks/results/bidirectional_rwth.md)."""


@dataclass(frozen=True)
class TrainOptions:
    """What an ``align-train`` run is asked: the models and how they read (as ``align-extract`` takes them), the
    corpus, the teacher, and the training's settings."""

    model: str
    input: str
    reverse_model: str | None = None
    teacher: str | None = None
    teacher_links: str | None = None
    combine: str = TEACHER_COMBINE
    layer: int | None = None
    epochs: int = 1
    lr: float = 1e-3
    batch_size: int = 32
    seed: int = 1
    checkpoint_every: int = 500
    overwrite: bool = False
    truncate: bool = False
    device: str = "cpu"
    lowercase: bool = False
    src_lang: str | None = None
    tgt_lang: str | None = None
    framework: str | None = None
    trust_checkpoint: bool = False
    progress: str = "auto"

    @classmethod
    def of(cls, flags: Any) -> TrainOptions:
        """The options of parsed command-line ``flags`` (an argparse namespace with these attributes, and more)."""
        return cls(**{f.name: getattr(flags, f.name) for f in dataclasses.fields(cls)})


def teacher_blend(n_layers: int) -> str:
    """The teacher setting in each direction: the blend of the shipped defaults (a layer-0 AWI setting and the last
    layer's attention AWO, chosen on held-out halves, benchmarks/results/bidirectional_*.md)."""
    from ..spec.setting import Blend, Setting

    return Blend((Setting("alti", "awi", 0), Setting("attn", "awo", n_layers - 1))).name


def read_corpus(path: str) -> tuple[list[tuple[list[str], list[str]]], dict[str, Any]]:
    """The pairs of the corpus (InputError ``file:line`` on a bad one) and what a layer records of it."""
    from ..io.inputs import PairReader

    reader = PairReader(path)
    pairs: list[tuple[list[str], list[str]]] = [(s, t or []) for _, s, t in reader]  # a target always
    if not pairs:
        raise ValueError(f"{path}: no pairs; expected 'source ||| target' lines")
    return pairs, {"file": os.path.basename(path), "sha256": reader.sha256, "pairs": len(pairs)}


def _teacher_flags(opts: TrainOptions, dest: str | None, blend: str) -> Any:
    from ..spec.setting import Blend, parse
    from .plan import Flags

    named = parse(blend)  # the flags name one setting (a blend's first); --blend brings the blend whole
    first = named.parts[0] if isinstance(named, Blend) else named
    return Flags.for_models_of(
        opts,
        input=opts.input,
        out=dest,
        overwrite=True,
        methods=first.method,
        layers=str(first.layer),
        shifts=first.shift,
        blend=named.name if isinstance(named, Blend) else None,
        combine=opts.combine if opts.reverse_model else None,
    )


def train_layers(
    opts: TrainOptions,
    outs: list[tuple[str, str]],
    pairs: list[tuple[list[str], list[str]]],
    corpus: dict[str, Any],
    links: list[list[tuple[int, int]]] | None,
) -> dict[str, Any]:
    """Align the corpus (unless ``links``, --teacher-links, are given), train each model's layer, then store them
    all (none is stored before every one is trained: a run interrupted in the second resumes, flags unchanged)."""
    from ..attribution.methods import METHODS
    from ..spec.signature import model_key
    from .alignment_layer import model_fields, save
    from .loading import UsageError
    from .plan import check_flags
    from .prepare import build_plan

    with ExitStack() as stack:
        # the models loaded and checked against each other as align-extract does (nothing is written here)
        probe = _teacher_flags(opts, os.path.join(outs[0][0], "train", "teacher"), "attn-awi-layer0")
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
        layer = n_layers // 2 if opts.layer is None else opts.layer
        if not 0 <= layer < n_layers:
            raise UsageError(f"--layer {layer}: {opts.model}'s decoder has layers 0..{n_layers - 1}")
        if reverse is not None and not 0 <= layer < reverse.n_layers:
            raise UsageError(
                f"--layer {layer}: the reverse model {opts.reverse_model}'s decoder has layers 0..{reverse.n_layers - 1}"
            )
        blend = opts.teacher or teacher_blend(min(n_layers, reverse.n_layers if reverse else n_layers))
        todo = [(aligner, outs[0][0], False)] + ([(reverse, outs[1][0], True)] if reverse is not None else [])
        # every pair through both models' tokenizers first: a line they cannot read (a word SentencePiece leaves
        # no piece for, a side too long without --truncate) is found before the teacher's long pass, not after
        encoded = [_encode_all(opts, model, pairs, turned) for model, _, turned in todo]
        fields = [model_fields(model) for model, _, _ in todo]  # the tokenizer probed once per model
        if links is not None:
            teacher: dict[str, Any] = {"file": os.path.basename(opts.teacher_links or "")}
        else:
            # what makes the teacher's links: each model (not how it was named), its languages and tokenizer
            models = [{**model_key(f["identity"]), "languages": f["languages"],
                       "tokenizer_sha256": f["tokenizer_sha256"]} for f in fields]  # fmt: skip
            loaded = (aligner, reverse)
            links, teacher = _run_teacher(opts, outs[0][0], blend, corpus, models + [aligner.preprocessing()], loaded)
            if len(links) != len(pairs):
                raise ValueError(f"the teacher's links have {len(links)} lines for {len(pairs)} pairs")
        teacher["sha256"] = hashlib.sha256(json.dumps(links).encode()).hexdigest()
        # every folder's checkpoint checked before any layer trains: one of another run is refused first
        ready = []
        for (model, folder, turned), codes, f in zip(todo, encoded, fields):
            model_links = [[(b, a) for a, b in ls] for ls in links] if turned else links
            ready.append(_prepare_one(opts, model, f, folder, layer, codes, model_links, corpus, teacher))
        trained = [(r.folder, *_train_one(opts, r)) for r in ready]
        for folder, head, config, _ in trained:
            save(folder, head, config)
    return {"pairs": len(pairs), "layers": [t[3] for t in trained], "teacher": teacher, "version": __version__}


def read_teacher(
    path: str, pairs: list[tuple[list[str], list[str]]], corpus_sha256: str | None = None
) -> list[list[tuple[int, int]]]:
    """The --teacher-links file: one line per pair, every link inside its pair's words (file:line otherwise); and,
    where a run's ``manifest.json`` lies beside it, a run of this corpus (``corpus_sha256``: its lines' digest)."""
    from ..io.formats import read_alignments
    from ..io.inputs import InputError
    from ..io.manifest import recorded_input

    recorded = recorded_input(path).get("sha256")
    if corpus_sha256 is not None and isinstance(recorded, str) and recorded != corpus_sha256:
        raise InputError(
            path, None, f"aligned another input (sha256 {recorded[:12]} by the manifest.json beside it); the corpus "
            f"has sha256 {corpus_sha256[:12]}: give the links of this corpus",
        )  # fmt: skip
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
    opts: TrainOptions,
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
    from ..io.atomic import write_text_atomic
    from ..io.formats import read_alignments
    from ..spec.setting import combined_file
    from .plan import check_flags
    from .prepare import build_plan
    from .run import extract

    dest = os.path.join(folder, "train", "teacher")
    name = combined_file(blend + ".align", opts.combine)
    done = os.path.join(folder, "train", "teacher.json")
    want = {"corpus_sha256": corpus["sha256"], "blend": blend, "combine": opts.combine, "models": models,
            "truncate": opts.truncate}  # fmt: skip
    reuse = False
    if os.path.isfile(done):
        with open(done, encoding="utf-8") as f:
            had = json.load(f).get("want") or {}
        reuse = had == want and os.path.isfile(os.path.join(dest, name))
        other = any(had.get(k) != want[k] for k in ("corpus_sha256", "blend", "combine"))  # links surely differ
        if other and not opts.overwrite and os.path.isfile(os.path.join(folder, "train", "checkpoint_last.pt")):
            # refused before the long pass that would replace that run's teacher, not after it
            raise ValueError(
                f"{os.path.join(folder, 'train')}: a checkpoint of another training (its teacher was aligned from "
                "another corpus or with another teacher setting); give another --out, or --overwrite to start again"
            )
    if not reuse:
        print(
            f"align-train: aligning the corpus with both models ({blend}, {opts.combine}): the teacher", file=sys.stderr
        )
        flags = _teacher_flags(opts, dest, blend)
        with ExitStack() as stack:
            plan, _ = build_plan(flags, check_flags(flags, METHODS), stack, loaded)
            stats = extract(plan)
        write_text_atomic(done, json.dumps({"want": want, "signature": stats["signature"]}, indent=1) + "\n")
    links = [[(int(a), int(b)) for a, b in ls] for ls in read_alignments(os.path.join(dest, name)).to_lists()]
    return links, {"blend": blend, "combine": opts.combine}


def _encode_all(
    opts: TrainOptions, aligner: Any, pairs: Sequence[tuple[list[str], list[str]]], turned: bool
) -> list[tuple[Any, Any]]:
    """Each pair's (source, target) encoding by ``aligner`` (turned round for the reverse model); the first pair it
    cannot encode is an error naming the corpus file and line."""
    note = " (turned round for the reverse model: its source is the pair's target)" if turned else ""
    out = []
    for k, (s, t) in enumerate(pairs):
        a, b = (t, s) if turned else (s, t)
        out.append(aligner.encode_pair(a, b, k, f"{opts.input}:{k + 1}{note}", truncate=opts.truncate))
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
    opts: TrainOptions,
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
    from ..spec.signature import model_key
    from .train_layer import Example, load_checkpoint, n_steps, new_state, target_rows

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
    state = new_state(shape, sites[layer].cross.attn, opts.lr, device)
    training = {"epochs": opts.epochs, "lr": opts.lr, "batch_size": opts.batch_size, "seed": opts.seed,
                "optimizer": "adam", "loss": "cross-entropy to the teacher's rows (awi)"}  # fmt: skip
    key = {**fields, "identity": model_key(fields["identity"])}  # the model, however it was named
    fingerprint = hashlib.sha256(
        json.dumps([key, corpus["sha256"], teacher["sha256"], shape.__dict__, training], sort_keys=True).encode()
    ).hexdigest()
    total = n_steps(examples, opts.batch_size, opts.epochs)
    if total == 0:
        raise ValueError(f"{opts.input}: no pair has a teacher link the model can read; nothing to train on")
    resumed = load_checkpoint(folder, state, fingerprint, discard_other=opts.overwrite)
    return _Prepared(aligner, folder, layer, examples, state, fingerprint, fields, training, corpus, teacher,
                     truncated, resumed, total)  # fmt: skip


def _train_one(opts: TrainOptions, p: _Prepared) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Train one model's alignment layer: the head, the config to store with it, and its summary."""
    from .train_layer import train_head

    state = p.state
    model_name = os.path.basename(os.path.normpath(str(p.aligner.identity().get("path") or p.folder)))
    bar = _bar(opts, p.total, state.step, model_name)
    try:
        train_head(p.aligner, p.examples, p.folder, state, p.fingerprint, opts.epochs, opts.batch_size, opts.seed,
                   opts.checkpoint_every, bar)  # fmt: skip
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


def _bar(opts: TrainOptions, total: int, done: int, name: str) -> Any:
    show = opts.progress == "on" or (opts.progress == "auto" and sys.stderr.isatty())
    if not show:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, desc=f"training {name}'s alignment layer", unit="step")
