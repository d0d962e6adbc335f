"""Gold test sets by name, as sacrebleu made test sets names: ``load("hansards")`` (standard library and numpy).

Each entry of :data:`TESTSETS` says what a published word-alignment gold set is: its languages in
the order of its text, sentence pairs, sure and possible links, how its original files are laid
out (format, index base, which side comes first), the sha256 of every file, where it comes from,
its licence and what is wrong with it and how loading handles that. :func:`load` reads the original
files, verifies their checksums and normalises the set to this package's one form: word lists of
both sides and :class:`~align.links.alignments.Alignments` of 0-based ``(src, tgt)`` links with
sure/possible, in the direction asked for (``"fr-en"`` flips a set stored as En-Fr).

Where the files are: sets whose licence allows redistribution ship inside the package
(``align/gold/sets/``, each with its README and licence); the others are read from a folder the
user names (``--testsets-dir``, else ``$NORM_ALIGN_TESTSETS``, else ``$NORM_ALIGN_SHARED/gold``; the
library never guesses a folder from where it is installed), laid out as ``FOLDER/FILE`` with the folder names of :data:`TESTSETS` (the
layout of the project's ``shared/data/gold``). Nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..io.errors import AlignmentFormatError
from ..io.formats import read_alignments
from ..io.lines import read_lines
from ..io.text import read_text_pairs, read_wpt_text, split_tokens
from ..links.alignments import Alignments

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


class TestSetError(ValueError):
    """A test set that cannot be loaded: an unknown name or direction, missing files, a wrong checksum."""

    __test__ = False  # not a pytest test class, whatever its name


class UnknownTestSetError(TestSetError):
    """A name or a language pair that no entry has; the message lists the valid ones."""


@dataclass(frozen=True)
class TestSet:
    """One gold set: what it is, how its original files are laid out, and where it comes from.

    ``langs`` is (first, second) side of its text; the gold file's own side order is ``gold_reversed``
    (True: the gold writes the second side first). ``text`` is ``("pairs", FILE)`` for ``a ||| b``
    lines, ``("sides", FILE_A, FILE_B)`` for one sentence a line per side, or ``("wpt", FILE_A,
    FILE_B)`` for ``<s snum=N> ... </s>`` lines whose numbers the NAACL gold uses.
    """

    __test__ = False

    name: str
    title: str
    langs: tuple[str, str]
    pairs: int
    sure: int
    possible: int
    folder: str
    files: dict[str, str]
    text: tuple[str, ...]
    gold: str
    gold_format: str
    gold_base: int
    gold_reversed: bool
    shipped: bool
    licence: str
    source: str
    citation: str
    defects: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()

    @property
    def pair(self) -> str:
        """``"en-fr"``: the languages in the text's order."""
        return f"{self.langs[0]}-{self.langs[1]}"

    @property
    def checksum(self) -> str:
        """The set's digest: sha256 over its files' names and sha256 digests (the first 12 hex digits are in signatures)."""
        h = hashlib.sha256()
        for name in sorted(self.files):
            h.update(f"{name} {self.files[name]}\n".encode())
        return h.hexdigest()


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


# -- what loading repairs -------------------------------------------------------------------------


def _drop_links_outside(ts: LoadedTestSet) -> None:
    """Drop gold links that point past the end of their sentence (WPT 2005 En-Hi has one)."""
    sl, tl = ts.lengths()
    sent = ts.gold.sentence_ids()
    bad = (ts.gold.src >= sl[sent]) | (ts.gold.tgt >= tl[sent])
    for i in np.flatnonzero(bad):
        ts.notes.append(
            f"dropped gold link ({ts.gold.src[i]}, {ts.gold.tgt[i]}) (0-based, first side first) of "
            f"sentence {sent[i] + 1}: outside its {sl[sent[i]]} x {tl[sent[i]]} words"
        )
    if bad.any():
        keep = ~bad
        counts = np.bincount(sent[keep], minlength=len(ts.gold))
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        ts.gold = Alignments(offsets, ts.gold.src[keep], ts.gold.tgt[keep], ts.gold.sure[keep])


def _unmojibake(word: str) -> str:
    """A word that is UTF-8 read as Latin-1 (``â\\x80\\x93``), read back (``–``); any other word unchanged."""
    if any("\x80" <= c <= "\xff" for c in word) and all(ord(c) < 256 for c in word):
        try:
            return word.encode("latin-1").decode("utf-8")
        except UnicodeDecodeError:
            return word
    return word


