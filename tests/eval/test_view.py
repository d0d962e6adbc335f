"""eval.view (align-view) without a browser: the page's data and HTML, escaping, scores equal to
align-eval's, and the command's errors. tests/test_view_browser.py drives the page in Chromium."""

import csv
import json
import os
import re

import numpy as np
import pytest
from conftest import ROOT, write
from pages import page_json

from align.io.formats import read_alignments, write_alignments
from align.io.softscores import write_scores
from align.io.text import read_text_pairs
from align.links.alignments import Alignments
from eval import cli as eval_cli
from eval.view import (
    build_page,
    decode_cells,
    default_name,
    embed_json,
    encode_cells,
    main,
    page_data,
    parse_named,
    render_page,
)

HANSARDS = os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards")
TEXT = os.path.join(HANSARDS, "enfr.src-tgt")
GOLD = os.path.join(HANSARDS, "enfr.gold")


def make_hyps(folder, seed: int = 0) -> dict:
    """Two Pharaoh hypotheses made from the Hansards gold: ``near`` moves 10% of the links one target
    word on, ``far`` 40%; returns name -> path."""
    gold = read_alignments(GOLD, "talp")
    tgt_len = np.array([len(t) for _, t in read_text_pairs(TEXT)])
    rng = np.random.default_rng(seed)
    sent = gold.sentence_ids()
    out = {}
    for name, share in (("near", 0.1), ("far", 0.4)):
        tgt = gold.tgt.astype(np.int64)
        move = rng.random(len(tgt)) < share
        tgt[move] = (tgt[move] + 1) % tgt_len[sent[move]]
        path = os.path.join(str(folder), f"{name}.align")
        write_alignments(Alignments.from_arrays(sent, gold.src, tgt, None, len(gold)), path)
        out[name] = path
    return out


# -- embedding --------------------------------------------------------------------------------------


def test_embed_json_escapes_what_could_end_the_script():
    obj = {"w": ["</script><script>alert(1)</script>", "a&b", "<!--", "x\u2028y\u2029z", "é"]}
    text = embed_json(obj)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert "\\u003c/script\\u003e" in text and "\\u0026" in text and "\\u2028" in text
    assert "é" in text  # other characters stay as they are (no \\u00e9: the page stays small)
    assert json.loads(text) == obj


def test_page_has_one_data_script_and_escaped_title():
    pairs = [(["<script>alert(1)</script>", "&amp;"], ["x", "<b>y</b>"])]
    hyps = {"<i>m</i>": Alignments.from_lists([[(0, 0)]])}
    page = build_page(pairs, hyps, title="</title><script>alert(2)</script>")
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the data and the program, nothing else
    assert "<title>&lt;/title&gt;&lt;script&gt;alert(2)&lt;/script&gt;</title>" in page
    assert "alert(1)" in page and "<script>alert(1)" not in page
    data = page_json(page)
    assert data["src"] == ["<script>alert(1)</script> &amp;"] and data["tgt"] == ["x <b>y</b>"]
    assert data["hyps"][0]["name"] == "<i>m</i>"
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page  # nothing fetched


def test_the_template_ships_as_package_data():
    from importlib import resources

    assert resources.files("eval").joinpath("view_template.html").is_file()
    cfg = open(os.path.join(ROOT, "setup.cfg")).read()
    assert re.search(r"\[options\.package_data\]\s*\neval = view_template\.html", cfg)
    assert "align-view = eval.view:main" in cfg


def test_slots_are_filled_once():
    # a title that looks like the data slot must not receive the data
    page = build_page([(["a"], ["b"])], {"h": Alignments.from_lists([[]])}, title="{{DATA}}")
    assert "<title>{{DATA}}</title>" in page and page.count('"version":1') == 1


# -- the data ---------------------------------------------------------------------------------------


