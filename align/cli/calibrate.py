"""align-calibrate: fit link probabilities and a sentence score for one setting of one model on gold sentences.

``align-calibrate --model MODEL -t NAME --method norm --layer 0 --shift awi -o cal.json [--fit-on odd]``
runs the model over a gold set's sentence pairs (a named test set, or ``--input PAIRS --gold GOLD``),
fits :mod:`align.confidence.calibration` on the chosen sentences (all, or the odd or even lines: the
others are then held out and the expected calibration error is measured on them too), and writes
the calibration as JSON, keyed by the model's digest and the setting. ``align-extract --calibration
cal.json`` then writes each link's probability and each pair's score. Exit status: 0 ok, 1 bad
input (a missing or changed test set, a gold that does not fit the text, too few links), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import __version__
from ..confidence import noise
from ..confidence.calibration import (
    FOLDS,
    CalibrationError,
    ScoredPair,
    fit_calibration,
    fold_indices,
    gold_cells,
    write_calibration,
)
from ..confidence.sentence import DEFAULT_SENTENCE_MODEL, SENTENCE_MODELS
from ..extraction.calibrated import calibration_setting, model_reading
from ..extraction.loading import (
    LOADERS,
    RunError,
    attach_layer,
    check_language_flags,
    check_pair,
    check_reverse,
    check_same_preprocessing,
    framework_of,
    load_aligner,
    one_line as _one_line,
)
from ..gold import testsets
from ..io.console import console_main
from ..io.errors import AlignmentFormatError
from ..io.formats import FORMATS, read_alignments
from ..io.text import check_links_in_range, read_text_pairs
from ..links.alignments import Alignments
from ..spec.signature import identity_fields
from .common import empty_flag, number_in, quiet_frameworks as _quiet, run_naming_extras


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="align-calibrate",
        description=__doc__.split("\n\n")[0].splitlines()[0],
        epilog="Exit status: 0 ok, 1 bad input or model, 2 usage.",
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    ap.add_argument("--model", required=True, help="as align-extract's --model")
    ap.add_argument(
        "--reverse-model",
        help="a model of the other direction (target to source): the calibration "
        "reads both models' scores of each cell (bidirectional; align-extract then needs the same "
        "--reverse-model)",
    )
    ap.add_argument("-t", "--test-set", metavar="NAME", help="a named gold test set (align-eval --list)")
    ap.add_argument("-l", "--langs", metavar="SRC-TGT", help="with -t: the model's direction (default the set's)")
    ap.add_argument("--testsets-dir", metavar="DIR", help="with -t: folder of the sets that are not shipped")
    ap.add_argument("--input", help="'source ||| target' pairs (instead of -t), with --gold")
    ap.add_argument("--gold", help="gold alignment of --input (talp by default)")
    ap.add_argument("--gold-format", choices=FORMATS, default="talp")
    ap.add_argument("--reverse-gold", action="store_true", help="the gold file is target first")
    ap.add_argument("--method", default="norm", help="the attribution method (default norm)")
    ap.add_argument("--layer", type=int, required=True, help="decoder layer, 0-based")
    ap.add_argument("--shift", default="awi", help="awi or awo (default awi)")
    ap.add_argument(
        "--fit-on",
        choices=FOLDS,
        default="all",
        help="which gold sentences to fit on: all, or the odd "
        "(1st, 3rd, ...) or even lines, the others held out and measured (default all)",
    )
    ap.add_argument("-o", "--out", required=True, help="the calibration file to write (JSON)")
    ap.add_argument("--batch-size", type=number_in(int, 1), default=32)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--framework", choices=list(LOADERS))
    ap.add_argument("--src-lang", help="source language code of multilingual tokenizers (NLLB: eng_Latn)")
    ap.add_argument("--tgt-lang", help="target language code (NLLB: fra_Latn); the reverse model gets them swapped")
    ap.add_argument(
        "--lowercase",
        action="store_true",
        help="lowercase the text for the models, as align-extract's --lowercase (the calibration records it)",
    )
    _add_sentence_args(ap)
    ap.add_argument(
        "--alignment-layer",
        metavar="DIR",
        help="with --method learned: the model's trained alignment layer (default MODEL/alignment_layer/)",
    )
    ap.add_argument(
        "--reverse-alignment-layer",
        metavar="DIR",
        help="with --method learned: the reverse model's (default REVERSE_MODEL/alignment_layer/)",
    )
    ap.add_argument("--format", choices=("text", "json"), default="text", help="the summary's format")
    ap.add_argument("--progress", choices=("auto", "on", "off"), default="auto", help="a progress bar on stderr")
    return ap


def _add_sentence_args(ap: argparse.ArgumentParser) -> None:
    """The flags of the sentence score's fit: its pairs, its model, the noise's seed and third language."""
    ap.add_argument("--seed", type=int, default=1, help="seed of the noisy pairs (the sentence model's negatives)")
    ap.add_argument(
        "--sentence-pairs",
        metavar="PAIRS",
        help="'source ||| target' pairs the sentence score is fitted on, with noisy copies of them, instead of "
        "the gold sentences: pairs like those it will score and that the model did not train on (a held-out "
        "slice of its corpus); a model that saw the gold sentences in training finds them likelier than any "
        "new pair, and a score fitted on them calls new pairs noise",
    )
    ap.add_argument(
        "--sentence-model",
        choices=sorted(SENTENCE_MODELS),
        default=DEFAULT_SENTENCE_MODEL,
        help="the sentence score: "
        + "; ".join(
            f"{name}{' (the default)' if name == DEFAULT_SENTENCE_MODEL else ''}: {m.description}"
            for name, m in SENTENCE_MODELS.items()
        )  # fmt: skip
        + "; docs/guides/confidence.md",
    )
    ap.add_argument(
        "--third-language",
        metavar="FILE",
        help="sentences of a language that is neither side's, one per line, words split by spaces: the "
        "'wrong-language' noise (a target in that language); without it that kind is left out",
    )


def read_gold_pairs(args) -> tuple[list, Alignments, str, tuple[str, str] | None]:
    """The sentence pairs, the gold, a name for them (``-t``'s signature, or the files) and their languages
    (``-t``'s, in -l's direction; None for files)."""
    if args.test_set:
        ts = testsets.load(args.test_set, args.langs, args.testsets_dir)
        return list(zip(ts.src, ts.tgt)), ts.gold, ts.signature(), ts.langs
    pairs = read_text_pairs(args.input)
    gold = read_alignments(args.gold, args.gold_format, reverse=args.reverse_gold)
    check_links_in_range(gold, [len(s) for s, _ in pairs], [len(t) for _, t in pairs], args.gold, args.input)
    return pairs, gold, f"{args.gold} / {args.input}", None


def read_third_language(path: str) -> list[list[str]]:
    """Sentences of a third language, one per line, split at spaces; ValueError naming the file and the line of
    an empty one."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            words = line.split()
            if not words:
                raise ValueError(f"{path}:{n}: an empty line; expected a sentence (--third-language)")
            out.append(words)
    if not out:
        raise ValueError(f"{path}: no sentence; expected one per line (--third-language)")
    return out


def read_sentence_pairs(path: str) -> list[tuple[list[str], list[str]]]:
    """The ``--sentence-pairs`` file: 'source ||| target' lines, both sides words; ValueError naming the file and
    the line of a side without words (the translations the noise is made from and the score fitted on)."""
    pairs = read_text_pairs(path)
    for n, (s, t) in enumerate(pairs, 1):
        if not s or not t:
            side = "source" if not s else "target"
            raise ValueError(f"{path}:{n}: an empty {side}; expected a translation with words on both sides "
                             "(--sentence-pairs)")  # fmt: skip
    if not pairs:
        raise ValueError(f"{path}: no pair; expected 'source ||| target' lines (--sentence-pairs)")
    return pairs


@console_main("align-calibrate")
def main(argv: Sequence[str] | None = None) -> int:
    """align-calibrate: see the module docstring (a missing extra: one line naming it, exit 2)."""
    return run_naming_extras("align-calibrate", _main, argv)


def _print_summary(args: argparse.Namespace, name: str, cal: Any, fitted: int, held: int, t0: float) -> None:
    """The run's summary: one line, or JSON with --format json."""
    summary = {
        "out": args.out,
        "setting": name,
        "fitted_on": cal.fitted_on,
        "measured": cal.measured,
        "seconds": round(time.time() - t0, 1),
    }
    if args.format == "json":
        print(json.dumps(summary))
        return
    held_text = f"; held out {held}: ECE {cal.measured['ece_held_out']:.4f}" if held else ""
    print(
        f"calibrated {name} of {args.model} on {fitted} sentences ({cal.fitted_on['gold_links']} gold links "
        f"in {cal.fitted_on['cells']} cells): ECE {cal.measured['ece_fitted']:.4f}{held_text} -> {args.out}"
    )


def _load_models(args: argparse.Namespace, langs: tuple[str, str] | None) -> tuple[Any, Any]:
    """The model and (with --reverse-model) the reverse model, checked against each other and against the gold's
    languages ``langs`` (when known); RunError naming the model that failed or does not fit."""
    import torch

    fw = args.framework or framework_of(args.model)
    try:
        aligner = load_aligner(
            args.model,
            fw,
            device=args.device,
            dtype=torch.float32,
            **({"src_lang": args.src_lang, "tgt_lang": args.tgt_lang} if fw == "hf" else {}),
        )
    except Exception as e:  # a framework's own error types too: one line
        raise RunError(f"{args.model}: {_one_line(e)}") from None
    reverse = None
    if args.reverse_model:
        try:
            rfw = framework_of(args.reverse_model)
            reverse = load_aligner(
                args.reverse_model,
                rfw,
                device=args.device,
                dtype=torch.float32,
                **({"src_lang": args.tgt_lang, "tgt_lang": args.src_lang} if rfw == "hf" else {}),
            )
        except Exception as e:
            raise RunError(f"{args.reverse_model}: {_one_line(e)}") from None
    check_language_flags(aligner, args.src_lang, args.tgt_lang, args.model)
    if args.lowercase:
        aligner.lowercase = True
    if reverse is not None:
        check_language_flags(reverse, args.tgt_lang, args.src_lang, args.reverse_model)
        if args.lowercase:
            reverse.lowercase = True
    unchecked = []  # what could not be checked (a model that declares no languages): said, as align-extract says it
    named = f"test set {args.test_set} ({langs[0]}-{langs[1]})" if langs is not None else ""
    if langs is not None and not check_pair(aligner, langs, named, args.model):
        unchecked.append(f"{args.model}: its direction could not be checked against {named}")
    if reverse is not None:  # against the forward model first: its message is the one that says what is wrong
        if not check_reverse(aligner, reverse, args.reverse_model):
            unchecked.append(f"{args.model} and {args.reverse_model}: their directions could not be checked against "
                             "each other")  # fmt: skip
        check_same_preprocessing(aligner, reverse, args.reverse_model, args.model)
        if langs is not None and not check_pair(
            reverse, (langs[1], langs[0]), f"{named} turned round", f"--reverse-model {args.reverse_model}"
        ):
            unchecked.append(f"{args.reverse_model}: its direction could not be checked against {named} turned round")
    if unchecked:
        print(f"align-calibrate: note: {'; '.join(unchecked)}", file=sys.stderr)
    if args.method == "learned":  # the layer each model trained for itself, checked against it
        attach_layer(aligner, args.model, args.alignment_layer, "")
        if reverse is not None:
            attach_layer(
                reverse, args.reverse_model, args.reverse_alignment_layer, f"--reverse-model {args.reverse_model}: "
            )
    return aligner, reverse


def _parse(ap: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The flags, checked as far as they can be without the gold or a model (usage errors exit 2)."""
    args = ap.parse_args(argv)
    empty = empty_flag(ap, vars(args))
    if empty:
        ap.error(f"{empty} is empty; give a value or leave the flag out")
    if (
        bool(args.test_set) == bool(args.input or args.gold)
        or (args.input is None) != (args.gold is None)
        and not args.test_set
    ):
        ap.error("give -t NAME, or --input PAIRS with --gold GOLD")
    if not args.test_set and (args.langs or args.testsets_dir):
        ap.error("-l and --testsets-dir apply to -t NAME")
    if args.reverse_alignment_layer and not args.reverse_model:
        ap.error("--reverse-alignment-layer needs --reverse-model (it is the reverse model's layer)")
    return args


def _main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    args = _parse(ap, argv)
    t0 = time.time()
    _quiet()
    try:
        pairs, gold, source, langs = read_gold_pairs(args)
        # every input file read before any model loads: a bad line costs no model time
        third = read_third_language(args.third_language) if args.third_language else []
        spairs = read_sentence_pairs(args.sentence_pairs) if args.sentence_pairs else None
    except testsets.UnknownTestSetError as e:
        ap.error(str(e))
    except (AlignmentFormatError, ValueError, OSError) as e:
        print(f"align-calibrate: {_one_line(e)}", file=sys.stderr)
        return 1
    try:
        aligner, reverse = _load_models(args, langs)
    except RunError as e:
        print(f"align-calibrate: {e}", file=sys.stderr)
        return 1
    try:
        which = args.model
        spec = aligner.spec([args.method], [args.layer], [args.shift])
        which = f"--reverse-model {args.reverse_model}"
        rspec = reverse.spec([args.method], [args.layer], [args.shift]) if reverse else None
    except ValueError as e:
        ap.error(f"{which}: {e}")  # a layer or method this model lacks: the model is named
    from ..extraction.direction import turned_round

    # the files' direction asked of the model (a named set's was checked against the model's languages): a
    # calibration fitted on pairs turned round would misjudge every pair of the right direction
    for path, given in ((args.input, None if args.test_set else pairs), (args.sentence_pairs, spairs)):
        why = turned_round(aligner, given, args.batch_size) if given else None
        if why:
            print(f"align-calibrate: {path}: {why}", file=sys.stderr)
            return 1
    name = aligner.settings(spec)[0][0]
    fit, held = fold_indices(len(pairs), args.fit_on)
    models = _Models(aligner, spec, reverse, rspec, name, args.batch_size, _bar(args, pairs, spairs, third))
    try:
        cal, mats, cells = _fit(args, models, pairs, gold, source, fit, spairs, third)
        if models.bar is not None:  # a noisy copy equal to its pair is not scored: the count was an estimate
            models.bar.total = models.bar.n
    except (ValueError, OSError) as e:  # CalibrationError (too few links), a word-map or length error: one line
        print(f"align-calibrate: {_one_line(e)}", file=sys.stderr)
        return 1
    finally:
        if models.bar is not None:
            models.bar.close()
    from ..confidence.ece import expected_calibration_error

    def ece(ks: list[int]) -> float:
        p = np.concatenate([cal.probabilities(*mats[k]).ravel() for k in ks])
        return expected_calibration_error(p, np.concatenate([cells[k].ravel() for k in ks]))

    cal.measured = {"ece_fitted": ece(fit)}
    if held:
        cal.measured.update(ece_held_out=ece(held), held_out_sentences=len(held))
    try:
        write_calibration(args.out, cal)
    except OSError as e:
        print(f"align-calibrate: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 1
    except CalibrationError as e:  # a fit outside the file's bounds: not written, as align-extract would refuse it
        print(f"align-calibrate: {_one_line(e)}; not written", file=sys.stderr)
        return 1
    _print_summary(args, name, cal, len(fit), len(held), t0)
    return 0


def _noise_kinds(third: list[list[str]]) -> list[str]:
    """The kinds of noise the sentence score is fitted against: every one, but those that need a third language
    without ``--third-language``."""
    return [k for k, kind in noise.KINDS.items() if third or "third-language" not in kind.needs]


def _bar(args: argparse.Namespace, pairs: list, spairs: list | None, third: list) -> Any:
    """A progress bar over the pairs the models score (the gold's, the sentence pairs', their noisy copies; each
    once per model), or None (--progress off, or auto and stderr not a terminal)."""
    if not (args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty())):
        return None
    from tqdm import tqdm

    kinds = _noise_kinds(third)
    base = spairs if spairs is not None else pairs  # the noisy copies are made of these (about one per kind)
    per_model = len(pairs) + (len(spairs) if spairs is not None else 0) + len(base) * len(kinds)
    total = per_model * (2 if args.reverse_model else 1)
    return tqdm(total=total, desc="scoring pairs", unit="pair", file=sys.stderr, dynamic_ncols=True)


@dataclass(frozen=True)
class _Models:
    """The model, its spec, the reverse model and its spec (or None), the setting's file name, the batch size."""

    aligner: Any
    spec: Any
    reverse: Any
    rspec: Any
    name: str
    batch_size: int
    bar: Any = None  # a tqdm bar counting the pairs each model scored (--progress), or None

    def score(self, ps: Sequence, names: Sequence[str], truncate: bool = False) -> list[ScoredPair]:
        """Each pair as the model (and the reverse model, the pair turned round) scored it; ``names``: each pair's
        name in errors (``file:line``); ``truncate``: a side too long for a model loses words at its end (noisy
        copies: an appended one may outgrow the positions)."""
        from ..extraction.aligner import score_matrices  # torch: --help and --version work without it
        from ..extraction.run import fit_shape

        bs, tick = self.batch_size, (self.bar.update if self.bar is not None else None)
        fwd = score_matrices(self.aligner, self.spec, self.name, ps, bs, True, truncate, tick, names)
        turned = [(t, s) for s, t in ps]
        rev: list[tuple[np.ndarray, ...] | None] = [None] * len(fwd)
        if self.reverse is not None:
            rnames = [f"{n} (turned round for --reverse-model)" for n in names]
            rev = list(score_matrices(self.reverse, self.rspec, self.name, turned, bs, True, truncate, tick, rnames))
        out = []
        for f, r, (s, t) in zip(fwd, rev, ps):
            tl, sl = f[0].shape  # the words the forward model kept (all of them unless truncated)
            m = f[:2] + (fit_shape(r[0], (sl, tl)), fit_shape(r[1], (sl,))) if r is not None else f[:2]
            out.append(ScoredPair(m, list(s)[:sl], list(t)[:tl], f[2], r[2] if r is not None else None))
        return out


def _fit(
    args: argparse.Namespace, models: _Models, pairs: list, gold: Alignments, source: str, fit: list[int],
    spairs: list | None, third: list[list[str]],
) -> tuple[Any, list, list]:  # fmt: skip
    """The calibration (cells on the gold sentences ``fit``; the sentence score on ``spairs``, or else on those
    sentences, against noisy copies of every kind), every gold sentence's matrices and gold cells."""
    kinds = _noise_kinds(third)
    where = f"test set {args.test_set}" if args.test_set else args.input
    names = [f"{where}:{k + 1}" for k in range(len(pairs))]  # errors name the file (or set) and line
    scored = models.score(pairs, names)
    mats = [p.matrices for p in scored]
    if spairs is not None:
        fit_pairs = [(list(s), list(t)) for s, t in spairs]
        fit_names = [f"{args.sentence_pairs}:{k + 1}" for k in range(len(spairs))]
        positives = models.score(fit_pairs, fit_names)
    else:
        fit_pairs = [(list(s), list(t)) for s, t in (pairs[k] for k in fit)]
        fit_names = [names[k] for k in fit]
        positives = [scored[k] for k in fit]
    negatives, negative_kinds = [], []
    # a pair with an empty side is no translation to spoil
    kept = [(n, p) for n, p in zip(fit_names, fit_pairs) if p[0] and p[1]]
    sources = [p for _, p in kept]
    for kind in kinds:  # a noisy copy equal to its pair (a one-word side cannot be cut) is not noise
        made = zip(noise.make(sources, kind, args.seed, third), kept)
        noisy = [(f"the {kind} copy of {n}", p) for p, (n, q) in made if p != q]
        negatives += models.score([p for _, p in noisy], [n for n, _ in noisy], truncate=True) if noisy else []
        negative_kinds += [kind] * len(noisy)
    cells = [gold_cells(gold, k, *mats[k][0].shape) for k in range(len(pairs))]
    setting = {**calibration_setting(models.spec, args.method, args.layer, args.shift), **model_reading(models.aligner)}
    if models.reverse is not None:
        setting["reverse_model"] = identity_fields(models.reverse.identity())
    if args.method == "learned":  # the trained layers the probabilities read (retrained: another calibration)
        layers = [models.aligner] + ([models.reverse] if models.reverse is not None else [])
        setting["alignment_layer"] = [a.alignment_layer.weights_sha256 for a in layers]
    fitted_on: dict[str, Any] = {"gold": source, "fold": args.fit_on, "seed": args.seed, "noise": kinds,
                                 "sentence_model": args.sentence_model}  # fmt: skip
    if spairs is not None:
        fitted_on["sentence_pairs"] = f"{args.sentence_pairs} ({len(fit_pairs)} pairs)"
    sentence_model = SENTENCE_MODELS[args.sentence_model]
    cal = fit_calibration(
        [mats[k] for k in fit],
        [cells[k] for k in fit],
        negatives,
        identity_fields(models.aligner.identity()),
        setting,
        fitted_on,
        positives=positives,
        features=sentence_model.features(models.reverse is not None),
        negative_kinds=negative_kinds if sentence_model.per_kind else None,
    )
    return cal, mats, cells


if __name__ == "__main__":
    sys.exit(main())