def _repair_mojibake_second_side(ts: LoadedTestSet) -> None:
    """Repair words of the second side that are UTF-8 read as Latin-1 (KFTT's English side has 7 such lines)."""
    for k, words in enumerate(ts.tgt):
        fixed = [_unmojibake(w) for w in words]
        if fixed != words:
            ts.tgt[k] = fixed
            ts.notes.append(
                f"line {k + 1}: repaired {sum(a != b for a, b in zip(words, fixed))} word(s) of UTF-8 "
                "read as Latin-1 on the second side"
            )


FIXES: dict[str, Callable[[LoadedTestSet], None]] = {
    "drop-links-outside": _drop_links_outside,
    "repair-mojibake-second-side": _repair_mojibake_second_side,
}
"""What loading may repair, by name; applied in the set's native direction, before any flip."""


# -- the registry ---------------------------------------------------------------------------------

_WPT03 = (
    "Mihalcea & Pedersen (2003), An Evaluation Exercise for Word Alignment, HLT-NAACL 2003 Workshop "
    "on Building and Using Parallel Texts"
)
_WPT03_LICENCE = (
    "no licence stated; released by the WPT 2003 organisers for the shared task and redistributed "
    "with attribution since (awesome-align, lilt/alignment-scripts); shipped, with attribution"
)

