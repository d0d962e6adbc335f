"""What each named gold set is, as data: :data:`TESTSETS`, one :class:`TestSet` entry per set, every field
named, read from ``align/gold/sets/registry.json`` (standard library only).

An entry says what a published word-alignment gold set is: its languages in the order of its text,
its counts of sentence pairs and of sure and possible links (as loaded, after its repairs), how its
original files are laid out (the text layout, one of :data:`align.gold.layouts.LAYOUTS`; the gold's
format, index base and side order), the sha256 of every file, where it comes from, its licence, what
is wrong with it and which repairs (:data:`align.gold.fixes.FIXES`) loading applies. Adding a set is
one entry in ``align/gold/sets/registry.json`` (and its files, in ``align/gold/sets/FOLDER/`` when its licence
lets it ship);
``tests/gold/test_registry.py`` checks every entry's fields. Loading is :mod:`align.gold.testsets`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, fields
from typing import Any


class TestSetError(ValueError):
    """A test set that cannot be loaded: an unknown name or direction, missing files, a wrong checksum."""

    __test__ = False  # not a pytest test class, whatever its name


class UnknownTestSetError(TestSetError):
    """A name or a language pair that no entry has; the message lists the valid ones."""


@dataclass(frozen=True, kw_only=True)
class TestSet:
    """One gold set: what it is, how its original files are laid out, and where it comes from.

    Built with keyword arguments only, every field named: ``TestSet(name="hansards", title=..., ...)``.
    """

    __test__ = False

    name: str
    """The name that ``load`` and ``-t`` take: ``"hansards"``."""
    title: str
    """One line: the languages, the corpus and who made the gold."""
    langs: tuple[str, str]
    """The (first, second) side of its text, language codes: ``("en", "fr")``."""
    pairs: int
    """Sentence pairs, as loaded."""
    sure: int
    """Sure gold links, as loaded (after :attr:`fixes`)."""
    possible: int
    """Possible (not sure) gold links, as loaded."""
    folder: str
    """The folder holding its files, under the shipped sets or the test-set folder: ``"enfr_hansards"``."""
    files: dict[str, str]
    """Every original file's name -> its sha256 (hex), checked before reading."""
    text: tuple[str, ...]
    """The text's layout and files: ``("pairs", FILE)`` for ``a ||| b`` lines, ``("sides", FILE_A, FILE_B)``
    for one sentence a line per side, ``("wpt", FILE_A, FILE_B)`` for ``<s snum=N> ... </s>`` lines whose
    numbers the NAACL gold uses (:data:`align.gold.layouts.LAYOUTS`)."""
    gold: str
    """The gold file's name."""
    gold_format: str
    """The gold file's format, as :func:`align.io.formats.read_alignments` names it: ``talp``, ``pharaoh``,
    ``naacl``."""
    gold_base: int
    """The gold file's index base: 0 or 1."""
    gold_reversed: bool
    """True: the gold writes the second side's index first."""
    shipped: bool
    """True: the licence allows redistribution and the files ship in ``align/gold/sets/FOLDER/``."""
    licence: str
    """Its licence, and why it ships or not."""
    source: str
    """Where its files come from (the repository and commit they were taken from)."""
    citation: str
    """The paper to cite."""
    defects: tuple[str, ...]
    """What is odd or wrong in the original files and how loading handles it; ``()``: nothing known."""
    fixes: tuple[str, ...]
    """The repairs loading applies, by name (:data:`align.gold.fixes.FIXES`), in order; ``()``: none."""

    @property
    def pair(self) -> str:
        """``"en-fr"``: the languages in the text's order."""
        return f"{self.langs[0]}-{self.langs[1]}"

    @property
    def checksum(self) -> str:
        """The set's digest: sha256 over its files' names and sha256 digests (the first 12 hex digits are in
        signatures)."""
        h = hashlib.sha256()
        for name in sorted(self.files):
            h.update(f"{name} {self.files[name]}\n".encode())
        return h.hexdigest()


# -- the entries: a data file beside the shipped sets -----------------------------------------------

REGISTRY_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sets", "registry.json")
"""The entries, one JSON object each with every field of :class:`TestSet` named (lists for tuples)."""

_TUPLES = {f.name for f in fields(TestSet) if str(f.type).startswith("tuple")}


def read_registry(path: str = REGISTRY_FILE) -> dict[str, TestSet]:
    """The entries of a registry file, by name, in file order; TestSetError naming the entry and field that is
    missing, unknown or of the wrong type."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or data.get("format") != "norm-align/testsets" or data.get("version") != 1:
        raise TestSetError(f"{path}: expected a norm-align/testsets file of version 1")
    names = {f.name: f.type for f in fields(TestSet)}
    out: dict[str, TestSet] = {}
    for k, entry in enumerate(data.get("testsets") or []):
        where = f"{path}: entry {k + 1} ({entry.get('name', '?') if isinstance(entry, dict) else '?'})"
        if not isinstance(entry, dict) or set(entry) != set(names):
            got = set(entry) if isinstance(entry, dict) else set()
            raise TestSetError(
                f"{where}: fields {sorted(got ^ set(names))} missing or unknown; expected every field of TestSet"
            )
        values: dict[str, Any] = {key: tuple(v) if key in _TUPLES else v for key, v in entry.items()}
        for key, kind in (("name", str), ("pairs", int), ("sure", int), ("possible", int), ("shipped", bool)):
            if not isinstance(values[key], kind):
                raise TestSetError(
                    f"{where}: {key} {values[key]!r} is not {'an' if kind is int else 'a'} {kind.__name__}"
                )
        out[values["name"]] = TestSet(**values)
    return out


TESTSETS: dict[str, TestSet] = read_registry()
"""Every named test set, in the order ``align-eval --list`` shows them. Checksums are the sha256 of each
original file."""


def names() -> list[str]:
    """The registered names, in registry order."""
    return list(TESTSETS)


def get(name: str) -> TestSet:
    """The entry called ``name``; UnknownTestSetError lists the valid names."""
    if name not in TESTSETS:
        raise UnknownTestSetError(f"unknown test set {name!r}; valid: {', '.join(TESTSETS)}")
    return TESTSETS[name]
