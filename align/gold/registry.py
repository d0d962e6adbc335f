"""What each named gold set is, as data: :data:`TESTSETS`, one :class:`TestSet` entry per set, every field
named (standard library only).

An entry says what a published word-alignment gold set is: its languages in the order of its text,
its counts of sentence pairs and of sure and possible links (as loaded, after its repairs), how its
original files are laid out (the text layout, one of :data:`align.gold.layouts.LAYOUTS`; the gold's
format, index base and side order), the sha256 of every file, where it comes from, its licence, what
is wrong with it and which repairs (:data:`align.gold.fixes.FIXES`) loading applies. Adding a set is
one entry here (and its files, in ``align/gold/sets/FOLDER/`` when its licence lets it ship);
``tests/gold/test_registry.py`` checks every entry's fields. Loading is :mod:`align.gold.testsets`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


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
    """The gold file's format, as :func:`align.io.formats.read_alignments` names it: ``talp``, ``pharaoh``, ``naacl``."""
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
        """The set's digest: sha256 over its files' names and sha256 digests (the first 12 hex digits are in signatures)."""
        h = hashlib.sha256()
        for name in sorted(self.files):
            h.update(f"{name} {self.files[name]}\n".encode())
        return h.hexdigest()


# -- the entries ----------------------------------------------------------------------------------

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
            name="rwth",
            title="German-English Europarl, RWTH (Vilar et al. 2006)",
            langs=("de", "en"),
            pairs=508,
            sure=9613,
            possible=921,
            folder="deen_rwth",
            files={
                "deen.src-tgt": "381c87431975e8221252b78018987f70ce007caf8ea00807cf57ed0a45fc9e13",
                "deen.gold": "2985def453f3fbce21d091d5193ec407000ee62e20642502961320a470dacbb2",
            },
            text=("pairs", "deen.src-tgt"),
            gold="deen.gold",
            gold_format="talp",
            gold_base=1,
            gold_reversed=False,
            shipped=False,
            licence="free for non-commercial research; not for redistribution (put your own copy in the folder)",
            source="www-i6.informatik.rwth-aachen.de/goldAlignment/; the files as in lisasiyu/Cross-Align@017ba1e:"
            "data/test.de-en and data/deen.talp",
            citation="Vilar, Popovic & Ney (2006), AER: Do we need to 'improve' our alignments?, IWSLT 2006",
            defects=(),
            fixes=(),
        ),
        TestSet(
            name="hansards",
            title="English-French Canadian Hansards (WPT 2003)",
            langs=("en", "fr"),
            pairs=447,
            sure=4038,
            possible=13400,
            folder="enfr_hansards",
            files={
                "enfr.src-tgt": "19d56c3de3634ab8420d553df4d9dfd849502b18225f1599382e98a6de9cfc72",
                "enfr.gold": "0a11b51cba8a92a7608fb00884cb3cf50fe0fcc4e4aa92d70624fd11451c4ddd",
            },
            text=("pairs", "enfr.src-tgt"),
            gold="enfr.gold",
            gold_format="talp",
            gold_base=1,
            gold_reversed=False,
            shipped=True,
            licence=_WPT03_LICENCE,
            source="WPT 2003 test set, gold by Och & Ney (2000); the files as in neulab/awesome-align@5f150d4:examples/",
            citation=_WPT03,
            defects=(
                "French contractions are expanded in the text ('de le', 'je ai'); tokens as the gold counts them",
            ),
            fixes=(),
        ),
        TestSet(
            name="wpt03",
            title="Romanian-English (WPT 2003)",
            langs=("ro", "en"),
            pairs=248,
            sure=6198,
            possible=0,
            folder="roen_wpt03",
            files={
                "roen.src-tgt": "e3ae360038e44813c27ebd470e359bf2d2a2a10e4697129060b3cbafbd2742a7",
                "roen.gold": "12c3ae50f32817ce27edbd272c90b91ac8156823505d25ecd34266804ed65b10",
            },
            text=("pairs", "roen.src-tgt"),
            gold="roen.gold",
            gold_format="talp",
            gold_base=1,
            gold_reversed=False,
            shipped=True,
            licence=_WPT03_LICENCE,
            source="WPT 2003 Romanian-English test set; the files as in neulab/awesome-align@5f150d4:examples/",
            citation=_WPT03,
            defects=("no possible links: every gold link is sure",),
            fixes=(),
        ),
        TestSet(
            name="kftt",
            title="Japanese-English Kyoto Free Translation Task (KFTT)",
            langs=("ja", "en"),
            pairs=582,
            sure=13562,
            possible=0,
            folder="jaen_kftt",
            files={
                "jaen.src-tgt": "64471c1189a30979966078c1172e264558d2aefb376553f7fb1a629d585f5a18",
                "jaen.gold": "05cace5aad9ee118dca8f73d9a98434c80fa5d6531e83a2b27b16057b583afa6",
            },
            text=("pairs", "jaen.src-tgt"),
            gold="jaen.gold",
            gold_format="talp",
            gold_base=1,
            gold_reversed=False,
            shipped=True,
            licence="CC BY-SA 3.0 (NICT's Japanese-English Bilingual Corpus of Wikipedia's Kyoto Articles); shipped with "
            "its licence text",
            source="Neubig (2011), www.phontron.com/kftt/; the files as in neulab/awesome-align@5f150d4 and "
            "lisasiyu/Cross-Align@017ba1e",
            citation="Neubig (2011), The Kyoto Free Translation Task, www.phontron.com/kftt",
            defects=(
                "7 English lines are UTF-8 read as Latin-1 (mojibake, e.g. 'â\\x80\\x93' for '–'): loading repairs "
                "those words (word counts unchanged)",
                "the Japanese side has U+3000 (ideographic space) tokens: words are split on ASCII space and tab only",
            ),
            fixes=("repair-mojibake-second-side",),
        ),
        TestSet(
            name="tsinghua",
            title="Chinese-English, Tsinghua (Liu & Sun 2015)",
            langs=("zh", "en"),
            pairs=450,
            sure=11238,
            possible=178,
            folder="zhen_tsinghua",
            files={
                "zhen.src-tgt": "2a35fb66ad1631587cd00fbd11255dd9a8f4c11413b90aaa10f20d7f1a1cd9a9",
                "zhen.gold": "39e4de909481013653a9bf2b3b0520d9b75c728eff4ff769bd8d11f9cc703a5d",
            },
            text=("pairs", "zhen.src-tgt"),
            gold="zhen.gold",
            gold_format="talp",
            gold_base=1,
            gold_reversed=False,
            shipped=False,
            licence="no licence stated: not shipped (put a copy in the folder)",
            source="Tsinghua alignment evaluation set, the files as in neulab/awesome-align@5f150d4:examples/",
            citation="Liu & Sun (2015), Contrastive Unsupervised Word Alignment with Non-Local Features, AAAI 2015",
            defects=(),
            fixes=(),
        ),
        TestSet(
            name="denero",
            title="Chinese-English NIST 2002 (DeNero & Macherey 2011)",
            langs=("zh", "en"),
            pairs=150,
            sure=3668,
            possible=989,
            folder="zhen_denero_nist02",
            files={
                "train.zh": "9e75ed066e7686df69f9ed6376763749d9bfee9f9589cd8be46f878587aecb1f",
                "train.en": "70abe06da03f56d85be1ed4d8c31998ad673593d32622344aa57c2602a2afe10",
                "train.align": "e2107176b5272fcd43808112800d07d28ff37f15fa243c85be28d93db41d3560",
            },
            text=("sides", "train.zh", "train.en"),
            gold="train.align",
            gold_format="pharaoh",
            gold_base=0,
            gold_reversed=False,
            shipped=False,
            licence="the gold is MIT (papajohn/zh_en_word_alignment_data), but the text is LDC's NIST 2002 MT evaluation "
            "data: not shipped (put a copy in the folder)",
            source="papajohn/zh_en_word_alignment_data@72610f2:zh_en_data/",
            citation="DeNero & Macherey (2011), Model-Based Aligner Combination Using Dual Decomposition, ACL 2011",
            defects=(
                "0-based Pharaoh with possible links written 'i-j-P'; English is PTB-tokenized and cased (-LRB-)",
            ),
            fixes=(),
        ),
        TestSet(
            name="pcedt",
            title="Czech-English PCEDT (Marecek et al. 2008)",
            langs=("cs", "en"),
            pairs=515,
            sure=10934,
            possible=4510,
            folder="csen_pcedt515",
            files={
                "corpus.cz-en": "f8764ef9579c1202cc8e602fbafc17a1c57062ab5d6406ef7c8acffef45aaa84",
                "czen.wal": "af56fe849e1cc4b6fa7a9f11dee5565c919ab2243f28d7ba33983095779acca2",
            },
            text=("pairs", "corpus.cz-en"),
            gold="czen.wal",
            gold_format="naacl",
            gold_base=1,
            gold_reversed=True,
            shipped=False,
            licence="no licence stated, and the English side is Wall Street Journal text of the PCEDT (LDC): not shipped "
            "(put a copy in the folder)",
            source="ldmt-muri/alignment-with-openfst@feef036:data/czen-manual-alignments/",
            citation="Marecek, Zabokrtsky & Novak (2008), Automatic Alignment of Czech and English Deep Syntactic "
            "Dependency Trees, EAMT 2008",
            defects=(
                "the NAACL gold writes the English index first ('sentno en cz S|P') while the text is Czech first: "
                "loading reverses the gold",
            ),
            fixes=(),
        ),
        TestSet(
            name="czenali",
            title="English-Czech CzEnAli 1.0 sample (78 pairs)",
            langs=("en", "cs"),
            pairs=78,
            sure=1247,
            possible=454,
            folder="encs_pcedt78",
            files={
                "encs.src-tgt": "bbc539ffa3f53e3fac502fe6d700f3d25a218c9114bfc5b36fb343ade3a6f336",
                "encs.gold": "bd4ac74e62aeb944f3dc256e5482afaad05a2d1e139366e8ea1cc6f7b88a7a6f",
            },
            text=("pairs", "encs.src-tgt"),
            gold="encs.gold",
            gold_format="pharaoh",
            gold_base=0,
            gold_reversed=False,
            shipped=True,
            licence="CC BY-SA 4.0 (CzEnAli 1.0); shipped with its licence text",
            source="kukas/awesome-align@a9b5146:data/annotated/en-cs/",
            citation="Kruijff-Korbayova, Chvatalova & Postolache (2006); CzEnAli 1.0 (Marecek 2016), LINDAT/CLARIN",
            defects=(
                "0-based, possible links written 'ipj'; 49 of its English sentences are also in `pcedt`, annotated "
                "anew: a separate set, not a subset",
            ),
            fixes=(),
        ),
        TestSet(
            name="wpt05",
            title="English-Hindi (WPT 2005)",
            langs=("en", "hi"),
            pairs=90,
            sure=1408,
            possible=0,
            folder="enhi_wpt05",
            files={
                "test.eng": "7654c611c26d2f132c90ed20743be761d93a5e066aca2446566903fa76ad9d31",
                "test.hin": "2f7d3a65b71a800ded42579346d3ec5cebe3208e13e77d06114ab258e1559c31",
                "test.eng.hin.wa": "47a8b4c3055d810e9f7ca8ae7d69a1fe97647524b4caf56cfabcc87034b93f7b",
            },
            text=("wpt", "test.eng", "test.hin"),
            gold="test.eng.hin.wa",
            gold_format="naacl",
            gold_base=1,
            gold_reversed=False,
            shipped=False,
            licence="no licence stated: not shipped (put a copy in the folder)",
            source="WPT 2005 shared task; the files as in robertostling/eflomal@81deb59:3rdparty/data/",
            citation="Martin, Mihalcea & Pedersen (2005), Word Alignment for Languages with Scarce Resources, ACL 2005 "
            "Workshop on Building and Using Parallel Texts",
            defects=(
                "sentence numbers start at 26 (the text's <s snum=N> gives them)",
                "one link (snum 68: English 33, Hindi 34, 1-based) points past the 33 Hindi words: loading drops it, "
                "leaving 1408 sure links of the 1409 in the file",
            ),
            fixes=("drop-links-outside",),
        ),
        TestSet(
            name="inesc",
            title="Spanish-French Europarl, INESC-ID (Graca et al. 2008)",
            langs=("es", "fr"),
            pairs=100,
            sure=1139,
            possible=292,
            folder="esfr_inesc100",
            files={
                "esfr.src-tgt": "044c52648aadbed1929cd0ec9caa1e5a8fa0f8d6619580b7e8198dfacbf0f0cc",
                "esfr.gold": "f6c45dad78c0e5217f621914bd4aa9bb20775d785a3691989db88f20b2632ded",
            },
            text=("pairs", "esfr.src-tgt"),
            gold="esfr.gold",
            gold_format="talp",
            gold_base=1,
            gold_reversed=False,
            shipped=False,
            licence="no licence stated: not shipped (put a copy in the folder)",
            source="kukas/awesome-align@a9b5146:data/annotated/es-fr/",
            citation="Graca, Pardal, Coheur & Caseiro (2008), Building a Golden Collection of Parallel Multi-Language Word "
            "Alignments, LREC 2008",
            defects=("the gold file has no final newline (100 sentences, 99 line ends)",),
            fixes=(),
        ),
    )
}
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