TESTSETS: dict[str, TestSet] = {
    t.name: t
    for t in (
        TestSet(
            "rwth",
            "German-English Europarl, RWTH (Vilar et al. 2006)",
            ("de", "en"),
            508,
            9613,
            921,
            "deen_rwth",
            {
                "deen.src-tgt": "381c87431975e8221252b78018987f70ce007caf8ea00807cf57ed0a45fc9e13",
                "deen.gold": "2985def453f3fbce21d091d5193ec407000ee62e20642502961320a470dacbb2",
            },
            ("pairs", "deen.src-tgt"),
            "deen.gold",
            "talp",
            1,
            False,
            False,
            "free for non-commercial research; not for redistribution (put your own copy in the folder)",
            "www-i6.informatik.rwth-aachen.de/goldAlignment/; the files as in lisasiyu/Cross-Align@017ba1e:"
            "data/test.de-en and data/deen.talp",
            "Vilar, Popovic & Ney (2006), AER: Do we need to 'improve' our alignments?, IWSLT 2006",
        ),
        TestSet(
            "hansards",
            "English-French Canadian Hansards (WPT 2003)",
            ("en", "fr"),
            447,
            4038,
            13400,
            "enfr_hansards",
            {
                "enfr.src-tgt": "19d56c3de3634ab8420d553df4d9dfd849502b18225f1599382e98a6de9cfc72",
                "enfr.gold": "0a11b51cba8a92a7608fb00884cb3cf50fe0fcc4e4aa92d70624fd11451c4ddd",
            },
            ("pairs", "enfr.src-tgt"),
            "enfr.gold",
            "talp",
            1,
            False,
            True,
            _WPT03_LICENCE,
            "WPT 2003 test set, gold by Och & Ney (2000); the files as in neulab/awesome-align@5f150d4:examples/",
            _WPT03,
            ("French contractions are expanded in the text ('de le', 'je ai'); tokens as the gold counts them",),
        ),
        TestSet(
            "wpt03",
            "Romanian-English (WPT 2003)",
            ("ro", "en"),
            248,
            6198,
            0,
            "roen_wpt03",
            {
                "roen.src-tgt": "e3ae360038e44813c27ebd470e359bf2d2a2a10e4697129060b3cbafbd2742a7",
                "roen.gold": "12c3ae50f32817ce27edbd272c90b91ac8156823505d25ecd34266804ed65b10",
            },
            ("pairs", "roen.src-tgt"),
            "roen.gold",
            "talp",
            1,
            False,
            True,
            _WPT03_LICENCE,
            "WPT 2003 Romanian-English test set; the files as in neulab/awesome-align@5f150d4:examples/",
            _WPT03,
            ("no possible links: every gold link is sure",),
        ),
        TestSet(
            "kftt",
            "Japanese-English Kyoto Free Translation Task (KFTT)",
            ("ja", "en"),
            582,
            13562,
            0,
            "jaen_kftt",
            {
                "jaen.src-tgt": "64471c1189a30979966078c1172e264558d2aefb376553f7fb1a629d585f5a18",
                "jaen.gold": "05cace5aad9ee118dca8f73d9a98434c80fa5d6531e83a2b27b16057b583afa6",
            },
            ("pairs", "jaen.src-tgt"),
            "jaen.gold",
            "talp",
            1,
            False,
            True,
            "CC BY-SA 3.0 (NICT's Japanese-English Bilingual Corpus of Wikipedia's Kyoto Articles); shipped with "
            "its licence text",
            "Neubig (2011), www.phontron.com/kftt/; the files as in neulab/awesome-align@5f150d4 and "
            "lisasiyu/Cross-Align@017ba1e",
            "Neubig (2011), The Kyoto Free Translation Task, www.phontron.com/kftt",
            (
                "7 English lines are UTF-8 read as Latin-1 (mojibake, e.g. 'â\\x80\\x93' for '–'): loading repairs "
                "those words (word counts unchanged)",
                "the Japanese side has U+3000 (ideographic space) tokens: words are split on ASCII space and tab only",
            ),
            ("repair-mojibake-second-side",),
        ),
        TestSet(
            "tsinghua",
            "Chinese-English, Tsinghua (Liu & Sun 2015)",
            ("zh", "en"),
            450,
            11238,
            178,
            "zhen_tsinghua",
            {
                "zhen.src-tgt": "2a35fb66ad1631587cd00fbd11255dd9a8f4c11413b90aaa10f20d7f1a1cd9a9",
                "zhen.gold": "39e4de909481013653a9bf2b3b0520d9b75c728eff4ff769bd8d11f9cc703a5d",
            },
            ("pairs", "zhen.src-tgt"),
            "zhen.gold",
            "talp",
            1,
            False,
            False,
            "no licence stated: not shipped (put a copy in the folder)",
            "Tsinghua alignment evaluation set, the files as in neulab/awesome-align@5f150d4:examples/",
            "Liu & Sun (2015), Contrastive Unsupervised Word Alignment with Non-Local Features, AAAI 2015",
        ),
        TestSet(
            "denero",
            "Chinese-English NIST 2002 (DeNero & Macherey 2011)",
            ("zh", "en"),
            150,
            3668,
            989,
            "zhen_denero_nist02",
            {
                "train.zh": "9e75ed066e7686df69f9ed6376763749d9bfee9f9589cd8be46f878587aecb1f",
                "train.en": "70abe06da03f56d85be1ed4d8c31998ad673593d32622344aa57c2602a2afe10",
                "train.align": "e2107176b5272fcd43808112800d07d28ff37f15fa243c85be28d93db41d3560",
            },
            ("sides", "train.zh", "train.en"),
            "train.align",
            "pharaoh",
            0,
            False,
            False,
            "the gold is MIT (papajohn/zh_en_word_alignment_data), but the text is LDC's NIST 2002 MT evaluation "
            "data: not shipped (put a copy in the folder)",
            "papajohn/zh_en_word_alignment_data@72610f2:zh_en_data/",
            "DeNero & Macherey (2011), Model-Based Aligner Combination Using Dual Decomposition, ACL 2011",
            ("0-based Pharaoh with possible links written 'i-j-P'; English is PTB-tokenized and cased (-LRB-)",),
        ),
        TestSet(
            "pcedt",
            "Czech-English PCEDT (Marecek et al. 2008)",
            ("cs", "en"),
            515,
            10934,
            4510,
            "csen_pcedt515",
            {
                "corpus.cz-en": "f8764ef9579c1202cc8e602fbafc17a1c57062ab5d6406ef7c8acffef45aaa84",
                "czen.wal": "af56fe849e1cc4b6fa7a9f11dee5565c919ab2243f28d7ba33983095779acca2",
            },
            ("pairs", "corpus.cz-en"),
            "czen.wal",
            "naacl",
            1,
            True,
            False,
            "no licence stated, and the English side is Wall Street Journal text of the PCEDT (LDC): not shipped "
            "(put a copy in the folder)",
            "ldmt-muri/alignment-with-openfst@feef036:data/czen-manual-alignments/",
            "Marecek, Zabokrtsky & Novak (2008), Automatic Alignment of Czech and English Deep Syntactic "
            "Dependency Trees, EAMT 2008",
            (
                "the NAACL gold writes the English index first ('sentno en cz S|P') while the text is Czech first: "
                "loading reverses the gold",
            ),
        ),
        TestSet(
            "czenali",
            "English-Czech CzEnAli 1.0 sample (78 pairs)",
            ("en", "cs"),
            78,
            1247,
            454,
            "encs_pcedt78",
            {
                "encs.src-tgt": "bbc539ffa3f53e3fac502fe6d700f3d25a218c9114bfc5b36fb343ade3a6f336",
                "encs.gold": "bd4ac74e62aeb944f3dc256e5482afaad05a2d1e139366e8ea1cc6f7b88a7a6f",
            },
            ("pairs", "encs.src-tgt"),
            "encs.gold",
            "pharaoh",
            0,
            False,
            True,
            "CC BY-SA 4.0 (CzEnAli 1.0); shipped with its licence text",
            "kukas/awesome-align@a9b5146:data/annotated/en-cs/",
            "Kruijff-Korbayova, Chvatalova & Postolache (2006); CzEnAli 1.0 (Marecek 2016), LINDAT/CLARIN",
            (
                "0-based, possible links written 'ipj'; 49 of its English sentences are also in `pcedt`, annotated "
                "anew: a separate set, not a subset",
            ),
        ),
        TestSet(
            "wpt05",
            "English-Hindi (WPT 2005)",
            ("en", "hi"),
            90,
            1408,
            0,
            "enhi_wpt05",
            {
                "test.eng": "7654c611c26d2f132c90ed20743be761d93a5e066aca2446566903fa76ad9d31",
                "test.hin": "2f7d3a65b71a800ded42579346d3ec5cebe3208e13e77d06114ab258e1559c31",
                "test.eng.hin.wa": "47a8b4c3055d810e9f7ca8ae7d69a1fe97647524b4caf56cfabcc87034b93f7b",
            },
            ("wpt", "test.eng", "test.hin"),
            "test.eng.hin.wa",
            "naacl",
            1,
            False,
            False,
            "no licence stated: not shipped (put a copy in the folder)",
            "WPT 2005 shared task; the files as in robertostling/eflomal@81deb59:3rdparty/data/",
            "Martin, Mihalcea & Pedersen (2005), Word Alignment for Languages with Scarce Resources, ACL 2005 "
            "Workshop on Building and Using Parallel Texts",
            (
                "sentence numbers start at 26 (the text's <s snum=N> gives them)",
                "one link (snum 68: English 33, Hindi 34, 1-based) points past the 33 Hindi words: loading drops it, "
                "leaving 1408 sure links of the 1409 in the file",
            ),
            ("drop-links-outside",),
        ),
        TestSet(
            "inesc",
            "Spanish-French Europarl, INESC-ID (Graca et al. 2008)",
            ("es", "fr"),
            100,
            1139,
            292,
            "esfr_inesc100",
            {
                "esfr.src-tgt": "044c52648aadbed1929cd0ec9caa1e5a8fa0f8d6619580b7e8198dfacbf0f0cc",
                "esfr.gold": "f6c45dad78c0e5217f621914bd4aa9bb20775d785a3691989db88f20b2632ded",
            },
            ("pairs", "esfr.src-tgt"),
            "esfr.gold",
            "talp",
            1,
            False,
            False,
            "no licence stated: not shipped (put a copy in the folder)",
            "kukas/awesome-align@a9b5146:data/annotated/es-fr/",
            "Graca, Pardal, Coheur & Caseiro (2008), Building a Golden Collection of Parallel Multi-Language Word "
            "Alignments, LREC 2008",
            ("the gold file has no final newline (100 sentences, 99 line ends)",),
        ),
    )
}
"""Every named test set. Checksums are the sha256 of each original file."""