def test_page_data_by_hand():
    # gold: sure (0,0), possible (1,1); hyp: (0,0), (1,1), (2,2)
    # |A|=3 |S|=1 |A&S|=1 |A&P|=2: AER = 1 - (1+2)/(3+1) = 25%, precision 2/3, recall 1
    pairs = [(["a", "b", "c"], ["x", "y", "z"]), (["d"], ["w"])]
    gold = Alignments.from_lists([[(0, 0)], []], [[(1, 1)], []])
    hyp = Alignments.from_lists([[(0, 0), (1, 1), (2, 2)], [(0, 0)]])
    d = page_data(pairs, {"h": hyp}, gold)
    assert d["src"] == ["a b c", "d"] and d["tgt"] == ["x y z", "w"]
    # cells t * S + s of the 3 x 3 grid: (0,0) 0 "A", (1,1) 4 "E", (2,2) 8 "I"; possible links after "."
    assert d["gold"] == ["A.E", ""] and d["links"] == [["AEI", "A"]]
    # sentence 2: |A|=1, |S|=0: AER 1 - 0/1 = 100%
    assert d["aer"] == [[25.0, 100.0]]
    row = d["hyps"][0]
    # corpus: |A|=4 |S|=1 |A&S|=1 |A&P|=2: AER 1 - 3/5 = 40%, precision 50%, recall 100%
    assert (row["name"], row["links"]) == ("h", 4)
    assert row["aer"] == pytest.approx(40.0) and row["precision"] == pytest.approx(50.0) and row["recall"] == 100.0
    assert d["scores"] == [None]


def test_page_data_without_gold():
    d = page_data([(["a"], ["b"])], {"h": Alignments.from_lists([[(0, 0)]])})
    assert d["gold"] is None and d["aer"] is None and d["hyps"][0] == {"name": "h", "path": "h", "links": 1}


def test_page_data_scores_and_shapes():
    pairs = [(["a", "b", "c"], ["x", "y"])]
    hyp = {"h": Alignments.from_lists([[(0, 0)]])}
    q = np.array([[255, 0, 1], [2, 3, 4]], dtype=np.uint8)
    d = page_data(pairs, hyp, scores={"h": [q]})
    assert d["scores"] == [["/wAB" + "AgME"]]  # bytes ff 00 01 02 03 04
    with pytest.raises(
        ValueError,
        match=r"sentence 1: a uint8 matrix of shape \(3, 2\); expected uint8 of shape "
        r"\(tgt, src\) = \(2, 3\)",
    ):
        page_data(pairs, hyp, scores={"h": [q.T]})
    with pytest.raises(ValueError, match="expected names of hypotheses: h"):
        page_data(pairs, hyp, scores={"g": [q]})
    with pytest.raises(ValueError, match="g: 1 sentences; expected 2"):
        page_data(pairs * 2, {"g": hyp["h"]})


@pytest.mark.parametrize(
    "S, T, links, code",
    [
        (3, 3, [(0, 0), (1, 1), (2, 2)], "AEI"),
        (8, 8, [(7, 7)], "_"),  # 64 cells: one digit, cell 63
        (9, 8, [(8, 7)], "BH"),  # 72 cells: two digits, cell 7*9+8 = 71 = 1*64 + 7
        (65, 64, [(64, 63)], "BA_"),  # 4160 cells > 4096: three digits, cell 63*65+64 = 4159 = 4096 + 63
        (4, 0, [], ""),  # an empty side
    ],
)
def test_encode_cells_by_hand(S, T, links, code):
    al = Alignments.from_lists([links])
    assert encode_cells(al, [S], [T]) == [code]
    assert sorted(decode_cells(code, S, T)) == sorted(links)


def test_cells_round_trip_the_hansards_gold():
    pairs = read_text_pairs(TEXT)
    gold = read_alignments(GOLD, "talp")
    src_len, tgt_len = [len(s) for s, _ in pairs], [len(t) for _, t in pairs]
    codes = encode_cells(gold, src_len, tgt_len)
    for k in range(len(gold)):
        assert sorted(decode_cells(codes[k], src_len[k], tgt_len[k])) == gold.links(k)
    plain = sum(len(" ".join(f"{s}-{t}" for s, t in gold.links(k))) for k in range(len(gold)))
    assert sum(map(len, codes)) < plain / 2  # 34,286 against 84,859 characters


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("dump/norm-awi-layer1.align", ("norm-awi-layer1", "dump/norm-awi-layer1.align")),
        ("dump/norm.align.gz", ("norm", "dump/norm.align.gz")),
        ("best=dump/norm.align", ("best", "dump/norm.align")),
        ("out/a=b.align", ("a=b", "out/a=b.align")),  # the '=' belongs to the file name: a folder before it
        ("x.txt", ("x.txt", "x.txt")),
    ],
)
def test_parse_named(spec, expected):
    assert parse_named(spec) == expected


