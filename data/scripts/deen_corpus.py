"""Every German-English pair in ``../shared/data/parallel`` as one ``de ||| en`` file (lowercased,
punctuation split off; see ``data.prep.corpus``), plus one file per side and the held-out sets.

Usage: python data/scripts/deen_corpus.py SHARED_DATA_DIR OUT_FILE   (also writes OUT_FILE.de, OUT_FILE.en)
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from align.io.atomic import write_text_atomic  # noqa: E402
from data.prep.corpus import HELD_OUT, corpus_args, split, write_sides  # noqa: E402


def main(argv=None) -> int:
    args = corpus_args(__doc__, "the 'de ||| en' file to write; OUT.de, OUT.en and OUT.NAME.{de,en} beside it", argv)
    pairs, held = split(args.shared)
    # a fresh checkout has no work/ yet (make_models.sh writes work/deen_corpus.txt first): write_sides makes it
    write_sides(args.out, [("", pairs)] + [(f".{name}", h) for name, h in held.items()], ("de", "en"))
    write_text_atomic(args.out, "".join(f"{d} ||| {e}\n" for d, e in pairs))
    print(
        f"{len(pairs)} de-en pairs -> {args.out} (+ .de, .en); held out: "
        + ", ".join(f"{n} -> {args.out}.{n}.{{de,en}}" for n in HELD_OUT)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
