"""Every German-English pair in ``../shared/data/parallel`` as one ``de ||| en`` file (lowercased,
punctuation split off; see ``data.prep.corpus``), plus one file per side and the held-out sets.

Usage: python data/scripts/deen_corpus.py SHARED_DATA_DIR OUT_FILE   (also writes OUT_FILE.de, OUT_FILE.en)
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from data.prep.corpus import HELD_OUT, split  # noqa: E402
from align.links.formats import write_text_atomic  # noqa: E402


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    pairs, held = split(argv[0])
    # a fresh checkout has no work/ yet (make_models.sh writes work/deen_corpus.txt first)
    os.makedirs(os.path.dirname(os.path.abspath(argv[1])), exist_ok=True)
    write_text_atomic(argv[1], "".join(f"{d} ||| {e}\n" for d, e in pairs))
    # one file per side too, for prepare.py --train; the held-out sets tokenized alike for validation and bleu.py
    for suffix, subset in [("", pairs)] + [(f".{name}", h) for name, h in held.items()]:
        for side, k in (("de", 0), ("en", 1)):
            write_text_atomic(f"{argv[1]}{suffix}.{side}", "".join(p[k] + "\n" for p in subset))
    print(f"{len(pairs)} de-en pairs -> {argv[1]} (+ .de, .en); held out: "
          + ", ".join(f"{n} -> {argv[1]}.{n}.{{de,en}}" for n in HELD_OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