def test_parse_named_prefers_an_existing_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a=b.align", "")
    assert parse_named("a=b.align") == ("a=b", "a=b.align")
    assert default_name("s/norm.scores.jsonl.gz", ".scores.jsonl") == "norm"


# -- the command: scores equal to align-eval's ------------------------------------------------------


def test_scores_equal_align_eval(tmp_path, capsys):
    hyps = make_hyps(tmp_path)
    out = str(tmp_path / "view.html")
    per = str(tmp_path / "per.tsv")
    assert eval_cli.main([GOLD, hyps["near"], hyps["far"], "--per-sentence", per, "--format", "json"]) == 0
    ref = json.loads(capsys.readouterr().out)
    assert main([TEXT, f"near={hyps['near']}", hyps["far"], "--gold", GOLD, "-o", out, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == {
        "path": out,
        "sentences": 447,
        "hypotheses": 2,
        "bytes": os.path.getsize(out),
        "gold": True,
        "scores": [],
        "sentence_scores": False,
    }
    data = page_json(open(out, encoding="utf-8").read())
    assert [h["name"] for h in data["hyps"]] == ["near", "far"]
    for row, want in zip(data["hyps"], ref):
        for key in ("aer", "precision", "recall", "f1"):
            assert abs(row[key] - want[key]) < 0.01, key
        assert row["links"] == want["links"] and row["path"] == want["hyp"]
    assert data["signature"] == ref[0]["signature"]
    with open(per) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) == 447
    for h, name in enumerate((hyps["near"], hyps["far"])):
        assert [float(r[f"{name}:aer"]) for r in rows] == data["aer"][h]
    assert max(data["aer"][1]) > 50 > min(data["aer"][1])  # a test that could tell sentences apart


def test_reversed_and_naacl_hypotheses_give_the_same_page(tmp_path, capsys):
    # one hypothesis written three ways: Pharaoh, Pharaoh target first, NAACL (1-based)
    text = write(tmp_path, "t", "a b ||| x y z\nc ||| w\n")
    fwd = write(tmp_path, "f.align", "0-1 1-2\n0-0\n")
    rev = write(tmp_path, "r.align", "1-0 2-1\n0-0\n")
    naacl = write(tmp_path, "n.wa", "1 1 2 S\n1 2 3 S\n2 1 1 S\n")
    gold = write(tmp_path, "g.talp", "1-2 2p3\n1-1\n")
    pages = []
    for args in ([fwd], [rev, "--reverse-hyp"], [naacl, "--hyp-format", "naacl"]):
        out = str(tmp_path / "v.html")
        assert main([text, *args, "--gold", gold, "-o", out]) == 0
        pages.append(page_json(open(out, encoding="utf-8").read()))
    # S = 2: (0,1) is cell 1*2+0 = 2 "C", (1,2) is 2*2+1 = 5 "F"
    assert pages[0]["links"] == pages[1]["links"] == pages[2]["links"] == [["CF", "A"]]
    assert pages[0]["gold"] == ["C.F", "A"] and pages[0]["aer"] == [[0.0, 0.0]]
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"wrote {out}: 2 sentences, 1 hypothesis and the gold, {os.path.getsize(out) / 1024:.0f} KB"] * 3


def test_all_sure_and_soft_scores(tmp_path, capsys):
    text = write(tmp_path, "t", "a b ||| x y\n")
    gold = write(tmp_path, "g.talp", "1-1 2p2\n")
    hyp = write(tmp_path, "m.align", "0-0 1-1\n")
    sc = str(tmp_path / "m.scores.jsonl")
    write_scores(sc, [np.array([[1.0, 0.5], [0.0, 2.0]])])
    out = str(tmp_path / "v.html")
    assert main([text, hyp, "--gold", gold, "--all-sure", "--scores", sc, "-o", out]) == 0
    d = page_json(open(out, encoding="utf-8").read())
    assert d["gold"] == ["AD"] and d["aer"] == [[0.0]] and "allsure:yes" in d["signature"]  # cells 0 and 1*2+1
    # [[255, 128], [0, 255]] (127.5 rounds to 128): bytes ff 80 00 ff
    assert d["scores"] == [["/4AA/w=="]]
    # the same scores stored float32: each row scaled to its maximum as 8-bit files are, the same page data
    write_scores(sc, [np.array([[1.0, 0.5], [0.0, 2.0]])], precision="float32")
    assert main([text, hyp, "--gold", gold, "--all-sure", "--scores", sc, "-o", out]) == 0
    assert page_json(open(out, encoding="utf-8").read())["scores"] == [["/4AA/w=="]]


