import gzip
import os

import numpy as np
import pytest
from conftest import write
from hypothesis import given, settings, strategies as st

from align.io.atomic import write_text_atomic
from align.io.errors import AlignmentFormatError, LineCountError, LinkRangeError
from align.io.formats import (
    FORMATS,
    AlignmentStream,
    TextLengthStream,
    format_links,
    read_alignments,
    write_alignments,
)
from align.io.lines import read_lines
from align.io.text import check_links_in_range, read_text_pairs, read_wpt_text, split_tokens
from align.links.alignments import Alignments


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


@pytest.mark.parametrize(
    "text,fmt,line,what",
    [
        ("0-1\n0-x\n", "pharaoh", 2, "bad link '0-x'"),
        ("0-1 2--3\n", "pharaoh", 1, "bad link '2--3'"),
        ("0:1\n", "pharaoh", 1, "bad link '0:1'"),
        ("1-1\n0-1\n", "talp", 2, "index below 1"),
        ("1 2 3\n1 2\n", "naacl", 2, "expected 'sentno i j"),
        ("1 2 3 X\n", "naacl", 1, "expected 'sentno i j"),
        ("0-99999999\n", "pharaoh", 1, "bad link"),
        # 7 digits parse but are no word position: 2**21 - 1 = 2097151 is the largest index
        ("0-0\n0-2097152\n", "pharaoh", 2, "index above 2097151 (link 0-2097152)"),
        ("1-2097153\n", "talp", 1, "index above 2097152 (link 1-2097153)"),  # 1-based: 2097152 is 2097151
        ("1 9999999 1\n", "naacl", 1, "index above 2097152"),
        ("0 1 1\n", "naacl", 1, "sentence number 0; expected 1 to 9999999"),
        ("123456789 1 1\n", "naacl", 1, "sentence number 123456789; expected 1 to 9999999"),
        ("1 0 1\n", "naacl", 1, "index below 1"),
        ("0--1\n", "pharaoh", 1, "bad link '0--1'"),
        ("-1-0\n", "pharaoh", 1, "bad link '-1-0'"),
        ("0-1\r2-3\n", "pharaoh", 1, "bad link"),  # a lone CR is not a line end
        ("0-\u0663\n", "pharaoh", 1, "bad link '0-\u0663'"),  # ASCII digits only
        ("1 \u0663 1\n", "naacl", 1, "bad NAACL line"),
    ],
)
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


def test_written_file_has_the_mode_open_would_give(tmp_path):
    # mkstemp makes 0o600 files; renamed into place they would be unreadable to the user's group
    old = os.umask(0o022)
    try:
        write_text_atomic(str(tmp_path / "a.txt"), "x\n")
        assert os.stat(tmp_path / "a.txt").st_mode & 0o777 == 0o644
        os.umask(0o002)
        write_text_atomic(str(tmp_path / "b.txt"), "x\n")
        assert os.stat(tmp_path / "b.txt").st_mode & 0o777 == 0o664
    finally:
        os.umask(old)


corpora = st.lists(
    st.tuples(
        st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=8),
        st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=4),
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(corpora, st.sampled_from(["pharaoh", "talp", "naacl"]), st.booleans())
def test_write_read_roundtrip(tmp_path_factory, corpus, fmt, reverse):
    al = Alignments.from_lists([s for s, _ in corpus], [p for _, p in corpus])
    path = str(tmp_path_factory.mktemp("rt") / f"a.{fmt}")
    write_alignments(al, path, fmt, reverse=reverse)
    ids = list(range(1, len(al) + 1))
    assert read_alignments(path, fmt, reverse=reverse, naacl_ids=ids) == al


# -- issue 13: BOM, CRLF, tabs, index limits, NAACL's P column, streaming -----------------------------


def _plain_reference(lines, base):
    """Plain-loop reader of pharaoh/talp lines: {(sentence, src, tgt): sure} (sure wins a repeat)."""
    out = {}
    for k, line in enumerate(lines):
        for tok in line.split():
            if "p" in tok:
                (x, y), sure = tok.split("p"), False
            else:
                parts = tok.split("-")
                (x, y), sure = parts[:2], len(parts) == 2 or parts[2] == "S"
            key = (k, int(x) - base, int(y) - base)
            out[key] = out.get(key, False) or sure
    return out


def _as_dict(al):
    return {
        (k, s, t): bool(u)
        for k in range(len(al))
        for s, t, u in zip(*(x[al.offsets[k] : al.offsets[k + 1]].tolist() for x in (al.src, al.tgt, al.sure)))
    }


def test_bom_crlf_tabs_and_blank_lines(tmp_path):
    p = tmp_path / "g.talp"
    # BOM, CRLF, tabs between and around links, an empty line, a last line without newline
    p.write_bytes(b"\xef\xbb\xbf1-1\t2p3 \r\n\r\n \t3-2\t\r\n4-4")
    al = read_alignments(str(p), "talp")
    assert al.to_lists("sure") == [[(0, 0)], [], [(2, 1)], [(3, 3)]]
    assert al.links(0, "possible") == [(1, 2)]
    # a BOM inside the file is not a BOM: it is a bad link on its line
    q = tmp_path / "h.txt"
    q.write_bytes(b"0-0\n\xef\xbb\xbf0-1\n")
    with pytest.raises(AlignmentFormatError, match=r"h.txt:2: bad link '\\ufeff0-1'"):
        read_alignments(str(q))


