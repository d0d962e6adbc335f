import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from align.formats import (AlignmentFormatError, LineCountError, LinkRangeError, check_links_in_range,
                           format_links, read_alignments, read_text_pairs, read_wpt_text, split_tokens,
                           write_alignments)
from align.links import Alignments
from conftest import write


def test_talp_is_one_based_with_possible(tmp_path):
    p = write(tmp_path, "g.talp", "1-1 2p3\n\n3-2\n")
    al = read_alignments(p, "talp")
    assert len(al) == 3
    assert al.links(0, "sure") == [(0, 0)] and al.links(0, "possible") == [(1, 2)]
    assert al.links(1) == [] and al.links(2) == [(2, 1)]


def test_pharaoh_zero_based_reverse_and_dash_p(tmp_path):
    p = write(tmp_path, "h.txt", "0-1 3-2-P 4-4-S\n")
    al = read_alignments(p, "pharaoh", reverse=True)
    # reverse swaps the file's sides: 0-1 -> (1, 0)
    assert al.links(0, "sure") == [(1, 0), (4, 4)] and al.links(0, "possible") == [(2, 3)]


def test_base_override_and_crlf_and_gz(tmp_path):
    p = tmp_path / "h.gz"
    with gzip.open(p, "wt", encoding="utf-8") as f:
        f.write("1-2 3-3\r\n2-1\r\n")
    al = read_alignments(str(p), "pharaoh", base=1)
    assert al.to_lists() == [[(0, 1), (2, 2)], [(1, 0)]]


def test_naacl_numbering_and_empty_sentences(tmp_path):
    # Sentences are numbered 26, 27, 29; 27 has no links; 29 has a P link and a confidence.
    p = write(tmp_path, "a.wa", "26 2 1\n26 3 3 S\n29 1 1 P 0.8\n")
    al = read_alignments(p, "naacl", naacl_ids=[26, 27, 29])
    assert al.to_lists("sure") == [[(1, 0), (2, 2)], [], []]
    assert al.links(2, "possible") == [(0, 0)]
    # default numbering 1..max
    p2 = write(tmp_path, "b.wa", "0002 1 1 S\n")
    assert read_alignments(p2, "naacl").to_lists() == [[], [(0, 0)]]


@pytest.mark.parametrize("text,fmt,line,what", [
    ("0-1\n0-x\n", "pharaoh", 2, "bad link '0-x'"),
    ("0-1 2--3\n", "pharaoh", 1, "bad link '2--3'"),
    ("0:1\n", "pharaoh", 1, "bad link '0:1'"),
    ("1-1\n0-1\n", "talp", 2, "index below 1"),
    ("1 2 3\n1 2\n", "naacl", 2, "expected 'sentno i j"),
    ("1 2 3 X\n", "naacl", 1, "expected 'sentno i j"),
    ("0-99999999\n", "pharaoh", 1, "bad link"),
])
def test_rejections_name_file_and_line(tmp_path, text, fmt, line, what):
    p = write(tmp_path, "bad.txt", text)
    with pytest.raises(AlignmentFormatError) as e:
        read_alignments(p, fmt)
    assert e.value.path == p and e.value.line == line
    assert str(e.value).startswith(f"{p}:{line}: ") and what in str(e.value)


def test_undecodable_bytes(tmp_path):
    p = tmp_path / "bin.txt"
    p.write_bytes(b"0-0\n0-1\n\xff\xfe-1\n")
    with pytest.raises(AlignmentFormatError, match=r":3: .*not UTF-8"):
        read_alignments(str(p))


def test_missing_file(tmp_path):
    with pytest.raises(AlignmentFormatError, match="cannot read"):
        read_alignments(str(tmp_path / "nope"))


def test_naacl_unknown_sentence(tmp_path):
    p = write(tmp_path, "a.wa", "5 1 1\n")
    with pytest.raises(AlignmentFormatError, match=r":1: sentence number 5"):
        read_alignments(p, "naacl", naacl_ids=[1, 2])


def test_unknown_format():
    with pytest.raises(ValueError, match="valid: pharaoh, talp, naacl"):
        read_alignments("x", "moses")


def test_links_in_range(tmp_path):
    al = Alignments.from_lists([[(0, 0)], [(2, 1)]])
    check_links_in_range(al, [1, 3], [1, 2], "h")
    with pytest.raises(LinkRangeError, match=r"^h:2: sentence 2: link \(2, 1\)"):
        check_links_in_range(al, [1, 2], [1, 2], "h")
    with pytest.raises(LineCountError):
        check_links_in_range(al, [1], [1], "h")


def test_text_pairs_split_on_ascii_space_only(tmp_path):
    p = write(tmp_path, "t.txt", "a b\u3000c ||| x  y\n")
    assert read_text_pairs(p) == [(["a", "b\u3000c"], ["x", "y"])]
    bad = write(tmp_path, "t2.txt", "a b\n")
    with pytest.raises(AlignmentFormatError, match=r":1: found 0 '\|\|\|'"):
        read_text_pairs(bad)
    assert split_tokens(" a\t b ") == ["a", "b"]


def test_wpt_text(tmp_path):
    p = write(tmp_path, "t.eng", "<s snum=26>The cat .</s>\n<s snum=29> x </s>\n")
    assert read_wpt_text(p) == ([26, 29], [["The", "cat", "."], ["x"]])


def test_format_links():
    assert format_links([(0, 1), (2, 0)], [(1, 1)], "talp") == "1-2 2p2 3-1"
    assert format_links([(0, 1)], [(1, 1)], "pharaoh") == "0-1 1-1-P"
    assert format_links([(0, 1)], reverse=True) == "1-0"


def test_write_is_atomic_and_stdout(tmp_path, capsys):
    al = Alignments.from_lists([[(0, 1)], []], [[(2, 2)], []])
    out = str(tmp_path / "o.talp")
    write_alignments(al, out, "talp")
    assert open(out).read() == "1-2 3p3\n\n"
    assert [f.name for f in tmp_path.iterdir()] == ["o.talp"]
    write_alignments(al, "-", "pharaoh")
    assert capsys.readouterr().out == "0-1 2-2-P\n\n"


corpora = st.lists(st.tuples(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=8),
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=4)), max_size=6)


@settings(max_examples=60, deadline=None)
@given(corpora, st.sampled_from(["pharaoh", "talp", "naacl"]), st.booleans())
def test_write_read_roundtrip(tmp_path_factory, corpus, fmt, reverse):
    al = Alignments.from_lists([s for s, _ in corpus], [p for _, p in corpus])
    path = str(tmp_path_factory.mktemp("rt") / f"a.{fmt}")
    write_alignments(al, path, fmt, reverse=reverse)
    ids = list(range(1, len(al) + 1))
    assert read_alignments(path, fmt, reverse=reverse, naacl_ids=ids) == al
