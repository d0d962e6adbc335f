"""``align-symmetrize -m METHOD FORWARD REVERSE``: symmetrize two Pharaoh files, print Pharaoh.

Both inputs are 0-based with source first; ``--reverse-target-first`` swaps the sides of the
reverse file for aligners that write it target first. Exit 0 ok, 1 bad input, 2 usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .. import __version__
from ..links.console import console_main
from ..links.formats import AlignmentFormatError, LineCountError, read_alignments, write_alignments
from ..links.symmetrize import SYMMETRIZERS, symmetrize_corpus


@console_main("align-symmetrize")
def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of ``align-symmetrize``."""
    p = argparse.ArgumentParser(prog="align-symmetrize", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("-m", "--method", choices=SYMMETRIZERS, default="grow-diag-final-and")
    p.add_argument("forward", help="forward alignment, Pharaoh 0-based, source first (- for stdin)")
    p.add_argument("reverse", help="reverse alignment, Pharaoh 0-based, source first")
    p.add_argument(
        "--reverse-target-first", action="store_true", help="the reverse file is written target first: swap its sides"
    )
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code in (0, None) else 2
    try:
        fwd = read_alignments(args.forward, "pharaoh")
        rev = read_alignments(args.reverse, "pharaoh", reverse=args.reverse_target_first)
        if len(fwd) != len(rev):
            raise LineCountError(args.reverse, None, f"{len(rev)} lines; expected {len(fwd)} as in {args.forward}")
        write_alignments(symmetrize_corpus(fwd, rev, args.method), args.output, "pharaoh")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
