"""align-filter: keep the pairs of a corpus whose sentence score is high enough; every other line rejected, with its
score.

``align-filter PAIRS --model MODEL [--reverse-model REV] --calibration CAL (--min-score X | --keep-fraction F)
--out DIR`` scores every ``source ||| target`` pair as ``align-extract --sentence-scores`` does (the same pass
gives the alignments of the calibrated setting, kept in ``DIR/scored/``), then writes ``DIR/kept.txt`` (the
lines kept, byte for byte, in input order), ``DIR/rejected.tsv`` (``LINE<TAB>SCORE<TAB>line``) and
``DIR/filter.json`` (the rule, the counts, the scores' digest). Every input line is in exactly one of the two.

On a cluster, score as extraction runs: ``align-extract ... --calibration CAL --sentence-scores --shard K/N``
then ``align-merge``, and filter with ``align-filter PAIRS --scores DIR/merged/sentence_scores.tsv``.
Nothing appears in ``DIR`` until every line is written (one folder, renamed into place).
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
from ..confidence.filtering import KEPT, REJECTED, Rule, read_scores, split
from ..io.atomic import write_text_atomic
from ..io.console import console_main
from ..io.errors import AlignmentFormatError
from ..io.lines import display_name
from .common import empty_flag, number_in, quiet_frameworks, run_naming_extras


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="align-filter",
        description=__doc__.split("\n\n")[0].removeprefix("align-filter: "),
        epilog="Exit status: 0 ok, 1 bad input or model, 2 usage.",
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    ap.add_argument("input", help="'source ||| target' pairs, one per line (.gz, .xz, .zst read as such)")
    ap.add_argument("--out", required=True, help="the folder to write (kept.txt, rejected.tsv, filter.json)")
    ap.add_argument("--overwrite", action="store_true", help="replace an existing --out folder")
    rule = ap.add_mutually_exclusive_group(required=True)
    rule.add_argument("--min-score", type=number_in(float, 0, 1), help="keep the pairs of score >= this (0..1)")
    rule.add_argument(
        "--keep-fraction", type=number_in(float, 0, 1, low_open=True), help="keep the best share of the pairs (0..1]"
    )
    ap.add_argument("--scores", help="sentence_scores.tsv of align-extract --sentence-scores on this input")
    ap.add_argument("--model", help="score with this model (as align-extract's --model)")
    ap.add_argument("--reverse-model", help="and this model of the other direction (as align-extract's)")
    ap.add_argument("--calibration", help="the align-calibrate file whose sentence score is used")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32")
    ap.add_argument("--truncate", action="store_true", help="as align-extract's --truncate")
    ap.add_argument("--lowercase", action="store_true", help="as align-extract's --lowercase")
    ap.add_argument("--src-lang", help="as align-extract's (multilingual tokenizers: NLLB eng_Latn)")
    ap.add_argument("--tgt-lang", help="as align-extract's (NLLB fra_Latn)")
    ap.add_argument("--framework", choices=("fairseq", "hf"), help="as align-extract's")
    ap.add_argument("--trust-checkpoint", action="store_true", help="as align-extract's")
    ap.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    ap.add_argument("--format", choices=("text", "json"), default="text", help="the summary's format")
    return ap


def _score_with_model(args: argparse.Namespace, dest: str) -> str:
    """Run align-extract's plan with --sentence-scores into ``dest``; the scores file's path. UsageError or
    RunError (align.extraction.loading), or the run's own errors."""
    from ..attribution.methods import METHODS
    from ..extraction.plan import Flags, check_flags, read_run_calibration
    from ..extraction.prepare import build_plan
    from ..extraction.run import extract

    cal = read_run_calibration(args.calibration, METHODS)
    s = cal.setting
    flags = Flags.for_models_of(
        args,
        input=args.input,
        out=dest,
        methods=s["method"],
        layers=str(s["layer"]),
        shifts=s["shift"],
        heads=None if s["heads"] == "all" else ",".join(map(str, s["heads"])),
        level=s["level"],
        calibration=args.calibration,
        sentence_scores=True,
    )
    checked = check_flags(flags, METHODS)
    with ExitStack() as stack:
        plan, notes = build_plan(flags, checked, stack)
        for line in notes:
            print(f"align-filter: {line}", file=sys.stderr)
        extract(plan)  # build_plan checked the input's direction (sentence scores of a file turned round)
    return os.path.join(dest, "sentence_scores.tsv")


