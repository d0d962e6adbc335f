"""One reader per text layout (align.gold.layouts), each on a tiny file with values read by hand."""

import pytest
from conftest import write

from align.gold.layouts import LAYOUTS, UnknownLayoutError, read_pairs, read_sides, read_text, read_wpt
from align.gold.registry import TestSetError
from align.io.errors import AlignmentFormatError


def test_the_layouts_by_name():
    assert LAYOUTS == {"pairs": read_pairs, "sides": read_sides, "wpt": read_wpt}


def test_pairs_reads_one_file_of_both_sides(tmp_path):
    path = write(tmp_path, "t.src-tgt", "the house ||| la maison\nyes ||| oui  !\n")
    assert read_text("pairs", [path]) == ([["the", "house"], ["yes"]], [["la", "maison"], ["oui", "!"]], None)


def test_sides_reads_one_file_a_side_split_on_ascii_space_only(tmp_path):
    a = write(tmp_path, "t.ja", "京都\u3000の 寺\n猫\n")  # U+3000 is part of a token, not a space
    b = write(tmp_path, "t.en", "the temple of Kyoto\ncat\n")
    assert read_text("sides", [a, b]) == (
        [["京都\u3000の", "寺"], ["猫"]],
        [["the", "temple", "of", "Kyoto"], ["cat"]],
        None,
    )


def test_wpt_reads_the_sentence_numbers(tmp_path):
    a = write(tmp_path, "t.eng", "<s snum=26> a small house </s>\n<s snum=27> yes </s>\n")
    b = write(tmp_path, "t.hin", '<s snum="26"> एक छोटा घर </s>\n<s snum=27> हाँ </s>\n')
    assert read_text("wpt", [a, b]) == ([["a", "small", "house"], ["yes"]], [["एक", "छोटा", "घर"], ["हाँ"]], [26, 27])


def test_wpt_sides_must_number_their_sentences_alike(tmp_path):
    a = write(tmp_path, "t.eng", "<s snum=26> a </s>\n<s snum=27> b </s>\n")
    b = write(tmp_path, "t.hin", "<s snum=26> x </s>\n<s snum=28> y </s>\n")
    with pytest.raises(AlignmentFormatError, match=r"t\.hin: sentence numbers differ from .*t\.eng's"):
        read_text("wpt", [a, b])


def test_a_wpt_line_without_its_tags_is_refused_with_its_line(tmp_path):
    a = write(tmp_path, "t.eng", "<s snum=26> a </s>\nb\n")
    with pytest.raises(AlignmentFormatError, match=r"t\.eng:2: found 'b'; expected '<s snum=N> \.\.\. </s>'"):
        read_text("wpt", [a, a])


def test_an_unknown_layout_lists_the_valid_ones(tmp_path):
    with pytest.raises(UnknownLayoutError, match=r"^unknown text layout 'tsv'; valid: pairs, sides, wpt$"):
        read_text("tsv", [str(tmp_path / "t.tsv")])
    assert issubclass(UnknownLayoutError, TestSetError)


@pytest.mark.parametrize("layout, n", [("pairs", 2), ("sides", 1), ("wpt", 3)])
def test_a_layout_given_the_wrong_number_of_files_says_so(tmp_path, layout, n):
    with pytest.raises(TestSetError, match=rf"text layout '{layout}' reads [12] file\(s\); the entry names {n}"):
        read_text(layout, [str(tmp_path / f"f{i}") for i in range(n)])
