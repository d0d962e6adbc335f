"""The corpus alignment container: every link of a corpus in flat numpy arrays.

Convention (the whole toolkit): links are 0-based ``(src, tgt)`` pairs; sentence ``k`` owns rows
``offsets[k]:offsets[k + 1]``. Sure and possible links are kept apart by the boolean ``sure``.
Conversions to 1-based, talp or target-first happen only in :mod:`align.io.formats`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

Link = tuple[int, int]

# The largest word position a link may have: 2**21 tokens per side is far past any real sentence. (A link key,
# sentence | src | tgt, packs positions in as many bits as the corpus's largest needs: see _side_bits.)
_SIDE_BITS = 21
_SIDE_MAX = (1 << _SIDE_BITS) - 1


@dataclass(frozen=True)
class Alignments:
    """Links of a corpus. ``offsets`` (n_sent + 1,), ``src``/``tgt`` (n_links,) int, ``sure`` (n_links,) bool.

    Within a sentence links are unique and sorted by ``(src, tgt)``; a link given both as sure
    and as possible is sure. Build with :meth:`from_arrays` or :meth:`from_lists`, which enforce this.
    """

    offsets: np.ndarray
    src: np.ndarray
    tgt: np.ndarray
    sure: np.ndarray

    @classmethod
    def from_arrays(
        cls,
        sent: np.ndarray,
        src: np.ndarray,
        tgt: np.ndarray,
        sure: np.ndarray | None,
        n_sentences: int,
    ) -> Alignments:
        """Build from per-link sentence ids, 0-based src/tgt (n_links,) and optional sure flags."""
        sent = np.asarray(sent, dtype=np.int64)
        src = np.asarray(src, dtype=np.int64)
        tgt = np.asarray(tgt, dtype=np.int64)
        sure_arr = np.ones(len(src), dtype=bool) if sure is None else np.asarray(sure, dtype=bool)
        if not (len(sent) == len(src) == len(tgt) == len(sure_arr)):
            raise ValueError("sent, src, tgt and sure must have the same length")
        if len(src) and (src.min() < 0 or tgt.min() < 0):
            raise ValueError("link indices must be >= 0")
        if len(src) and (src.max() > _SIDE_MAX or tgt.max() > _SIDE_MAX):
            raise ValueError(f"link index above {_SIDE_MAX}: not a word position")
        if len(sent) and (sent.min() < 0 or sent.max() >= n_sentences):
            raise ValueError(f"sentence id outside 0..{n_sentences - 1}")
        # One int64 sort: key with the "possible" flag as its lowest bit, so that for a link given
        # both ways the sure copy sorts first and survives the de-duplication.
        # positions take the bits the largest one needs (a real corpus: 8 or so), the sentence id the rest
        bits = _side_bits(src, tgt)
        _check_room(n_sentences, bits, 1)
        key = _keys(sent, src, tgt, bits) << 1
        key |= ~sure_arr
        del sent, src, tgt
        key.sort()
        keep = np.ones(len(key), dtype=bool)
        keep[1:] = (key[1:] >> 1) != (key[:-1] >> 1)
        key = key[keep]
        sure_out = (key & 1) == 0
        key >>= 1
        mask = (1 << bits) - 1
        tgt_out = (key & mask).astype(np.int32)
        src_out = ((key >> bits) & mask).astype(np.int32)
        key >>= 2 * bits
        offsets = np.zeros(n_sentences + 1, dtype=np.int64)
        np.cumsum(np.bincount(key, minlength=n_sentences), out=offsets[1:])
        return cls(offsets, src_out, tgt_out, sure_out)

    @classmethod
    def from_lists(
        cls,
        sure: Sequence[Iterable[Link]],
        possible: Sequence[Iterable[Link]] | None = None,
    ) -> Alignments:
        """Build from one iterable of ``(src, tgt)`` links per sentence (sure, and optionally possible)."""
        n = len(sure)
        if possible is not None and len(possible) != n:
            raise ValueError(f"{n} sentences of sure links but {len(possible)} of possible links")
        sents, srcs, tgts, flags = [], [], [], []
        for flag, corpus in ((True, sure), (False, possible or ())):
            for k, links in enumerate(corpus):
                for s, t in links:
                    sents.append(k)
                    srcs.append(s)
                    tgts.append(t)
                    flags.append(flag)
        return cls.from_arrays(
            np.array(sents, dtype=np.int64),
            np.array(srcs, dtype=np.int64),
            np.array(tgts, dtype=np.int64),
            np.array(flags, dtype=bool),
            n,
        )

    @classmethod
    def empty(cls, n_sentences: int) -> Alignments:
        """A corpus of ``n_sentences`` sentences without links."""
        z = np.zeros(0, dtype=np.int64)
        return cls.from_arrays(z, z, z, np.zeros(0, dtype=bool), n_sentences)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_links(self) -> int:
        """Number of links, sure and possible."""
        return len(self.src)

    def sentence_ids(self) -> np.ndarray:
        """Sentence index of every link, (n_links,) int64."""
        return np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.offsets))

    def keys(self, bits: int | None = None) -> np.ndarray:
        """(n_links,) one sorted int64 key per link, unique in the corpus: (sentence, src, tgt) packed, each position
        in ``bits`` bits (default: as many as this corpus's largest needs; give two corpora's keys the same to
        compare them, :meth:`side_bits`). ValueError when the sentences and positions do not fit in 63 bits."""
        bits = self.side_bits() if bits is None else bits
        _check_room(len(self), bits, 0)
        return _keys(self.sentence_ids(), self.src, self.tgt, bits)

    def side_bits(self) -> int:
        """Bits the largest word position (src or tgt) of the corpus needs, at least 1."""
        return _side_bits(self.src, self.tgt)

    def links(self, k: int, which: str = "all") -> list[Link]:
        """Links of sentence ``k`` as sorted ``(src, tgt)`` tuples; ``which`` is all, sure or possible."""
        a, b = self.offsets[k], self.offsets[k + 1]
        src, tgt, sure = self.src[a:b], self.tgt[a:b], self.sure[a:b]
        if which == "sure":
            src, tgt = src[sure], tgt[sure]
        elif which == "possible":
            src, tgt = src[~sure], tgt[~sure]
        elif which != "all":
            raise ValueError(f"unknown link selection {which!r}; valid: all, sure, possible")
        return list(zip(src.tolist(), tgt.tolist()))

    def to_lists(self, which: str = "all") -> list[list[Link]]:
        """All sentences' links, as :meth:`links` gives them."""
        return [self.links(k, which) for k in range(len(self))]

    def reversed(self) -> Alignments:
        """The same links with source and target swapped (``(s, t)`` -> ``(t, s)``)."""
        return Alignments.from_arrays(self.sentence_ids(), self.tgt, self.src, self.sure, len(self))

    def all_sure(self) -> Alignments:
        """Every link, possible ones included, marked sure."""
        return Alignments(self.offsets, self.src, self.tgt, np.ones_like(self.sure))

    def select(self, sentences: np.ndarray) -> Alignments:
        """A corpus of the given sentences (indices, repeats allowed), in that order."""
        sentences = np.asarray(sentences, dtype=np.int64)
        counts = np.diff(self.offsets)[sentences]
        starts = self.offsets[:-1][sentences]
        within = np.arange(counts.sum(), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = np.repeat(starts, counts) + within
        offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Alignments(offsets, self.src[rows], self.tgt[rows], self.sure[rows])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Alignments):
            return NotImplemented
        return (
            np.array_equal(self.offsets, other.offsets)
            and np.array_equal(self.src, other.src)
            and np.array_equal(self.tgt, other.tgt)
            and np.array_equal(self.sure, other.sure)
        )

    __hash__ = None  # type: ignore[assignment]


def _side_bits(src: np.ndarray, tgt: np.ndarray) -> int:
    """Bits the largest of the positions needs (at least 1)."""
    top = max((int(a.max()) for a in (src, tgt) if len(a)), default=0)
    return max(1, top.bit_length())


def _check_room(n_sentences: int, bits: int, extra: int) -> None:
    """ValueError unless sentence ids below ``n_sentences``, two positions of ``bits`` bits and ``extra`` flag bits
    pack into a non-negative int64 (a silent overflow would merge links of different sentences)."""
    need = max(n_sentences - 1, 0).bit_length() + 2 * bits + extra
    if need > 63:
        raise ValueError(
            f"{n_sentences} sentences with word positions up to {(1 << bits) - 1}: their link keys need {need} bits, "
            "more than an int64 holds; split the corpus into blocks"
        )


def _keys(sent: np.ndarray, src: np.ndarray, tgt: np.ndarray, bits: int) -> np.ndarray:
    return (
        (np.asarray(sent, dtype=np.int64) << (2 * bits))
        | (np.asarray(src, dtype=np.int64) << bits)
        | np.asarray(tgt, dtype=np.int64)
    )
