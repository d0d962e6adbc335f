"""The En-Fr training text in the Hansards gold's style (see ``data.prep.hansards``): OUT.{en,fr} for
training, OUT.valid.{en,fr} and OUT.test.{en,fr} (held-out Hansard slices, validation and BLEU),
OUT.json (pairs per set, dropped pairs by reason).

Usage: python data/scripts/enfr_corpus.py SHARED_DATA_DIR OUT
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from align.io.atomic import write_text_atomic  # noqa: E402
from data.prep.corpus import corpus_args, write_sides  # noqa: E402
from data.prep.hansards import HELD_OUT_TEST, HELD_OUT_VALID, MAX_RATIO, MAX_WORDS, collect  # noqa: E402


def main(argv=None) -> int:
    args = corpus_args(__doc__, "prefix of the files to write: OUT.{en,fr}, OUT.valid.*, OUT.test.*, OUT.json", argv)
    try:
        corpus = collect(args.shared)
    except (OSError, ValueError) as e:
        print(f"enfr_corpus: {e}", file=sys.stderr)
        return 1
    out = args.out
    write_sides(out, [("", corpus.train), (".valid", corpus.valid), (".test", corpus.test)], ("en", "fr"))
    meta = {
        "train_pairs": len(corpus.train),
        "valid_pairs": len(corpus.valid),
        "test_pairs": len(corpus.test),
        "pairs_per_set": corpus.sets,
        "dropped": corpus.dropped,
        "max_ratio": MAX_RATIO,
        "max_words": MAX_WORDS,
        "held_out": f"last {HELD_OUT_VALID}+{HELD_OUT_TEST} Hansard pairs",
    }
    write_text_atomic(out + ".json", json.dumps(meta, indent=1) + "\n")
    print(
        f"{len(corpus.train)} en-fr training pairs -> {out}.{{en,fr}}; held out {len(corpus.valid)} valid, "
        f"{len(corpus.test)} test; dropped {corpus.dropped}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