def _check_scored_input(scores_path: str, input_sha256: str, input_path: str) -> None:
    """AlignmentFormatError when the run that wrote the scores (its ``manifest.json`` beside them, where there is
    one) read another input than ``input_path`` (its lines' sha256): scores of another corpus of as many lines
    would otherwise split this one by them."""
    from ..io.manifest import MANIFEST, recorded_input

    manifest = os.path.join(os.path.dirname(os.path.abspath(scores_path)), MANIFEST)
    recorded = recorded_input(scores_path).get("sha256")  # none: nothing to compare
    if isinstance(recorded, str) and recorded != input_sha256:
        raise AlignmentFormatError(
            display_name(scores_path), None, f"scored on another input (sha256 {recorded[:12]} in {manifest}); "
            f"{input_path} has sha256 {input_sha256[:12]}: give the scores of this input",
        )  # fmt: skip


def _main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    empty = empty_flag(ap, vars(args))
    if empty:
        ap.error(f"{empty} is empty; give a value or leave the flag out")
    if bool(args.scores) == bool(args.model):
        ap.error("give --scores FILE, or --model with --calibration (to score the pairs here)")
    if args.model and not args.calibration:
        ap.error("--model needs --calibration (the sentence score is the calibration's)")
    if args.model and (args.input == "-" or (os.path.exists(args.input) and not os.path.isfile(args.input))):
        ap.error("with --model the input is read twice (scored, then split): give a file, not standard input or a pipe")
    if args.input == "-" and args.scores == "-":
        ap.error("the input and --scores are both standard input; give one of them as a file")
    if args.scores and (args.reverse_model or args.calibration):
        ap.error("--reverse-model and --calibration go with --model; --scores are already computed")
    t0 = time.time()
    rule = Rule(args.min_score, args.keep_fraction)
    from ..extraction.loading import RunError, UsageError, one_line
    from ..extraction.outputs import OutputExistsError, check_destination, publishing

    try:
        check_destination(args.out, args.overwrite, inputs=(args.input, args.scores or ""))
        with publishing(args.out, args.overwrite) as tmp:
            scores_path = args.scores
            if args.model:
                quiet_frameworks()
                scores_path = _score_with_model(args, os.path.join(tmp, "scored"))
            scores, scores_sha256 = read_scores(scores_path)
            mask = rule.keep(scores)
            counts = split(args.input, scores, mask, tmp, display_name(scores_path))
            _check_scored_input(scores_path, counts.pop("input_sha256"), args.input)
            summary = {
                "input": args.input,
                "scores": args.scores or "scored/sentence_scores.tsv",
                "scores_sha256": scores_sha256,
                "rule": {"min_score": rule.min_score, "keep_fraction": rule.keep_fraction},
                **counts,
                "lowest_kept": float(scores[mask].min()) if counts["kept"] else None,
                "version": __version__,
            }
            write_text_atomic(os.path.join(tmp, "filter.json"), json.dumps(summary, indent=1) + "\n")
            # what --overwrite may replace: the files this command wrote (scored/ has its own manifest)
            manifest = {"tool": "align-filter", "files": [KEPT, REJECTED, "filter.json"]}
            write_text_atomic(os.path.join(tmp, "manifest.json"), json.dumps(manifest, indent=1) + "\n")
    except UsageError as e:
        ap.error(str(e))
    except (RunError, OutputExistsError, AlignmentFormatError, ValueError, OSError) as e:
        print(f"align-filter: {one_line(e)}; nothing written", file=sys.stderr)
        return 1
    summary["seconds"] = round(time.time() - t0, 1)
    if args.format == "json":
        print(json.dumps(summary))
    else:
        print(
            f"kept {counts['kept']} of {counts['lines']} pairs ({KEPT}), rejected {counts['rejected']} "
            f"({REJECTED}, with their scores) -> {args.out}"
        )
    return 0


@console_main("align-filter")
def main(argv: Sequence[str] | None = None) -> int:
    """align-filter: see the module docstring (a missing extra: one line naming it, exit 2)."""
    return run_naming_extras("align-filter", _main, argv)


if __name__ == "__main__":
    sys.exit(main())
