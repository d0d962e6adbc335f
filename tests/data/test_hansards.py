import os

import pytest

from align.gold.testsets import shared_data_dir
from data.prep.hansards import collect, keep, tokenize


@pytest.mark.parametrize(
    "raw, lang, words",
    [
        # elisions get their full form, fused articles are split, as in the WPT03 gold
        ("L'opposition s'y oppose, n'est-ce pas?", "fr", "le opposition se y oppose , ne est - ce pas ?"),
        (
            "C'est l'heure du vote aux Communes, des amis qu'on aime.",
            "fr",
            "ce est le heure de le vote à les communes , de les amis que on aime .",
        ),
        (
            "Jusqu'à quelqu'un, s'il le faut; aujourd'hui M. Smith",
            "fr",
            "jusque à quelque un , se il le faut ; aujourd' hui m. smith",
        ),
        ("l&apos; homme d&apos; un", "fr", "le homme de un"),  # Multi30k's escaped, already split text
        (
            "The Auditor General's report, Mr. Speaker -- two-thirds",
            "en",
            "the auditor general 's report , mr. speaker -- two - thirds",
        ),
        (
            "$100 million (1,122,000) at 6.42 p.m. We don't.",
            "en",
            "$ 100 million ( 1,122,000 ) at 6.42 p.m. we do n't .",
        ),
        ("a man &apos;s hat", "en", "a man 's hat"),
    ],
)
def test_tokenize_matches_the_gold_style(raw, lang, words):
    assert tokenize(raw, lang) == words.split()


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="expected one of en, fr"):
        tokenize("x", "de")


def test_gold_text_is_almost_a_fixed_point():
    """Tokenizing the gold's own (lowercased) words gives them back: 888 of 894 sides (measured;
    the 6 others glue digits and letters, 1960s, 24l, or keep 'au - dessus' unexpanded)."""
    path = os.path.join(shared_data_dir(), "gold", "enfr_hansards", "enfr.src-tgt")
    if not os.path.exists(path):
        pytest.skip("no ../shared gold")
    same = total = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            for text, lang in zip(line.split(" ||| "), ("en", "fr")):
                words = text.lower().split()
                same += tokenize(" ".join(words), lang) == words
                total += 1
    assert (same, total) == (888, 894)


def test_keep_filters():
    assert keep([], ["a"], "", "a") == "empty"
    assert keep(["a"] * 101, ["b"], "a", "b") == "length"
    assert keep(["a"], ["b"], "x" * 21, "y" * 60) == "ratio"  # 60 > 2.5 x 21
    assert keep(["a"], ["b"], "x" * 21, "y" * 52) is None
    assert keep(["a"], ["b"], "x", "y" * 20) is None  # short pairs are never judged by ratio


def _write_set(root, name, en, fr):
    os.makedirs(os.path.join(root, name))
    for side, lines in (("en", en), ("fr", fr)):
        with open(os.path.join(root, name, f"{name}.{side}"), "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)


def test_collect_holds_out_the_last_hansard_pairs(tmp_path, monkeypatch):
    import data.prep.hansards as h

    monkeypatch.setattr(h, "HELD_OUT_VALID", 2)
    monkeypatch.setattr(h, "HELD_OUT_TEST", 1)
    root = tmp_path / "parallel" / "enfr_extra"
    en = [f"Sentence {i}." for i in range(6)] + ["Hear, hear." + " x" * 40]
    fr = [f"Phrase {i}." for i in range(6)] + ["Bravo!"]  # the last pair: a length-ratio slip, held out anyway
    _write_set(str(root), h.HANSARD, en, fr)
    _write_set(str(root), "news", ["It's news."], ["C'est l'info."])
    c = collect(str(tmp_path), multi30k=False)
    assert c.train == [(f"sentence {i} .", f"phrase {i} .") for i in range(4)] + [("it 's news .", "ce est le info .")]
    assert c.valid == [("sentence 4 .", "phrase 4 ."), ("sentence 5 .", "phrase 5 .")]
    assert c.test == [(" ".join(tokenize(en[6], "en")), "bravo !")]
    assert c.sets == {h.HANSARD: 4, "news": 1} and c.dropped == {}


def test_collect_counts_dropped_pairs_and_checks_line_counts(tmp_path, monkeypatch):
    import data.prep.hansards as h

    monkeypatch.setattr(h, "HELD_OUT_VALID", 0)
    monkeypatch.setattr(h, "HELD_OUT_TEST", 0)
    root = str(tmp_path / "parallel" / "enfr_extra")
    _write_set(root, h.HANSARD, ["Yes.", "We agree." + " no" * 20, "!"], ["Oui.", "D'accord.", "?"])
    c = collect(str(tmp_path), multi30k=False)
    assert c.train == [("yes .", "oui ."), ("!", "?")] and c.dropped == {"ratio": 1}
    _write_set(root, "bad", ["a", "b"], ["c"])
    with pytest.raises(ValueError, match="bad.en has 2 lines but .*bad.fr has 1"):
        collect(str(tmp_path), multi30k=False)