def names() -> list[str]:
    """The registered names, in registry order."""
    return list(TESTSETS)


def get(name: str) -> TestSet:
    """The entry called ``name``; UnknownTestSetError lists the valid names."""
    if name not in TESTSETS:
        raise UnknownTestSetError(f"unknown test set {name!r}; valid: {', '.join(TESTSETS)}")
    return TESTSETS[name]


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
    root = testsets_dir(folder)
    where = os.path.join(root, spec.folder) if root else f"DIR/{spec.folder}"
    have = "" if root else f" (DIR: --testsets-dir or ${ENV})"
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
    kind, *files = spec.text
    paths = [os.path.join(where, f) for f in files]
    ids = None
    if kind == "pairs":
        pairs = read_text_pairs(paths[0])
        a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    elif kind == "sides":
        a, b = ([split_tokens(line) for line in read_lines(p)] for p in paths)
    elif kind == "wpt":
        (ids, a), (ids_b, b) = read_wpt_text(paths[0]), read_wpt_text(paths[1])
        if ids != ids_b:
            raise AlignmentFormatError(paths[1], None, f"sentence numbers differ from {paths[0]}'s; expected the same")
    else:  # a registry entry of a kind this reader does not know: a bug of the registry, not of the input
        raise TestSetError(f"test set {spec.name!r}: unknown text layout {kind!r}")
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
        where = r["where"] or "missing (not shipped: --testsets-dir or $" + ENV + ")"
        out.append(f"{r['name']:<9} {r['langs']:<6} {r['pairs']:>5} {r['sure']:>6} {r['possible']:>6}  {where}")
    return "\n".join(out)