# -- the command: errors ----------------------------------------------------------------------------


def run(args, capsys):
    code = main(args)
    return code, capsys.readouterr().err


def test_bad_input_exits_1_naming_file_and_line(tmp_path, capsys):
    text = write(tmp_path, "t", "a b ||| x y\nc ||| z\n")
    good = write(tmp_path, "h.align", "0-0\n0-0\n")
    out = str(tmp_path / "v.html")
    cases = [
        ([text, write(tmp_path, "bad.align", "0-0\n0-x\n")], r"bad.align:2: bad link '0-x'"),
        ([text, write(tmp_path, "short.align", "0-0\n")], r"short.align: 1 sentences; expected 2 as in the text"),
        ([text, write(tmp_path, "long.align", "0-0\n0-0\n0-0\n")], r"long.align: 3 sentences; expected 2"),
        ([text, write(tmp_path, "far.align", "0-0\n1-0\n")], r"far.align:2: sentence 2: link \(1, 0\)"),
        ([write(tmp_path, "t2", "a b ||| x\nno separator\n"), good], r"t2:2: found 0 '\|\|\|' separators"),
        ([text, good, "--gold", write(tmp_path, "g.talp", "1-1\n")], r"g.talp: 1 sentences; expected 2"),
        ([text, str(tmp_path / "missing.align")], r"missing.align: cannot read"),
        (
            [text, good, "--sentence-scores", write(tmp_path, "one.tsv", "1\t0.5\n")],
            r"one.tsv: 1 lines; expected 2, one per pair of the text",
        ),
        (
            [text, good, "--sentence-scores", write(tmp_path, "skip.tsv", "1\t0.5\n3\t0.1\n")],
            r"skip.tsv:2: found '3\\t0.1'; expected '2<TAB>SCORE'",
        ),
        (
            [text, good, "--sentence-scores", write(tmp_path, "big.tsv", "1\t0.5\n2\t1.5\n")],
            r"big.tsv:2: score '1.5'; expected a number from 0 to 1",
        ),
    ]
    for args, message in cases:
        code, err = run([*args, "-o", out], capsys)
        assert code == 1, (args, err)
        assert re.search(message, err), (message, err)
        assert err.startswith("align-view: ") and err.count("\n") == 1
    assert not os.path.exists(out)  # nothing written on bad input


def test_scores_errors(tmp_path, capsys):
    text = write(tmp_path, "t", "a b ||| x y\nc ||| z\n")
    good = write(tmp_path, "h.align", "0-0\n0-0\n")
    two_by_two, one = '{"tgt": 2, "src": 2, "q": "AAAAAA=="}', '{"tgt": 1, "src": 1, "q": "AA=="}'
    out = str(tmp_path / "v.html")
    cases = [
        (
            '{"tgt": 1, "src": 2, "q": "AAA="}\n' + one + "\n",
            r"s:1: a 1x2 \(tgt x src\) matrix; expected 2x2, "
            r"the word counts of sentence 1 in .*t$",
        ),
        (two_by_two + "\n", r"s: 1 lines; expected 2 as in the text"),
        (two_by_two + "\n" + one + "\n" + one + "\n", r"s: more than 2 lines; expected 2"),
        (two_by_two + "\n{bad\n", r"s:2: found '\{bad', not JSON"),
    ]
    for content, message in cases:
        sc = write(tmp_path, "s", content)
        code, err = run([text, good, "--scores", f"h={sc}", "-o", out], capsys)
        assert code == 1 and re.search(message, err.strip()), (message, err)
    assert (
        run(
            [text, good, "--scores", f"h={write(tmp_path, 's', two_by_two + chr(10) + one + chr(10))}", "-o", out],
            capsys,
        )[0]
        == 0
    )


