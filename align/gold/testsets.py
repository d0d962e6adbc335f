"""Gold test sets by name, as sacrebleu made test sets names: ``load("hansards")`` (standard library and numpy).

:func:`load` finds a set's original files, verifies their checksums and normalises the set to this
package's one form: word lists of both sides and :class:`~align.links.alignments.Alignments` of 0-based
``(src, tgt)`` links with sure/possible, in the direction asked for (``"fr-en"`` flips a set stored as
En-Fr). What each set is, is data in :mod:`align.gold.registry` (:data:`TESTSETS`); its text is read by
the reader of its layout (:mod:`align.gold.layouts`), its gold by :func:`align.io.formats.read_alignments`,
and the repairs it needs (:mod:`align.gold.fixes`) are applied and listed in ``notes``. The registry's
names (``TESTSETS``, ``TestSet``, ``names``, ``get``, the errors) and ``FIXES`` are importable from here too.

Where the files are: sets whose licence allows redistribution ship inside the package
(``align/gold/sets/``, each with its README and licence); the others are read from a folder the
user names (``--testsets-dir``, else ``$NORM_ALIGN_TESTSETS``, else ``$NORM_ALIGN_SHARED/gold``; the
library never guesses a folder from where it is installed), laid out as ``FOLDER/FILE`` with the folder
names of :data:`TESTSETS` (the layout of the project's ``shared/data/gold``). Nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..io.errors import AlignmentFormatError
from ..io.formats import read_alignments
from ..links.alignments import Alignments
from .fixes import FIXES
from .layouts import read_text
from .registry import TESTSETS, TestSet, TestSetError, UnknownTestSetError, get, names

__all__ = [
    "ENV",
    "FIXES",
    "SHARED_ENV",
    "SHIPPED_DIR",
    "TESTSETS",
    "LoadedTestSet",
    "TestSet",
    "TestSetError",
    "UnknownTestSetError",
    "format_listing",
    "get",
    "listing",
    "load",
    "location",
    "names",
    "parse_langs",
    "shared_data_dir",
    "testsets_dir",
    "verify",
]

SHIPPED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sets")
"""The redistributable sets, package data: ``SHIPPED_DIR/FOLDER/FILE``."""

ENV = "NORM_ALIGN_TESTSETS"
"""Environment variable naming the folder of the sets that are not shipped."""

SHARED_ENV = "NORM_ALIGN_SHARED"
"""Environment variable naming a folder laid out as the project's shared data (``gold/``, ``parallel/``,
``system_outputs/``): its ``gold/`` is the test-set folder when ``$NORM_ALIGN_TESTSETS`` is not set."""


def shared_data_dir(folder: str | None = None) -> str:
    """The shared data folder: ``folder``, else ``$NORM_ALIGN_SHARED``; TestSetError saying how to name one.
    The library never guesses it from where it is installed."""
    found = folder or os.environ.get(SHARED_ENV)
    if not found:
        raise TestSetError(
            f"no shared data folder: set ${SHARED_ENV} (the folder holding gold/, parallel/, system_outputs/; "
            "./run and the test suite set it to ../shared/data beside a checkout) or pass the script's option"
        )
    return found


@dataclass
class LoadedTestSet:
    """A test set read, verified and normalised: tokens of both sides and 0-based ``(src, tgt)`` gold links.

    ``src``/``tgt`` are (n_pairs,) lists of word lists in the direction ``langs``; ``gold`` holds
    the sure and possible links; ``notes`` say what loading changed (see :attr:`TestSet.fixes`).
    """

    __test__ = False

    spec: TestSet
    langs: tuple[str, str]
    src: list[list[str]]
    tgt: list[list[str]]
    gold: Alignments
    folder: str
    verified: bool
    notes: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    """The sentence number of each pair, as NAACL files of this set number them (WPT's ``<s snum=N>``, else 1..n)."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pair(self) -> str:
        return f"{self.langs[0]}-{self.langs[1]}"

    def __len__(self) -> int:
        return len(self.src)

    def lengths(self) -> tuple[np.ndarray, np.ndarray]:
        """(n_pairs,) int64 source and target word counts."""
        return (
            np.array([len(s) for s in self.src], dtype=np.int64),
            np.array([len(t) for t in self.tgt], dtype=np.int64),
        )

    def text_lines(self) -> list[str]:
        """``src ||| tgt`` lines (no newline), the input ``align-extract`` and ``align-view`` read."""
        return [f"{' '.join(s)} ||| {' '.join(t)}" for s, t in zip(self.src, self.tgt)]

    def signature(self) -> str:
        """``test:hansards|lang:en-fr|sha:0a1b2c3d4e5f`` (``sha:unverified`` under ``verify=False``)."""
        return f"test:{self.name}|lang:{self.pair}|sha:{self.spec.checksum[:12] if self.verified else 'unverified'}"

    def describe(self) -> dict[str, Any]:
        """JSON-ready: name, languages, pairs, links, checksum (full), where the files are, what loading changed."""
        return {
            "name": self.name,
            "langs": self.pair,
            "pairs": len(self),
            "sure": int(self.gold.sure.sum()),
            "possible": int((~self.gold.sure).sum()),
            "sha256": self.spec.checksum,
            "verified": self.verified,
            "shipped": self.spec.shipped,
            "notes": list(self.notes),
        }


def testsets_dir(folder: str | None = None) -> str | None:
    """The folder of the sets that are not shipped: ``folder``, else ``$NORM_ALIGN_TESTSETS``, else
    ``$NORM_ALIGN_SHARED/gold`` (None: no folder)."""
    if folder:
        return folder
    if os.environ.get(ENV):
        return os.environ[ENV]
    if os.environ.get(SHARED_ENV):
        return os.path.join(os.environ[SHARED_ENV], "gold")
    return None


def location(spec: TestSet, folder: str | None = None) -> str | None:
    """The folder holding the set's files (the shipped copy first), or None when they are not all there."""
    roots = ([SHIPPED_DIR] if spec.shipped else []) + [r for r in [testsets_dir(folder)] if r]
    for root in roots:
        where = os.path.join(root, spec.folder)
        if all(os.path.isfile(os.path.join(where, f)) for f in spec.files):
            return where
    return None


def _missing_message(spec: TestSet, folder: str | None) -> str:
    """Why the set's files are not found, and what to do: a shipped set's files missing from the installed
    package (a damaged installation), or the files of a set that is not shipped to put in the folder."""
    root = testsets_dir(folder)
    if spec.shipped:
        shipped = os.path.join(SHIPPED_DIR, spec.folder)
        missing = [f for f in spec.files if not os.path.isfile(os.path.join(shipped, f))] or list(spec.files)
        also = f"; {os.path.join(root, spec.folder)} does not hold them all either" if root else ""
        return (
            f"test set {spec.name!r} ({spec.title}) ships with norm-align, but {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing from {shipped}: the installation is damaged; "
            f"reinstall norm-align{also}"
        )
    where = os.path.join(root, spec.folder) if root else f"DIR/{spec.folder}"
    have = "" if root else f" (DIR: --testsets-dir, ${ENV}, or ${SHARED_ENV}/gold)"
    return (
        f"test set {spec.name!r} ({spec.title}) is not shipped ({spec.licence}); put "
        f"{', '.join(spec.files)} in {where}{have}; they come from {spec.source}"
    )


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(spec: TestSet, where: str) -> None:
    """Check every file's sha256; TestSetError names the first file that differs and what was expected."""
    for name, want in spec.files.items():
        path = os.path.join(where, name)
        got = _sha256(path)
        if got != want:
            raise TestSetError(
                f"{path}: sha256 {got[:16]}... differs from test set {spec.name!r}'s {want[:16]}...; "
                f"expected the file of {spec.source} (--no-verify scores with it anyway, and the "
                "signature then says sha:unverified)"
            )


def _read_native(spec: TestSet, where: str) -> tuple[list[list[str]], list[list[str]], Alignments, list[int]]:
    """Both sides' words and the gold, 0-based, first side first, as the files hold them."""
    layout, *files = spec.text
    paths = [os.path.join(where, f) for f in files]
    try:
        a, b, ids = read_text(layout, paths)
    except TestSetError as e:  # an unknown layout or the wrong number of files: a bug of the registry, not of the input
        raise type(e)(f"test set {spec.name!r}: {e}") from None
    if len(a) != len(b):
        raise AlignmentFormatError(paths[-1], None, f"{len(b)} sentences; expected {len(a)} as in {paths[0]}")
    gold = read_alignments(
        os.path.join(where, spec.gold), spec.gold_format, spec.gold_base, spec.gold_reversed, naacl_ids=ids
    )
    if len(gold) != len(a):  # a NAACL gold whose last sentences have no links is shorter: they are empty
        if spec.gold_format == "naacl" and len(gold) < len(a):
            pad = np.full(len(a) - len(gold), gold.offsets[-1], dtype=np.int64)
            gold = Alignments(np.concatenate([gold.offsets, pad]), gold.src, gold.tgt, gold.sure)
        else:
            raise AlignmentFormatError(
                os.path.join(where, spec.gold), None, f"{len(gold)} sentences; expected {len(a)} as in the text"
            )
    return a, b, gold, ids if ids is not None else list(range(1, len(a) + 1))


def parse_langs(spec: TestSet, langs: str | None) -> tuple[str, str]:
    """``"fr-en"`` -> ("fr", "en") if the set has that pair in either order; None -> the set's own order."""
    if langs is None:
        return spec.langs
    parts = tuple(langs.split("-"))
    if parts not in (spec.langs, spec.langs[::-1]):
        raise UnknownTestSetError(
            f"test set {spec.name!r} is {spec.pair}; -l {langs!r} is neither {spec.pair} nor "
            f"{spec.langs[1]}-{spec.langs[0]}"
        )
    return parts[0], parts[1]


def load(
    name: str, langs: str | None = None, folder: str | None = None, verify_checksums: bool = True
) -> LoadedTestSet:
    """Read test set ``name`` in direction ``langs`` (default: its text's order) and normalise it.

    Returns words of both sides and 0-based ``(src, tgt)`` gold links with sure/possible. The files'
    sha256 are checked first (``verify_checksums=False`` skips that; the signature then says so);
    the set's :attr:`TestSet.fixes` are applied and listed in ``notes``. Raises TestSetError
    (unknown name or direction, missing files, a checksum that differs) or AlignmentFormatError.
    """
    spec = get(name)
    direction = parse_langs(spec, langs)
    where = location(spec, folder)
    if where is None:
        raise TestSetError(_missing_message(spec, folder))
    if verify_checksums:
        verify(spec, where)
    a, b, gold, ids = _read_native(spec, where)
    ts = LoadedTestSet(spec, spec.langs, a, b, gold, where, verify_checksums, ids=ids)
    for fix in spec.fixes:
        FIXES[fix](ts)
    if direction != spec.langs:
        ts = LoadedTestSet(spec, direction, ts.tgt, ts.src, ts.gold.reversed(), where, verify_checksums, ts.notes, ids)
    return ts


def listing(folder: str | None = None) -> list[dict[str, Any]]:
    """One JSON-ready row per set: name, languages, pairs, links, licence, shipped, where its files are (or None)."""
    rows = []
    for spec in TESTSETS.values():
        where = location(spec, folder)
        rows.append(
            {
                "name": spec.name,
                "langs": spec.pair,
                "pairs": spec.pairs,
                "sure": spec.sure,
                "possible": spec.possible,
                "title": spec.title,
                "licence": spec.licence,
                "shipped": spec.shipped,
                "where": "shipped" if where and where.startswith(SHIPPED_DIR) else where,
                "sha256": spec.checksum,
            }
        )
    return rows


def format_listing(rows: Sequence[dict[str, Any]]) -> str:
    """A text table of :func:`listing`'s rows."""
    out = [f"{'name':<9} {'langs':<6} {'pairs':>5} {'sure':>6} {'poss':>6}  where"]
    for r in rows:
        where = r["where"] or (
            "missing from the installed package (damaged: reinstall)"
            if r["shipped"]
            else "missing (not shipped: --testsets-dir or $" + ENV + ")"
        )
        out.append(f"{r['name']:<9} {r['langs']:<6} {r['pairs']:>5} {r['sure']:>6} {r['possible']:>6}  {where}")
    return "\n".join(out)
