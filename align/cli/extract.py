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
import json
import sys
import time
from contextlib import ExitStack
from typing import Any

from .. import __version__
from ..extraction.extras import missing_module
from ..extraction.launch import LaunchError
from ..extraction.loading import LOADERS, RunError, UsageError, one_line
from ..extraction.outputs import OutputExistsError, check_destination, clean_stale
from ..extraction.plan import ExtractPlan, Flags, check_flags
from ..extraction.prepare import build_plan
from ..io.console import check_stdout_taken, console_main
from ..spec.alignspec import LEVELS, SPECIALS
from ..spec.setting import SHIFTS, base_name
from ..spec.signature import short
from .common import empty_flag, quiet_frameworks, run_naming_extras

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """align-extract's flags (help and --version work with numpy alone)."""
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
    _setting_flags(ap, methods)
    _input_output_flags(ap)
    _both_directions_flags(ap)
    _run_flags(ap)
    return ap


def _setting_flags(ap: argparse.ArgumentParser, methods: str) -> None:
    """align-extract's flags of the settings: methods, layers, shifts, heads, level, decoder, specials."""
    from ..links.decode import DECODERS

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


def _input_output_flags(ap: argparse.ArgumentParser) -> None:
    """align-extract's flags of what is read and written beside the links: translation, truncation, score files."""
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


def _both_directions_flags(ap: argparse.ArgumentParser) -> None:
    """align-extract's flags of a calibration, the reverse model, blends, combinations, probabilities."""
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
        "--alignment-layer",
        metavar="DIR",
        help="the trained alignment layer the learned method reads (align-train's --out; default "
        "MODEL/alignment_layer/); refused when it was trained for another model, tokenizer or languages",
    )
    ap.add_argument(
        "--reverse-alignment-layer",
        metavar="DIR",
        help="the same for --reverse-model (default REVERSE_MODEL/alignment_layer/)",
    )
    ap.add_argument(
        "--sentence-scores",
        action="store_true",
        help="with --calibration: write sentence_scores.tsv "
        "(line, score in [0, 1]: P(the pair is a translation)) into --out",
    )
    ap.add_argument(
        "--sentence-features",
        action="store_true",
        help="with --calibration: --sentence-scores, and sentence_features.jsonl: each pair's score and every "
        "sentence feature the run can compute, by name (why a pair scored low; a sentence model refitted without "
        "running the models again)",
    )


def _run_flags(ap: argparse.ArgumentParser) -> None:
    """align-extract's flags of how it runs: batches, device, dtype, languages, framework, shards, the summary,
    progress."""
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


@console_main("align-extract")
def main(argv=None) -> int:
    """align-extract: see the module docstring; exit 0 ok, 1 bad input, 2 usage (or a missing extra:
    one line naming it, :mod:`align.extraction.extras`)."""
    return run_naming_extras("align-extract", _main, argv)


def _main(argv=None) -> int:
    """Flags -> a checked plan -> the run -> one summary line."""
    ap = build_parser()
    values = vars(ap.parse_args(argv))
    empty = empty_flag(ap, values)
    if empty:
        ap.error(f"{empty} is empty; give a value or leave the flag out")
    values["sentence_scores"] = values["sentence_scores"] or values["sentence_features"]  # the features come with it
    flags = Flags.from_mapping(values)
    t0 = time.time()
    quiet_frameworks()
    from ..attribution.methods import METHODS

    try:
        checked = check_flags(flags, METHODS)
    except (LaunchError, UsageError) as e:
        ap.error(str(e))
    if checked.dest is not None:  # checked before the model loads: a bad --out loses no work
        try:
            what = "shard folder" if flags.shard is not None else "output folder"
            check_destination(checked.dest, flags.overwrite, what, inputs=(flags.input,) if flags.input else ())
        except (OutputExistsError, OSError) as e:
            print(f"align-extract: {e}", file=sys.stderr)
            return 1
        clean_stale(checked.dest)
    with ExitStack() as inputs:
        try:
            plan, notes = build_plan(flags, checked, inputs)
        except UsageError as e:
            ap.error(str(e))
        except RunError as e:
            print(f"align-extract: {e}", file=sys.stderr)
            return 1
        for line in notes:
            print(f"align-extract: {line}", file=sys.stderr)
        return _run(plan, t0)