def test_naacl_marks_possible_links_by_its_column_only(tmp_path):
    # README: pharaoh and talp accept i-j-P tokens; naacl has its own S|P column and no such tokens
    p = write(tmp_path, "a.wa", "1 1 2 P\n1 2 2\n")
    assert read_alignments(p, "naacl").links(0, "possible") == [(0, 1)]
    with pytest.raises(AlignmentFormatError, match=r"b.wa:1: bad NAACL line '1 1-2-P'"):
        read_alignments(write(tmp_path, "b.wa", "1 1-2-P\n"), "naacl")
    assert read_alignments(write(tmp_path, "c.talp", "1-2-P 2-2\n"), "talp").links(0, "possible") == [(0, 1)]


def test_largest_index_is_read(tmp_path):
    assert read_alignments(write(tmp_path, "ok.txt", "0-2097151\n"), "pharaoh").links(0) == [(0, 2097151)]


def test_gz_errors_are_format_errors(tmp_path):
    p = tmp_path / "h.gz"
    p.write_bytes(b"not gzip at all\n")
    with pytest.raises(AlignmentFormatError, match=r"h.gz: cannot read"):
        read_alignments(str(p))
    full = gzip.compress(b"0-0\n" * 1000)
    p.write_bytes(full[: len(full) // 2])  # truncated
    with pytest.raises(AlignmentFormatError, match=r"h.gz: cannot read"):
        read_alignments(str(p))


@pytest.mark.parametrize("block", [1, 2, 3, 1000])
def test_stream_blocks_equal_whole_file(tmp_path, block):
    p = write(tmp_path, "g.talp", "1-1 2p2\n\n3-3\n1-2 2-1\n2p2\n")
    whole = read_alignments(p, "talp")
    with AlignmentStream(p, "talp") as s:
        blocks = []
        while True:
            blocks.append(s.take(block))
            if len(blocks[-1]) < block:
                break
    assert sum(len(b) for b in blocks) == 5 and s.sentences == 5
    assert [lk for b in blocks for lk in b.to_lists()] == whole.to_lists()
    assert [lk for b in blocks for lk in b.to_lists("sure")] == whole.to_lists("sure")


def test_naacl_stream_in_order_out_of_order_and_count(tmp_path):
    # sentences 2 and 4 of 5 have links, in order: streamed; the count is max = 4 (5 with ids)
    p = write(tmp_path, "a.wa", "2 1 1\n4 2 2 P\n4 1 3\n")
    with AlignmentStream(p, "naacl") as s:
        b1, b2, b3 = s.take(3), s.take(3), s.take(3)
    assert [len(b1), len(b2), len(b3)] == [3, 1, 0]
    assert b1.to_lists() == [[], [(0, 0)], []] and b2.to_lists() == [[(0, 2), (1, 1)]]
    with AlignmentStream(p, "naacl", naacl_ids=[1, 2, 3, 4, 5]) as s:
        assert [len(s.take(2)) for _ in range(4)] == [2, 2, 1, 0]
    # out of order: read whole, same blocks
    q = write(tmp_path, "b.wa", "4 1 3\n2 1 1\n4 2 2 P\n")
    with AlignmentStream(q, "naacl") as s:
        assert s.take(3).to_lists() == b1.to_lists() and s.take(3).to_lists() == b2.to_lists()
    with AlignmentStream(q, "naacl") as s:
        s.take(1)
        assert s.count_all() == 4


def test_stream_range_check_names_the_file_line(tmp_path):
    # NAACL: the error names the line of the link in the NAACL file, and the corpus sentence
    p = write(tmp_path, "a.wa", "1 1 1\n2 1 1\n2 3 1\n")
    with AlignmentStream(p, "naacl") as s:
        with pytest.raises(LinkRangeError, match=r"a.wa:3: sentence 2: link \(2, 0\)"):
            s.take(5, (np.array([2, 2]), np.array([2, 2])))
    q = write(tmp_path, "h.txt", "0-0\n0-0\n1-1 0-5\n")
    with AlignmentStream(q) as s:
        s.take(2, (np.array([1, 1]), np.array([1, 1])))
        with pytest.raises(LinkRangeError, match=r"h.txt:3: sentence 3: link \(0, 5\)"):
            s.take(2, (np.array([2]), np.array([2])))


def test_text_length_stream(tmp_path):
    p = write(tmp_path, "t.txt", "a b ||| x\nc ||| y z w\n")
    with TextLengthStream(p) as t:
        src, tgt = t.take(1)
        assert src.tolist() == [2] and tgt.tolist() == [1]
        assert t.count_all() == 2


# -- fuzzing: any bytes give links or a file:line error, never a traceback ---------------------------

_pieces = st.sampled_from(
    [
        "0",
        "1",
        "7",
        "12",
        "2097151",
        "2097152",
        "9999999",
        "99999999",
        "-",
        "p",
        "-P",
        "-S",
        " ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "\ufeff",
        "S",
        "P",
        "0.5",
        "x",
        "\u3000",
        "é",
        "\u0663",
    ]
)  # ARABIC-INDIC DIGIT THREE: not a digit here
_texts = st.lists(_pieces, max_size=40).map("".join)
_links = st.lists(
    st.tuples(
        st.integers(0, 60),
        st.integers(0, 60),
        st.sampled_from(["-", "p", "-P", "-S"]),
        st.sampled_from([" ", "\t", "  "]),
    ),
    max_size=6,
)
_token_lines = st.lists(_links, max_size=8)


def _read_or_error(path, fmt, **kw):
    try:
        return read_alignments(path, fmt, **kw)
    except AlignmentFormatError as e:
        assert e.path == path and str(e).startswith(f"{path}:")
        return None


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(st.binary(max_size=80), _texts.map(lambda t: t.encode("utf-8"))),
    st.sampled_from(["pharaoh", "talp", "naacl"]),
    st.booleans(),
)
def test_fuzz_readers_never_crash(tmp_path_factory, data, fmt, bom):
    p = tmp_path_factory.mktemp("fz") / "f.txt"
    data = (b"\xef\xbb\xbf" if bom else b"") + data
    p.write_bytes(data)
    al = _read_or_error(str(p), fmt)
    if al is not None and fmt != "naacl":
        # what parsed equals a plain loop over the same text (a leading BOM and CR line ends stripped)
        text = data.decode("utf-8").removeprefix("\ufeff")
        lines = text.split("\n")
        if text.endswith("\n") or not text:
            lines.pop()
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
        assert len(al) == len(lines)
        assert _as_dict(al) == _plain_reference(lines, FORMATS[fmt])
    for reader in (read_text_pairs, read_wpt_text):
        try:
            reader(str(p))
        except AlignmentFormatError as e:
            assert str(e).startswith(f"{p}:")


@settings(max_examples=150, deadline=None)
@given(
    _token_lines, st.sampled_from(["pharaoh", "talp"]), st.sampled_from(["\n", "\r\n"]), st.booleans(), st.booleans()
)
def test_fuzz_well_formed_lines_parse_like_a_plain_loop(tmp_path_factory, corpus, fmt, eol, bom, gz):
    base = FORMATS[fmt]
    lines = [
        "".join(f"{sep}{a}{kind}{b}" if kind in "-p" else f"{sep}{a}-{b}{kind}" for a, b, kind, sep in links)
        for links in corpus
    ]
    name = "f.txt.gz" if gz else "f.txt"
    p = tmp_path_factory.mktemp("wf") / name
    raw = (b"\xef\xbb\xbf" if bom else b"") + "".join(ln + eol for ln in lines).encode()
    p.write_bytes(gzip.compress(raw) if gz else raw)
    has_low = any(min(a, b) < base for links in corpus for a, b, _, _ in links)
    al = _read_or_error(str(p), fmt)
    if has_low:
        assert al is None  # an index below the base is an error naming its line
    else:
        assert al is not None and len(al) == len(lines)
        assert _as_dict(al) == _plain_reference(lines, base)


def _two_frame_zst(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    c = zstandard.ZstdCompressor()
    lines = [f"{i}-{i}\n" for i in range(50)]
    return c.compress("".join(lines[:30]).encode()) + c.compress("".join(lines[30:]).encode())


def test_zst_of_several_frames_reads_every_frame(tmp_path):
    p = tmp_path / "a.align.zst"
    p.write_bytes(_two_frame_zst(tmp_path))
    assert len(read_lines(str(p))) == 50


@pytest.mark.parametrize("share", [0.3, 0.6, 0.8, 0.95, 0.99])
def test_a_truncated_zst_is_refused_never_read_short(tmp_path, share):
    data = _two_frame_zst(tmp_path)
    p = tmp_path / "cut.align.zst"
    p.write_bytes(data[: int(len(data) * share)])
    with pytest.raises(AlignmentFormatError, match="cut short"):
        read_lines(str(p))
    with pytest.raises(AlignmentFormatError, match="cut short"):
        read_alignments(str(p))


def test_a_compression_suffix_is_stripped_from_a_name_whichever_it_is():
    from align.io.lines import COMPRESSED, strip_compression
    from eval.view import default_name

    assert set(COMPRESSED) == {".gz", ".xz", ".zst"}
    for ext in COMPRESSED:
        assert strip_compression(f"d/norm-awi-layer1.align{ext}") == "d/norm-awi-layer1.align"
        assert default_name(f"d/norm-awi-layer1.align{ext}") == "norm-awi-layer1"  # align-view's name for it
    assert strip_compression("x.align") == "x.align" and strip_compression("x.gz.align") == "x.gz.align"
