"""Noise of the kinds real parallel corpora carry, made from clean sentence pairs (standard library only).

What a sentence score must catch (issue "Sentence scores that catch the noise real corpora carry"): every
kind of Khayrallah & Koehn's taxonomy (WMT 2018, "On the impact of various types of noise on neural machine
translation", Table 1: misaligned sentences, misordered words, wrong language, untranslated sentences, short
segments, raw crawl data) and the synthetic negatives Bicleaner trains its classifier on (Sánchez-Cartagena
et al. 2018; Zaragoza-Bernabeu et al. 2022, Bicleaner AI: random pairs, truncated and appended segments, words
omitted, replaced by others of similar frequency, or swapped). Each kind is one registry entry
(:data:`KINDS`) that says which taxonomy it comes from and what it needs; :func:`make` builds noisy copies of
sentence pairs, deterministically for a seed. A kind is measured leave-one-kind-out: a score is fitted on the
others' negatives and scored on it (``benchmarks/sentence_scores.py``; and leave-one-family-out, :data:`FAMILIES`).

Pairs are ``(source words, target words)``; a kind never returns an empty side. On a side of one word the kinds
that cut, drop, reorder or swap words (``short``, ``truncated``, ``omitted``, ``misordered-*``, ``swapped``) can
only return it as it was: measure them on pairs of two words or more.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..spec.registry import add

Pair = tuple[list[str], list[str]]

_KK18 = "Khayrallah & Koehn 2018"
_BICLEANER = "Bicleaner (Sanchez-Cartagena et al. 2018; Bicleaner AI, Zaragoza-Bernabeu et al. 2022)"

# Tokens of the boilerplate that crawled text is full of (menus, links, markup, counters): a raw-crawl target.
_CRAWL = (
    "home", "|", "login", "»", "©", "2018", "all", "rights", "reserved", "click", "here", "http://www.", ".com",
    "<br>", "&nbsp;", "•", "next", ">", "share", "tweet", "0", "1", "12", "404", "page", "menu", "cookies",
)  # fmt: skip


@dataclass(frozen=True)
class NoiseContext:
    """What a kind may read besides the pair: every clean pair (for another pair's side), the target side's
    word frequencies, and sentences of a third language (``wrong-language``)."""

    pairs: Sequence[Pair]
    third_language: Sequence[list[str]] = ()
    target_counts: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class Kind:
    """One kind of noise: ``make(pair, index, rng, context)`` -> the noisy pair."""

    name: str
    description: str
    source: str
    make: Callable[[Pair, int, random.Random, NoiseContext], Pair]
    needs: frozenset[str] = frozenset()


KINDS: dict[str, Kind] = {}
"""Every kind, by name, in the order of the two taxonomies."""


def register(kind: Kind) -> Kind:
    """Add a kind to :data:`KINDS` (a name once)."""
    return add(KINDS, kind.name, kind, "noise kind")


def _other(index: int, n: int, rng: random.Random) -> int:
    """Another pair's index than ``index`` (itself when there is one pair only)."""
    if n == 1:
        return index
    k = rng.randrange(n - 1)
    return k if k < index else k + 1


def _shuffled(words: list[str], rng: random.Random) -> list[str]:
    """The words in another order (the same list for fewer than 2 different words)."""
    if len(set(words)) < 2:
        return list(words)
    out = list(words)
    while out == words:
        rng.shuffle(out)
    return out


def _misaligned(p: Pair, i: int, rng: random.Random, c: NoiseContext) -> Pair:
    return p[0], list(c.pairs[_other(i, len(c.pairs), rng)][1])


def _wrong_language(p: Pair, i: int, rng: random.Random, c: NoiseContext) -> Pair:
    return p[0], list(c.third_language[rng.randrange(len(c.third_language))])


def _short(p: Pair, i: int, rng: random.Random, c: NoiseContext) -> Pair:
    k = rng.choice((1, 2))
    return p[0][:k], p[1][:k]


def _raw_crawl(p: Pair, i: int, rng: random.Random, c: NoiseContext) -> Pair:
    return p[0], [rng.choice(_CRAWL) for _ in range(max(2, len(p[1])))]


def _truncated(p: Pair, i: int, rng: random.Random, c: NoiseContext) -> Pair:
    s, t = p
    return (s[: max(1, len(s) // 2)], t) if rng.random() < 0.5 else (s, t[: max(1, len(t) // 2)])


def _appended(p: Pair, i: int, rng: random.Random, c: NoiseContext) -> Pair:
    return p[0], p[1] + list(c.pairs[_other(i, len(c.pairs), rng)][1])


def _omitted(p: Pair, i: int, rng: random.Random, c: NoiseContext) -> Pair:
    t = p[1]
    if len(t) < 2:
        return p[0], list(t)
    drop = set(rng.sample(range(len(t)), max(1, len(t) // 3)))
    return p[0], [w for k, w in enumerate(t) if k not in drop]


def _replaced(p: Pair, i: int, rng: random.Random, c: NoiseContext) -> Pair:
    """A third of the target words replaced by other target-side words of the nearest frequency rank."""
    ranked = [w for w, _ in c.target_counts.most_common()]
    rank = {w: k for k, w in enumerate(ranked)}
    t = list(p[1])
    if len(ranked) < 2:
        return p[0], t
    for k in rng.sample(range(len(t)), max(1, len(t) // 3)):
        r = rank.get(t[k], len(ranked) - 1)
        near = [ranked[j] for j in (r - 2, r - 1, r + 1, r + 2) if 0 <= j < len(ranked) and ranked[j] != t[k]]
        t[k] = rng.choice(near) if near else t[k]
    return p[0], t


for _kind in (
    Kind("misaligned", "the target of another pair (not a translation)", _KK18, _misaligned),
    Kind("misordered-source", "the source's words in a random order", _KK18,
         lambda p, i, r, c: (_shuffled(p[0], r), list(p[1]))),
    Kind("misordered-target", "the target's words in a random order", _KK18,
         lambda p, i, r, c: (list(p[0]), _shuffled(p[1], r))),
    Kind("wrong-language", "the target replaced by a sentence of a third language", _KK18, _wrong_language,
         frozenset({"third-language"})),
    Kind("untranslated-source", "the source copied as the target (left untranslated)", _KK18,
         lambda p, i, r, c: (list(p[0]), list(p[0]))),
    Kind("untranslated-target", "the target copied as the source", _KK18, lambda p, i, r, c: (list(p[1]), list(p[1]))),
    Kind("short", "both sides cut to their first one or two words (short segments)", _KK18, _short),
    Kind("raw-crawl", "the target replaced by crawl boilerplate (menus, links, markup, numbers)", _KK18, _raw_crawl),
    Kind("truncated", "one side (either, at random) cut to its first half", _BICLEANER, _truncated),
    Kind("appended", "another pair's target appended to the target", _BICLEANER, _appended),
    Kind("omitted", "a third of the target's words left out", _BICLEANER, _omitted),
    Kind("replaced", "a third of the target's words replaced by words of similar frequency", _BICLEANER, _replaced),
    Kind("swapped", "two adjacent target words swapped, twice", _BICLEANER,
         lambda p, i, r, c: (list(p[0]), _swap(p[1], r, 2))),
):  # fmt: skip
    register(_kind)


FAMILIES: dict[str, tuple[str, ...]] = {
    "unrelated-target": ("misaligned", "wrong-language", "raw-crawl", "appended"),
    "word-order": ("misordered-source", "misordered-target", "swapped"),
    "untranslated": ("untranslated-source", "untranslated-target"),
    "missing-words": ("short", "truncated", "omitted"),
    "wrong-words": ("replaced",),
}
"""Kinds made the same way, by family: target words that translate nothing of the source (another sentence, a third
language, boilerplate, an appended one), words out of order, a side copied for the other, words missing, words
replaced. Leave-one-kind-out fits on the measured kind's twins (``misordered-source`` when measuring
``misordered-target``); leave-one-family-out fits on none of them: what a score finds of noise unlike any it saw."""


def family(kind: str) -> str:
    """The :data:`FAMILIES` entry ``kind`` is in; ValueError naming the valid kinds."""
    for name, kinds in FAMILIES.items():
        if kind in kinds:
            return name
    raise ValueError(f"unknown noise kind {kind!r}; valid: {', '.join(KINDS)}")


def _swap(words: list[str], rng: random.Random, times: int) -> list[str]:
    """Up to ``times`` swaps of adjacent words that differ, at positions that do not overlap (so no swap undoes
    another); the words unchanged only when no two adjacent words differ."""
    candidates = [k for k in range(len(words) - 1) if words[k] != words[k + 1]]
    rng.shuffle(candidates)
    out, used = list(words), set[int]()
    for k in candidates:
        if len(used) // 2 >= times:
            break
        if k in used or k + 1 in used:
            continue
        out[k], out[k + 1] = out[k + 1], out[k]
        used |= {k, k + 1}
    return out


def make(pairs: Sequence[Pair], kind: str, seed: int = 1, third_language: Sequence[list[str]] = ()) -> list[Pair]:
    """Noisy copies of ``pairs`` of one kind (:data:`KINDS`), one per pair, in order; the same for a seed.
    ValueError naming the valid kinds, or what a kind needs and was not given."""
    if kind not in KINDS:
        raise ValueError(f"unknown noise kind {kind!r}; valid: {', '.join(KINDS)}")
    k = KINDS[kind]
    if "third-language" in k.needs and (not third_language or not all(third_language)):
        raise ValueError(f"noise kind {kind!r} needs sentences of a third language (third_language), none empty")
    if not pairs:
        return []
    empty = next((i for i, (s, t) in enumerate(pairs) if not s or not t), None)
    if empty is not None:  # noise of a pair without words on a side would be empty, or no noise at all
        raise ValueError(f"pair {empty + 1} has an empty side; noise is made from translations with words on both")
    context = NoiseContext(pairs, third_language, Counter(w for _, t in pairs for w in t))
    rng = random.Random(f"{seed}:{kind}")  # a kind's noise does not depend on which other kinds are made
    out = []
    for i, p in enumerate(pairs):
        s, t = k.make((list(p[0]), list(p[1])), i, rng, context)
        out.append((s or list(p[0][:1]), t or list(p[1][:1])))  # never an empty side
    return out
