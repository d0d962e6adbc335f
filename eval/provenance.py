"""Does a hypothesis file come from a run on the test set it is scored against, in the same direction?

``align-extract -t NAME`` records the set it aligned (``test:NAME|lang:SRC-TGT|sha:...``) in the
``manifest.json`` it writes beside its files. A hypothesis of ``-t hansards -l fr-en`` scored against
``-t hansards`` (en-fr) would otherwise be scored link by link against the gold turned round: wrong figures, or
at best a "link outside its sentence" error that names the wrong cause. A file without a manifest beside it
(any other aligner's output) has nothing to compare and is scored as it is.
"""

from __future__ import annotations

import hashlib

from align.io.errors import AlignmentFormatError
from align.io.lines import BLOCK_LINES, LineReader
from align.io.manifest import recorded_input


def recorded_test_set(hyp: str) -> tuple[str, str] | None:
    """``(name, SRC-TGT)`` of the named test set the run that wrote ``hyp`` aligned, from the ``manifest.json``
    beside it; None when there is none to read (no manifest, a file input, standard input)."""
    recorded = recorded_input(hyp).get("test_set")
    if not isinstance(recorded, str):
        return None
    fields = dict(part.split(":", 1) for part in recorded.split("|") if ":" in part)
    if "test" not in fields or "lang" not in fields:
        return None
    return fields["test"], fields["lang"]


def check_hypothesis_set(hyp: str, name: str, pair: str, reversed_hyp: bool = False) -> None:
    """AlignmentFormatError naming ``hyp`` when its run aligned another test set than ``name``, or the set in
    another direction than ``pair`` (``SRC-TGT``, the direction it is scored in; ``reversed_hyp``: the file is read
    target first, ``--reverse-hyp``)."""
    got = recorded_test_set(hyp)
    if got is None:
        return
    run_name, run_pair = got
    if reversed_hyp:
        run_pair = "-".join(run_pair.split("-")[::-1])
    if run_name != name:
        raise AlignmentFormatError(
            hyp, None, f"aligned test set {run_name} ({run_pair}) by its manifest.json; scored against {name}: "
            "give the hypothesis of this set",
        )  # fmt: skip
    if run_pair != pair:
        raise AlignmentFormatError(
            hyp, None, f"aligned test set {name} as {run_pair} by its manifest.json; scored as {pair}: give "
            f"-l {run_pair} (the gold turned to the file's direction)",
        )  # fmt: skip


def lines_sha256(path: str) -> str:
    """sha256 of a file's lines as read (decompressed, newlines kept, a BOM dropped): the digest ``align-extract``
    records of its input (``align.io.inputs.PairReader``)."""
    digest = hashlib.sha256()
    with LineReader(path) as reader:
        while True:
            block = reader.take(BLOCK_LINES)
            for raw in block:
                digest.update(raw)
            if len(block) < BLOCK_LINES:
                return digest.hexdigest()


def check_run_input(path: str, text: str, text_sha256: str) -> None:
    """AlignmentFormatError naming ``path`` when the run that wrote it (its ``manifest.json``) read another input
    than the text file ``text`` (``text_sha256``: :func:`lines_sha256` of it); nothing to compare without one."""
    recorded = recorded_input(path).get("sha256")
    if isinstance(recorded, str) and recorded != text_sha256:
        raise AlignmentFormatError(
            path, None, f"made from another input (sha256 {recorded[:12]} by its manifest.json); the text {text} has "
            f"sha256 {text_sha256[:12]}: give the files of this text",
        )  # fmt: skip
