"""``align-symmetrize -m NAME FORWARD REVERSE``: combine a forward and a reverse alignment, print Pharaoh.

Link files (Pharaoh, 0-based, source first; ``--reverse-target-first`` swaps the sides of the reverse
file for aligners that write it target first) take the hard heuristics (``grow-diag-final-and``, ...).
Soft-score files (both inputs named ``*.scores.jsonl``, optionally ``.gz``/``.xz``/``.zst``, or
``--scores``; 8-bit or float32, see :mod:`align.io.softscores`): FORWARD holds the forward model's
(tgt, src) matrices, REVERSE the reverse model's own file (its target by its source: (src, tgt) of the
forward pair), read line by line in lockstep; every name of :mod:`align.links.combine` is valid: hard
names decode each direction by argmax first, soft ``COMBINER:DECODER`` names combine the two matrices,
then decode. ``--text PAIRS`` checks both files against the sentences (:mod:`align.io.directions` says what
is checked with and without it). Exit 0 ok, 1 bad input, 2 usage.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

from .. import __version__
from ..io.atomic import write_text_atomic
from ..io.console import check_stdout_taken, console_main
from ..io.directions import combine_score_files, read_link_pair
from ..io.errors import AlignmentFormatError
from ..io.formats import write_alignments
from ..io.lines import strip_compression
from ..io.softscores import SUFFIX
from ..links.combine import COMBINERS, DEFAULT_THRESHOLD, SOFT_DECODERS, check_combination, is_soft
from ..links.symmetrize import SYMMETRIZERS, symmetrize_corpus

__all__ = ["main"]


def _is_scores_file(path: str) -> bool:
    return strip_compression(path).endswith(SUFFIX)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="align-symmetrize", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument(
        "-m",
        "--method",
        metavar="NAME",
        default="grow-diag-final-and",
        help=f"combination (default grow-diag-final-and): a hard heuristic, on link or score files: "
        f"{', '.join(SYMMETRIZERS)}; or, on score files only, hmean:threshold, hmean:itermax, ... "
        f"(COMBINER:DECODER with COMBINER in {', '.join(COMBINERS)}, DECODER in {', '.join(SOFT_DECODERS)})",
    )
    p.add_argument(
        "forward",
        help=f"forward alignment: Pharaoh 0-based, source first, or the forward model's {SUFFIX} (- for stdin)",
    )
    p.add_argument("reverse", help=f"reverse alignment: Pharaoh 0-based, source first, or the reverse model's {SUFFIX}")
    p.add_argument(
        "--scores", action="store_true", help=f"read both inputs as soft-score files whatever their names ({SUFFIX})"
    )
    p.add_argument(
        "--threshold",
        type=float,
        metavar="T",
        help=f"cutoff on the combined score of a soft COMBINER:threshold name (default {DEFAULT_THRESHOLD})",
    )
    p.add_argument(
        "--reverse-target-first", action="store_true", help="the reverse file is written target first: swap its sides"
    )
    p.add_argument(
        "--text",
        metavar="PAIRS",
        help="the sentences ('src ||| tgt' lines) both files describe: each line's links must lie inside its "
        "sentence and each forward score matrix be its (target words x source words); without it, files of the "
        "same line count are taken to describe the same sentences",
    )
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="the summary line's format, on stderr (stdout may carry the links)",
    )
    return p


def _check_usage(p: argparse.ArgumentParser, args: argparse.Namespace) -> bool:
    """Whether the inputs are score files; ``p.error`` (exit 2) for arguments that contradict each other."""
    try:
        check_combination(args.method)
    except ValueError as e:
        p.error(f"-m: {e}")
    kinds = [_is_scores_file(args.forward), _is_scores_file(args.reverse)]
    scores = args.scores or all(kinds)
    if not args.scores and any(kinds) and not all(kinds):
        one, other = (args.forward, args.reverse) if kinds[0] else (args.reverse, args.forward)
        p.error(
            f"{one} is a soft-score file ({SUFFIX}) and {other} is not; give two score files or two link files "
            "(--scores reads both as score files)"
        )
    if [args.forward, args.reverse, args.text].count("-") > 1:
        p.error("stdin (-) can be read once")
    if scores and args.reverse_target_first:
        p.error("--reverse-target-first applies to link files; a reverse score file is the reverse model's own")
    if not scores and is_soft(args.method):
        p.error(f"{args.method} combines score matrices; give two soft-score files ({SUFFIX}, or --scores)")
    if args.threshold is not None:
        if not (is_soft(args.method) and args.method.partition(":")[2] == "threshold"):
            p.error(f"--threshold applies to a soft COMBINER:threshold name, not {args.method}")
        if not (math.isfinite(args.threshold) and 0.0 <= args.threshold <= 1.0):
            p.error(f"--threshold {args.threshold}; expected a value in [0, 1] (combined scores are row shares)")
    return scores


@console_main("align-symmetrize")
def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of ``align-symmetrize``."""
    p = _parser()
    args = p.parse_args(argv)  # argparse's exits (--help 0, usage 2) are returned by console_main
    scores = _check_usage(p, args)
    try:
        if scores:
            threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
            lines = combine_score_files(args.method, args.forward, args.reverse, threshold, args.text)
            write_text_atomic(args.output, "".join(line + "\n" for line in lines))
            sentences, links = len(lines), sum(len(line.split()) for line in lines)
        else:
            fwd, rev = read_link_pair(args.forward, args.reverse, args.reverse_target_first, args.text)
            combined = symmetrize_corpus(fwd, rev, args.method)
            write_alignments(combined, args.output, "pharaoh")
            sentences, links = len(combined), combined.n_links
    except (AlignmentFormatError, ValueError) as e:
        print(f"align-symmetrize: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise  # console_main says it in one line
    except OSError as e:  # -o a folder, or under a file: say so, no traceback (nothing is left behind)
        print(
            f"align-symmetrize: {args.output}: cannot write ({e.strerror or e}); expected a file path "
            "in a writable folder",
            file=sys.stderr,
        )
        return 1
    summary = {"sentences": sentences, "links": links, "method": args.method, "output": args.output}
    if args.output == "-":
        check_stdout_taken()  # a reader that left the links unread is told so, not given a summary of them
    if args.format == "json":
        print(json.dumps(summary), file=sys.stderr)
    else:
        where = "standard output" if args.output == "-" else args.output
        print(f"align-symmetrize: {sentences} sentences, {links} links ({args.method}) -> {where}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
