"""align.confidence.noise: every kind of the two taxonomies, by hand on small pairs; deterministic; never empty."""

import pytest

from align.confidence.noise import FAMILIES, KINDS, family, make

PAIRS = [
    ("the house is small .".split(), "la maison est petite .".split()),
    ("a cat".split(), "un chat".split()),
    ("we thank the commission".split(), "nous remercions la commission".split()),
]
GERMAN = ["das haus ist klein".split()]


def test_the_two_taxonomies_are_there():
    assert list(KINDS) == [
        "misaligned", "misordered-source", "misordered-target", "wrong-language", "untranslated-source",
        "untranslated-target", "short", "raw-crawl", "truncated", "appended", "omitted", "replaced", "swapped",
    ]  # fmt: skip
    assert {k.source.split()[0] for k in KINDS.values()} == {"Khayrallah", "Bicleaner"}


def test_kinds_by_hand():
    # untranslated: the source copied as the target, and the other way round
    assert make(PAIRS, "untranslated-source")[1] == (["a", "cat"], ["a", "cat"])
    assert make(PAIRS, "untranslated-target")[1] == (["un", "chat"], ["un", "chat"])
    # misaligned: another pair's target, never its own
    assert all(t != p[1] and t in [q[1] for q in PAIRS] for p, (s, t) in zip(PAIRS, make(PAIRS, "misaligned")))
    # misordered: the same words in another order, the other side untouched
    for p, (s, t) in zip(PAIRS, make(PAIRS, "misordered-target")):
        assert s == p[0] and sorted(t) == sorted(p[1]) and t != p[1]
    # wrong language: the third language's sentence
    assert make(PAIRS, "wrong-language", third_language=GERMAN)[0] == (PAIRS[0][0], GERMAN[0])
    # short: both sides one or two words
    assert all(1 <= len(s) <= 2 and 1 <= len(t) <= 2 for s, t in make(PAIRS, "short"))
    # appended: the target, then another pair's
    s, t = make(PAIRS, "appended")[1]
    assert t[:2] == ["un", "chat"] and len(t) > 2
    # omitted: "la maison est petite ." (5 words) loses 5 // 3 = 1 word, order kept
    s, t = make(PAIRS, "omitted")[0]
    assert len(t) == 4 and all(w in PAIRS[0][1] for w in t)
    # truncated: one side cut to its first half (at least one word)
    for p, (s, t) in zip(PAIRS, make(PAIRS, "truncated")):
        assert (s == p[0][: max(1, len(p[0]) // 2)] and t == p[1]) or (
            s == p[0] and t == p[1][: max(1, len(p[1]) // 2)]
        )


def test_deterministic_and_never_empty():
    for kind in KINDS:
        a = make(PAIRS, kind, seed=3, third_language=GERMAN)
        assert a == make(PAIRS, kind, seed=3, third_language=GERMAN), kind
        assert all(s and t for s, t in a), kind
    assert make([], "misaligned") == []


def test_every_kind_is_in_one_family():
    members = [k for kinds in FAMILIES.values() for k in kinds]
    assert sorted(members) == sorted(KINDS) and len(members) == len(set(members))
    assert family("swapped") == family("misordered-target") == "word-order" and family("replaced") == "wrong-words"
    with pytest.raises(ValueError, match="unknown noise kind 'nope'"):
        family("nope")


def test_a_pair_with_an_empty_side_is_refused_by_every_kind():
    # its noise would be empty or no noise at all (``replaced`` sampled from an empty target)
    for kind in KINDS:
        with pytest.raises(ValueError, match="pair 2 has an empty side"):
            make([PAIRS[0], (["a", "b"], [])], kind, third_language=GERMAN)


def test_refusals_name_what_is_valid():
    with pytest.raises(ValueError, match="unknown noise kind 'nope'; valid: misaligned, misordered-source"):
        make(PAIRS, "nope")
    with pytest.raises(ValueError, match="needs sentences of a third language"):
        make(PAIRS, "wrong-language")


def test_swapped_always_changes_a_target_it_can_change():
    pairs = [(["a"], ["x", "y"]), (["a"], ["x", "y", "z"]), (["a"], ["x", "x"]), (["a"], ["w", "x", "y", "z"])]
    for seed in range(20):
        out = make(pairs, "swapped", seed=seed)
        assert out[0][1] == ["y", "x"] and out[1][1] != ["x", "y", "z"] and out[2][1] == ["x", "x"]
        assert sorted(out[3][1]) == ["w", "x", "y", "z"] and out[3][1] != ["w", "x", "y", "z"]
