"""What the align-extract CLI tests share: the shipped De-En pair of models, a few De-En pairs, a runner."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEEN, ENDE = (os.path.join(ROOT, "data", "models", m) for m in ("deen", "ende"))
PAIRS = [
    ("das haus ist klein .", "the house is small ."),
    ("ich habe es nicht gesehen .", "i have not seen it ."),
    ("wir danken der kommission für ihre antwort .", "we thank the commission for its answer ."),
    ("ja", "yes"),
    ("der bericht wurde gestern angenommen .", "the report was adopted yesterday ."),
]


def run(*args: str) -> int:
    """align-extract's main on these arguments."""
    from align.cli.extract import main

    return main(list(args))


def lines(path) -> list:
    """The links of a Pharaoh file, one list per line."""
    from align.io.formats import read_alignments

    return read_alignments(str(path), "pharaoh").to_lists()