def test_usage_errors_exit_2(tmp_path, capsys):
    text = write(tmp_path, "t", "a ||| x\n")
    h = write(tmp_path, "h.align", "0-0\n")
    sc = write(tmp_path, "other.scores.jsonl", '{"tgt": 1, "src": 1, "q": "AA=="}\n')
    for args, message in [
        ([text], "give a TEXT file and at least one HYP"),
        ([text, h, "--gold-format", "xml"], "invalid choice"),
        ([text, h, f"h={h}"], "two hypotheses named 'h'"),
        ([text, h, "--scores", sc], "no hypothesis named 'other'; expected one of h"),
        ([text, h, "--scores", f"h={sc}", "--scores", f"h={sc}"], "--scores given twice"),
        (["-", "-"], "stdin \\(-\\) can be read once"),
        ([text, h, "--format", "xml"], "invalid choice"),
    ]:
        code, err = run([*args, "-o", str(tmp_path / "v.html")], capsys)
        assert code == 2, (args, err)
        assert re.search(message, err), (message, err)
    assert main(["--help"]) == 0


def test_text_mode_prints_one_line(tmp_path, capsys):
    text = write(tmp_path, "t", "a ||| x\n")
    h = write(tmp_path, "h.align", "0-0\n")
    out = str(tmp_path / "v.html")
    assert main([text, h, "-o", out]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"wrote {out}: 1 sentence, 1 hypothesis, {os.path.getsize(out) / 1024:.0f} KB"]
    assert page_json(open(out, encoding="utf-8").read())["gold"] is None


def test_render_page_round_trips_hansards(tmp_path):
    pairs = read_text_pairs(TEXT)
    gold = read_alignments(GOLD, "talp")
    d = page_data(pairs, {"gold-as-hyp": gold.all_sure()}, gold, title="t")
    assert page_json(render_page(d)) == d
    # the gold itself as the hypothesis: |A&S| = |S|, |A&P| = |A|, so AER = 1 - (|S| + |A|)/(|A| + |S|) = 0
    assert d["aer"] == [[0.0] * 447] and d["hyps"][0]["aer"] == 0.0


def test_named_test_set_gives_text_and_gold(tmp_path, capsys):
    from align.gold import testsets

    ts = testsets.load("hansards", "fr-en")
    h = str(tmp_path / "fren.align")
    write_alignments(ts.gold.all_sure(), h)
    out = str(tmp_path / "v.html")
    code, err = run(["-t", "hansards", "-l", "fr-en", h, "-o", out, "--format", "json"], capsys)
    assert code == 0, err
    page = page_json(open(out, encoding="utf-8").read())
    assert len(page["src"]) == 447 and page["src"][1] == " ".join(ts.src[1]) and page["gold"] is not None
    assert all(row[0] == 0.0 for row in page["aer"])  # the gold's own sure links: AER 0 on every sentence
    assert "test:hansards|lang:fr-en|" in page["signature"]
    code, err = run(["-t", "hansards", h, "--gold", h, "-o", out], capsys)
    assert code == 2 and "--gold describe a gold file" in err


def test_sentence_scores_go_into_the_page_to_4_decimals(tmp_path, capsys):
    from eval.view import page_data

    pairs = [(["a"], ["x"]), (["b", "c"], ["y"])]
    hyps = {"h": Alignments.from_lists([[(0, 0)], [(1, 0)]])}
    assert page_data(pairs, hyps, sentence_scores=[0.123456, 1.0])["sent"] == [0.1235, 1.0]
    assert page_data(pairs, hyps)["sent"] is None
    with pytest.raises(ValueError, match="sentence scores: 1; expected 2"):
        page_data(pairs, hyps, sentence_scores=[0.5])
    text = write(tmp_path, "t", "a ||| x\nb c ||| y\n")
    h = write(tmp_path, "h.align", "0-0\n1-0\n")
    out = str(tmp_path / "v.html")
    code, _ = run([text, h, "--sentence-scores", write(tmp_path, "s.tsv", "1\t0.250000\n2\t0.031250\n"),
                   "-o", out, "--format", "json"], capsys)  # fmt: skip
    assert code == 0
    assert '"sent":[0.25,0.0312]' in open(out, encoding="utf-8").read().replace(" ", "")
