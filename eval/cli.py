"""``align-eval GOLD HYP [HYP ...]`` or ``align-eval -t NAME HYP [HYP ...]``: score alignment files against a gold alignment.

Prints one line per hypothesis (a table when there are several) and the settings signature, or
``--format json``. The files are read in step, a block of sentences at a time, and only four counts
per sentence are kept (|A|, |S|, |A&S|, |A&P|; only the corpus totals unless resampling or
``--per-sentence`` needs them), so memory does not grow with the number of links.
Exit status: 0 ok, 1 bad input (message ``file:line: ...``), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from align import __version__
from align.gold import testsets
from align.io.console import console_main
from align.io.errors import AlignmentFormatError, UsageError
from align.io.formats import FORMATS
from align.io.lines import BLOCK_LINES

from . import scoring
from .plot import plot_heatmap
from .scoring import EvalOptions


def _count(text: str) -> int:
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative; expected a number of resamples >= 0")
    return n


def _seed(text: str) -> int:
    """--seed: a non-negative integer (numpy's generators take no negative seed); a usage error otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: expected an integer >= 0") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative; expected an integer >= 0 (the resampling's seed)")
    return n


def parse_flags(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed flags (argparse's exits, --help 0 and usage 2, are returned by ``console_main``)."""
    return parser.parse_intermixed_args(argv)  # GOLD -l fr-en HYP: positionals on both sides of a flag


def add_format_args(p: argparse.ArgumentParser) -> None:
    """The gold and hypothesis file-format flags that align-eval and align-view share."""
    p.add_argument("--gold-format", choices=FORMATS, help="default talp")
    p.add_argument("--gold-base", type=int, choices=(0, 1), help="index base of the gold (default: the format's)")
    p.add_argument("--hyp-format", choices=FORMATS, default="pharaoh")
    p.add_argument("--hyp-base", type=int, choices=(0, 1), help="index base of the hypotheses (default: the format's)")
    p.add_argument("--reverse-gold", action="store_true", help="the gold file is target first")
    p.add_argument("--reverse-hyp", action="store_true", help="the hypothesis files are target first")
    p.add_argument("--all-sure", action="store_true", help="count possible gold links as sure")


def add_testset_args(p: argparse.ArgumentParser) -> None:
    """The named-test-set flags that align-eval and align-view share (:mod:`align.gold.testsets`)."""
    g = p.add_argument_group("named test sets (align-eval --list shows them)")
    g.add_argument(
        "-t",
        "--test-set",
        metavar="NAME",
        help="score against test set NAME (its gold and text, "
        f"checksums verified) instead of a GOLD file: {', '.join(testsets.TESTSETS)}",
    )
    g.add_argument(
        "-l",
        "--langs",
        metavar="SRC-TGT",
        help="the hypotheses' direction, e.g. fr-en for hansards "
        "(en-fr): the gold is flipped to it (default: the set's own order)",
    )
    g.add_argument(
        "--testsets-dir",
        metavar="DIR",
        help=f"folder of the sets that are not shipped, laid out "
        f"DIR/FOLDER/FILE (default ${testsets.ENV}, else ${testsets.SHARED_ENV}/gold)",
    )
    g.add_argument(
        "--no-verify",
        action="store_true",
        help="use a set whose files' sha256 differ from the registry's (the signature then says sha:unverified)",
    )


def load_testset(args: argparse.Namespace, file_flags: dict[str, Any] | None = None) -> testsets.LoadedTestSet | None:
    """The test set named by ``-t`` (None without it); UsageError for flags that contradict it (the gold
    format flags, and the caller's ``file_flags``: flag -> value, such as ``{"--text": args.text}``)."""
    name = getattr(args, "test_set", None)
    if not name:
        extra = [
            f
            for f, v in (("-l", getattr(args, "langs", None)), ("--no-verify", getattr(args, "no_verify", False)))
            if v
        ]
        if extra:
            raise UsageError(f"{', '.join(extra)} applies to a named test set; give -t NAME")
        return None
    gold_flags = [
        f
        for f, v in (
            ("--gold-format", args.gold_format),
            ("--gold-base", args.gold_base is not None),
            ("--reverse-gold", args.reverse_gold),
            ("--naacl-ids", args.naacl_ids),
            *(file_flags or {}).items(),
        )
        if v
    ]
    if gold_flags:
        raise UsageError(
            f"{', '.join(gold_flags)} describe a gold file or its numbering; -t {name} brings its own gold and text, "
            "normalised (use -l for the direction)"
        )
    testsets.get(name)  # an unknown name is a usage error (UnknownTestSetError), before any file is read
    return testsets.load(name, args.langs, args.testsets_dir, not args.no_verify)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="align-eval",
        usage="align-eval [-h] (GOLD | -t NAME [-l SRC-TGT]) HYP [HYP ...] [options]\n       align-eval --list",
        description="Score word alignments against gold: AER, precision, recall, F1 "
        "(corpus level). Links are read 0-based (src, tgt) after the format's index base and any --reverse.",
        epilog="Examples: align-eval gold.talp my.align | align-eval -t hansards my.align | "
        "align-eval -t hansards -l fr-en fren.align | align-eval --list. "
        "Exit status: 0 ok, 1 bad input (file:line: ...), 2 usage.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument(
        "files",
        nargs="*",
        metavar="[GOLD] HYP",
        help="the gold alignment file (talp by default: i-j "
        "sure, ipj possible, 1-based), then hypothesis files (pharaoh, 0-based, by default); only "
        "hypotheses with -t; - for stdin",
    )
    add_testset_args(p)
    p.add_argument(
        "--list",
        action="store_true",
        help="list the named test sets (languages, pairs, links, where their files are) and exit",
    )
    add_format_args(p)
    p.add_argument(
        "--text",
        help="'src ||| tgt' file: check that every link lies inside its "
        "sentence (-t NAME checks against the set's own text)",
    )
    p.add_argument(
        "--naacl-ids",
        help="WPT text file ('<s snum=N>') or one number per line: the sentence "
        "number of each line, for naacl files (default 1..max)",
    )
    p.add_argument(
        "--bootstrap",
        type=_count,
        default=0,
        metavar="N",
        help="N bootstrap resamples for 95%% confidence intervals (e.g. 1000)",
    )
    p.add_argument(
        "--paired-bootstrap",
        type=_count,
        default=0,
        metavar="N",
        help="N paired-bootstrap resamples testing each HYP against the first",
    )
    p.add_argument("--seed", type=_seed, default=12345, help="random seed of the resampling (>= 0)")
    p.add_argument("--plot", metavar="FILE.png", help="heatmap of AER (needs matplotlib)")
    p.add_argument(
        "--per-sentence",
        metavar="FILE.tsv",
        help="write per-sentence AER, precision, recall, F1 (percent) of every HYP as TSV",
    )
    p.add_argument("--format", choices=("text", "json"), default="text", dest="out_format")
    return p


def split_files(args: argparse.Namespace) -> None:
    """``files`` -> ``gold`` and ``hyps`` (all hypotheses with ``-t``); UsageError when too few are given."""
    files = list(args.files)
    if getattr(args, "test_set", None):
        args.gold, args.hyps = None, files
    else:
        args.gold, args.hyps = (files[0], files[1:]) if files else (None, [])
    if not args.hyps:
        raise UsageError("give a GOLD file and at least one HYP, or -t NAME and at least one HYP (--list shows names)")


def evaluate(
    args: argparse.Namespace, block_lines: int = BLOCK_LINES, testset: testsets.LoadedTestSet | None = None
) -> list[dict[str, Any]]:
    """align-eval's flags scored (:func:`eval.scoring.evaluate`): the files split into gold and hypotheses, and
    ``-t``'s set loaded unless the caller has it (``testset``)."""
    if not hasattr(args, "hyps"):
        split_files(args)
    if testset is None:
        testset = load_testset(args, {"--text": args.text})
    return scoring.evaluate(EvalOptions.of(args), testset, block_lines)


def signature(args: argparse.Namespace, testset: testsets.LoadedTestSet | None = None) -> str:
    """The signature of parsed flags (:func:`eval.scoring.signature`)."""
    return scoring.signature(EvalOptions.of(args), testset)


def format_table(results: list[dict[str, Any]]) -> str:
    """Aligned text table, one row per hypothesis."""
    width = max(len(r["hyp"]) for r in results)
    rows = []
    for r in results:
        ci = (
            f" [{r['ci']['aer'][0]:.1f}, {r['ci']['aer'][1]:.1f}]"
            if r.get("ci")
            else " [no interval: too few sentences]"
            if "ci" in r
            else ""
        )
        pb = ""
        if "paired_bootstrap" in r:
            t = r["paired_bootstrap"]
            if t["p_value"] is None:
                pb = f"  vs first: dAER {t['delta_aer']:+.1f}, the test cannot decide ({t['undecided']})"
            else:
                pb = (
                    f"  vs first: dAER {t['delta_aer']:+.1f} [{t['delta_aer_ci'][0]:+.1f}, "
                    f"{t['delta_aer_ci'][1]:+.1f}] p={t['p_value']:.4f} (two-sided)"
                )
        rows.append(
            f"{r['hyp']:<{width}}  AER {r['aer']:5.1f}{ci}  P {r['precision']:5.1f}  R {r['recall']:5.1f}"
            f"  F1 {r['f1']:5.1f}  links {r['links']}  sents {r['sentences']}{pb}"
        )
    return "\n".join(rows)


@console_main("align-eval")
def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of ``align-eval``."""
    parser = build_parser()
    args = parse_flags(parser, argv)
    if args.list:
        rows = testsets.listing(args.testsets_dir)
        print(json.dumps(rows, indent=1) if args.out_format == "json" else testsets.format_listing(rows))
        return 0
    try:
        split_files(args)
        if sum(h == "-" for h in [args.gold, *args.hyps, args.text, args.naacl_ids]) > 1:
            raise UsageError("stdin (-) can be read once")
        testset = load_testset(args, {"--text": args.text})
    except (UsageError, testsets.UnknownTestSetError) as e:
        parser.print_usage(sys.stderr)
        print(f"align-eval: error: {e}", file=sys.stderr)
        return 2
    except (AlignmentFormatError, ValueError) as e:  # a set's files missing or changed
        print(f"align-eval: {e}", file=sys.stderr)
        return 1
    try:
        results = evaluate(args, testset=testset)
        if args.plot:
            plot_heatmap(results, args.plot)
    except (AlignmentFormatError, ValueError) as e:
        print(f"align-eval: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # an output (--per-sentence, --plot) that cannot be written
        print(f"align-eval: cannot write: {e}", file=sys.stderr)
        return 1
    except RuntimeError as e:
        print(f"align-eval: {e}", file=sys.stderr)
        return 2
    if args.out_format == "json":
        print(json.dumps(results, indent=1))
    else:
        print(format_table(results))
        print(f"signature: {results[0]['signature']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