def _run(plan: ExtractPlan, t0: float) -> int:
    """Run the plan, merge shards when asked, print the summary; the exit status."""
    from ..extraction.run import extract

    flags, checked = plan.flags, plan.checked
    try:
        stats = extract(plan)
    except BrokenPipeError:
        raise  # the reader closed stdout (| head): console_main says it in one line
    except (OSError, ValueError) as e:  # InputError, WordMapError, TooLongError, OutputExistsError: file:line
        print(f"align-extract: {one_line(e)}", file=sys.stderr)
        return 1
    merged = None
    if flags.shard is not None and flags.out:
        from ..extraction.shards import drop_stale_merged, merge_when_complete

        shard = f"{checked.shard}/{checked.shards}"
        drop_stale_merged(flags.out, stats["signature"])  # merged/ of an earlier run never stays beside new shards
        if checked.auto and not flags.no_merge:  # one process too: one command always ends in DIR/merged/
            try:
                merged, why = merge_when_complete(flags.out, stats["signature"])
            except (OSError, ValueError) as e:
                print(f"align-extract: shard {shard} written, but the merge failed: {one_line(e)}", file=sys.stderr)
                return 1
            if why:
                print(f"align-extract: shard {shard} written, but not merged: {why}", file=sys.stderr)
                return 1
    if not checked.dest:
        check_stdout_taken()  # the links went to stdout: never "aligned N pairs" of links its reader did not take
    _summary(plan, stats, merged, t0)
    return 0


def _summary(plan: ExtractPlan, stats: dict[str, Any], merged: str | None, t0: float) -> None:
    """The run's one summary line (JSON with --format json), on stderr (stdout for JSON with --out)."""
    flags, checked, spec, aligner = plan.flags, plan.checked, plan.spec, plan.aligner
    summary = {
        "model": flags.model,
        "framework": plan.framework,
        "pairs": stats["pairs"],
        "lines": stats["lines"],
        "truncated": stats["truncated"],
        "truncated_reverse": stats["truncated_reverse"],
        "methods": list(spec.methods),
        "layers": list(spec.layers or ()),
        "shifts": list(spec.shifts),
        "blends": [base_name(b) for b in spec.blends],
        "out": checked.dest,
        "shard": f"{checked.shard}/{checked.shards}",
        "merged": merged,
        "preprocessing": aligner.preprocessing(),
        "reverse_model": flags.reverse_model,
        "combine": list(plan.combos),
        "signature": stats["signature"],
        "seconds": round(time.time() - t0, 1),
    }
    if flags.format == "json":
        print(json.dumps(summary), file=sys.stderr if not flags.out else sys.stdout)
        return
    model = summary["signature"]["model"]
    rev = f"@{model['revision'][:12]}" if "revision" in model else ""
    print(
        f"aligned {stats['pairs']} pairs with {plan.framework} {flags.model}{rev}: {len(spec.methods)} method(s) x "
        f"{len(spec.layers or ())} layer(s) x {len(spec.shifts)} shift(s)"
        + (f" + {len(spec.blends)} blend(s)" if spec.blends else "")
        + f" in {summary['seconds']} s"
        + (
            f"; and the other way round with {flags.reverse_model} ({len(plan.combos)} combination(s))"
            if plan.reverse is not None
            else ""
        )
        + (f", {stats['truncated']} truncated" if stats["truncated"] else "")
        + (f", {stats['truncated_reverse']} truncated by the reverse model" if stats["truncated_reverse"] else "")
        + (", lowercased" if aligner.lowercase else "")
        + (f"; files in {checked.dest}" if checked.dest else "")
        + (f"; merged into {merged}" if merged else "")
        + f" [{short(summary['signature'])}]",
        file=sys.stderr,
    )


if __name__ == "__main__":
    sys.exit(main())
