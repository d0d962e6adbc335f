import gzip
import io
import json
import sys
from types import SimpleNamespace

import pytest
from conftest import write
from hypothesis import given, settings, strategies as st

from align.io.formats import read_alignments
from eval.cli import evaluate, main
from eval.metrics import score_corpus

GOLD = "1-1 2p2 2-3\n1-2\n"  # talp, 1-based
HYP = "0-0 1-1\n0-1\n"  # pharaoh, 0-based: (0,0) sure hit, (1,1) possible hit, (0,1) sure hit


def test_text_line(tmp_path, capsys):
    g, h = write(tmp_path, "g.talp", GOLD), write(tmp_path, "h.txt", HYP)
    assert main([g, h]) == 0
    out = capsys.readouterr().out.strip().split("\n")
    # |A|=3, |S|=3, |A&S|=2, |A&P|=3: AER = 1 - 5/6 = 16.7, P 100, R 66.7, F1 80
    assert out == [
        f"{h}  AER  16.7  P 100.0  R  66.7  F1  80.0  links 3  sents 2",
        "signature: fmt:talp|base:1|hypfmt:pharaoh|hypbase:0|rev:no|allsure:no|version:0.2.0",
    ]


def test_json_many_hyps_and_paired(tmp_path, capsys):
    g, h = write(tmp_path, "g.talp", GOLD), write(tmp_path, "h.txt", HYP)
    h2 = write(tmp_path, "h2.txt", "0-0 1-2\n0-1\n")
    assert main([g, h, h2, "--format", "json", "--bootstrap", "50", "--paired-bootstrap", "50"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [r["hyp"] for r in res] == [h, h2]
    assert res[0]["aer"] == pytest.approx(100 / 6) and res[0]["links"] == 3 and res[0]["sentences"] == 2
    assert res[1]["aer"] == 0.0 and "paired_bootstrap" in res[1] and "ci" in res[0]


def test_stdin_reverse_and_options(tmp_path, capsys, monkeypatch):
    g = write(tmp_path, "g.talp", GOLD)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"0-0 1-1\n1-0\n")))
    assert main([g, "-", "--reverse-hyp", "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)[0]
    assert r["hyp"] == "<stdin>" and r["aer"] == pytest.approx(100 / 6)
    # --all-sure: possible 2p2 becomes sure: |S|=4, |A&S|=3 -> AER = 1 - 6/7
    assert main([g, write(tmp_path, "h.txt", HYP), "--all-sure", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["aer"] == pytest.approx(100 / 7)


@pytest.mark.parametrize(
    "gold,hyp,extra,msg",
    [
        (GOLD, "0-0\n", [], "h.txt: 1 sentences; expected 2"),
        (GOLD, "0-0\n0-a\n", [], "h.txt:2: bad link '0-a'"),
        ("0-1\n1-1\n", HYP, [], "g.talp:1: index below 1"),
        (GOLD, "0-0 5-5\n0-1\n", ["--text"], "h.txt:1: sentence 1: link (5, 5)"),
    ],
)
def test_bad_input_exit_1(tmp_path, capsys, gold, hyp, extra, msg):
    g, h = write(tmp_path, "g.talp", gold), write(tmp_path, "h.txt", hyp)
    if extra == ["--text"]:
        extra = ["--text", write(tmp_path, "t.txt", "a b c ||| x y z\nd ||| e f\n")]
    assert main([g, h] + extra) == 1
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err


def test_undecodable_exit_1(tmp_path, capsys):
    g = write(tmp_path, "g.talp", GOLD)
    h = tmp_path / "h.txt"
    h.write_bytes(b"0-0\n\xff\n")
    assert main([g, str(h)]) == 1
    assert "h.txt:2:" in capsys.readouterr().err


def test_usage_exit_2(tmp_path, capsys):
    assert main([]) == 2
    assert main(["g", "h", "--hyp-format", "xml"]) == 2
    assert main(["g", "-", "-"]) == 2
    assert main(["-", "-"]) == 2
    assert main(["g", "h", "--bootstrap", "100", "--seed", "-5"]) == 2  # before any file is read
    assert "--seed: -5 is negative; expected an integer >= 0" in capsys.readouterr().err


def test_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    g = write(tmp_path, "g.talp", GOLD)
    hs = [write(tmp_path, f"norm-awi-layer{i}.align", HYP) for i in range(3)]
    png = str(tmp_path / "heat.png")
    assert main([g, *hs, "--plot", png]) == 0
    assert open(png, "rb").read(4) == b"\x89PNG"


def test_per_sentence_tsv(tmp_path, capsys):
    g, h = write(tmp_path, "g.talp", GOLD), write(tmp_path, "h.txt", HYP)
    out = tmp_path / "per.tsv"
    assert main([g, h, "--per-sentence", str(out)]) == 0
    rows = [r.split("\t") for r in out.read_text().splitlines()]
    assert rows[0] == ["sentence", f"{h}:aer", f"{h}:precision", f"{h}:recall", f"{h}:f1"]
    # sentence 1: |A|=2, |S|=2, |A&S|=1, |A&P|=2 -> AER 1 - 3/4 = 25, P 100, R 50, F1 66.67
    assert rows[1] == ["1", "25.00", "100.00", "50.00", "66.67"]
    assert rows[2] == ["2", "0.00", "100.00", "100.00", "100.00"]


def test_naacl_gold_with_id_file(tmp_path, capsys):
    # gold in NAACL with sentence numbers 7 and 9; the id file maps them to lines 1 and 2
    g = write(tmp_path, "g.wa", "7 1 1 S\n9 2 1 P\n9 1 2\n")
    ids = write(tmp_path, "ids.txt", "7\n9\n")
    h = write(tmp_path, "h.txt", "0-0\n0-1 1-0\n")
    assert main([g, h, "--gold-format", "naacl", "--naacl-ids", ids, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["aer"] == 0.0
    bad = write(tmp_path, "bad.txt", "7\nx\n")
    assert main([g, h, "--gold-format", "naacl", "--naacl-ids", bad]) == 1
    assert "bad.txt:2: found 'x'" in capsys.readouterr().err


# -- issue 13: signature, streaming in step, line counts, fuzzing ------------------------------------


@pytest.mark.parametrize(
    "extra,sig",
    [
        ([], "fmt:talp|base:1|hypfmt:pharaoh|hypbase:0|rev:no|allsure:no|version:0.2.0"),
        (
            ["--gold-base", "0", "--hyp-format", "talp", "--reverse-hyp", "--all-sure"],
            "fmt:talp|base:0|hypfmt:talp|hypbase:1|rev:hyp|allsure:yes|version:0.2.0",
        ),
        (
            ["--reverse-gold", "--reverse-hyp", "--bootstrap", "20", "--seed", "3"],
            "fmt:talp|base:1|hypfmt:pharaoh|hypbase:0|rev:both|allsure:no|bs:20|seed:3|version:0.2.0",
        ),
        (
            ["--gold-format", "naacl", "--paired-bootstrap", "10"],
            "fmt:naacl|base:1|hypfmt:pharaoh|hypbase:0|rev:no|allsure:no|ids:1..max|pbs:10|seed:12345|version:0.2.0",
        ),
    ],
)
def test_signature_in_json_and_text(tmp_path, capsys, extra, sig):
    g = write(tmp_path, "g", "1 1 1\n2 1 2\n" if "naacl" in extra else "1-1\n1-2\n")
    h = write(tmp_path, "h", "0-0\n0-1\n")
    assert main([g, h, "--format", "json", *extra]) in (0, 1)
    out = capsys.readouterr()
    if "--gold-base" in extra:  # 1-1 read 0-based is (1, 1): fine; the reversed talp hyp 0-0 is below base 1
        assert "h:1: index below 1" in out.err
        assert main([g, write(tmp_path, "h", "1-1\n2-1\n"), "--format", "json", *extra]) == 0
        out = capsys.readouterr()
    assert json.loads(out.out)[0]["signature"] == sig
    assert main([g, h, *extra]) == 0 or "--gold-base" in extra
    if "--gold-base" not in extra:
        assert capsys.readouterr().out.strip().split("\n")[-1] == f"signature: {sig}"


GOLD5 = "1-1 2p2\n\n3-3 1-2\n2-2\n1p1 4-4\n"  # talp, 5 sentences
HYP5 = "0-0 1-1\n0-0\n2-2\n1-1 0-0\n3-3\n"  # pharaoh


@pytest.mark.parametrize("block", [1, 2, 3, 5, 8])
def test_streaming_blocks_equal_whole_file_scores(tmp_path, capsys, block):
    # By hand: sentence 1: A={00,11} S={00} P+={11}: |A&S|=1 |A&P|=2; sentence 2: A={00}, gold empty;
    # sentence 3: A={22} S={22,01}: 1, 1; sentence 4: A={11,00} S={11}: 1, 1; sentence 5: A={33} S={33} P+={00}: 1, 1
    # |A| = 2+1+1+2+1 = 7, |S| = 1+0+2+1+1 = 5, |A&S| = 4, |A&P| = 5: AER = 1 - 9/12 = 25
    g, h = write(tmp_path, "g.talp", GOLD5), write(tmp_path, "h.txt", HYP5)
    per = str(tmp_path / "per.tsv")
    args = main_args(g, [h, h], per_sentence=per, bootstrap=30, paired_bootstrap=30)
    r = evaluate(args, block_lines=block)
    assert r[0]["aer"] == pytest.approx(25.0)
    counts = [r[0][k] for k in ("links", "sure", "matched_sure", "matched_possible", "sentences")]
    assert counts == [7, 5, 4, 5, 5]
    assert r[1]["paired_bootstrap"]["delta_aer"] == 0.0
    rows = open(per).read().splitlines()
    assert len(rows) == 6 and rows[2].split("\t")[1:3] == ["100.00", "0.00"]  # sentence 2: AER 100, P 0


def main_args(gold, hyps, **kw):
    d = dict(
        gold=gold,
        hyps=hyps,
        gold_format="talp",
        gold_base=None,
        hyp_format="pharaoh",
        hyp_base=None,
        reverse_gold=False,
        reverse_hyp=False,
        all_sure=False,
        text=None,
        naacl_ids=None,
        bootstrap=0,
        paired_bootstrap=0,
        seed=1,
        plot=None,
        per_sentence=None,
        out_format="json",
    )
    d.update(kw)
    return SimpleNamespace(**d)


@pytest.mark.parametrize("hyp,n", [(HYP5 + "0-0\n", 6), (HYP5.rsplit("3-3\n", 1)[0], 4), ("", 0)])
@pytest.mark.parametrize("block", [1, 2, 4, 100])
def test_line_count_mismatch_names_the_hypothesis(tmp_path, capsys, hyp, n, block):
    g, h = write(tmp_path, "g.talp", GOLD5), write(tmp_path, "h.txt", hyp)
    ok = write(tmp_path, "ok.txt", HYP5)
    with pytest.raises(ValueError, match=rf"h.txt: {n} sentences; expected 5 as in the gold .*g.talp"):
        evaluate(main_args(g, [ok, h]), block_lines=block)
    assert main([g, ok, h]) == 1
    assert f"h.txt: {n} sentences; expected 5" in capsys.readouterr().err


def test_text_line_count_and_range_streamed(tmp_path, capsys):
    g, h = write(tmp_path, "g.talp", "1-1\n1-1\n1-1\n"), write(tmp_path, "h.txt", "0-0\n0-0\n0-1\n")
    short = write(tmp_path, "t.txt", "a ||| b\nc ||| d\n")
    assert main([g, h, "--text", short]) == 1
    assert "t.txt: 2 sentence pairs; expected 3 as in the gold" in capsys.readouterr().err
    text = write(tmp_path, "t3.txt", "a ||| b\nc ||| d\ne ||| f\n")
    args = main_args(g, [h], text=text)
    with pytest.raises(ValueError, match=r"h.txt:3: sentence 3: link \(0, 1\)"):
        evaluate(args, block_lines=2)


def test_gz_and_stdin_gold(tmp_path, capsys, monkeypatch):
    g = tmp_path / "g.talp.gz"
    g.write_bytes(gzip.compress(GOLD5.encode()))
    h = write(tmp_path, "h.txt", HYP5)
    assert main([str(g), h, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["aer"] == pytest.approx(25.0)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOLD5.encode())))
    assert main(["-", h, h, "--format", "json"]) == 0
    assert [r["aer"] for r in json.loads(capsys.readouterr().out)] == [pytest.approx(25.0)] * 2


def test_many_hypotheses_in_groups(tmp_path, capsys, monkeypatch):
    import eval.scoring

    monkeypatch.setattr(eval.scoring, "HYP_GROUP", 2)  # the gold is read once per group of two
    g = write(tmp_path, "g.talp", GOLD5)
    hs = [write(tmp_path, f"h{i}.txt", HYP5 if i != 3 else "0-0\n" * 5) for i in range(5)]
    assert main([g, *hs, "--format", "json", "--paired-bootstrap", "20"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [r["hyp"] for r in res] == hs and res[3]["paired_bootstrap"]["baseline"] == hs[0]
    # h3 is 0-0 in every sentence: |A| = 5, |S| = 5; 0-0 is sure in sentence 1 and possible in
    # sentence 5 (1p1), so |A&S| = 1, |A&P| = 2: AER = 1 - 3/10 = 70
    assert [round(r["aer"], 6) for r in res] == [25.0, 25.0, 25.0, 70.0, 25.0]


def test_naacl_stream_with_ids_and_out_of_order(tmp_path, capsys):
    # gold NAACL, sentence numbers 7, 9, 11; lines of 9 given before 7 (read whole, not streamed)
    g = write(tmp_path, "g.wa", "9 1 1 S\n7 1 1\n11 2 2 P\n11 1 1\n")
    ids = write(tmp_path, "ids.txt", "7\n9\n11\n")
    h = write(tmp_path, "h.txt", "0-0\n0-0\n0-0 1-1\n")
    for block in (1, 2, 10):
        r = evaluate(main_args(g, [h], gold_format="naacl", naacl_ids=ids), block_lines=block)
        assert r[0]["aer"] == 0.0 and r[0]["links"] == 4
    dup = write(tmp_path, "dup.txt", "7\n9\n7\n")
    assert main([g, h, "--gold-format", "naacl", "--naacl-ids", dup]) == 1
    assert "dup.txt:3: sentence number 7 again (first on line 1)" in capsys.readouterr().err


def test_output_errors_exit_1(tmp_path, capsys):
    g, h = write(tmp_path, "g.talp", GOLD5), write(tmp_path, "h.txt", HYP5)
    assert main([g, h, "--per-sentence", str(tmp_path / "no" / "such" / "dir.tsv")]) == 1
    assert "cannot write" in capsys.readouterr().err
    assert main([g, h, "--bootstrap", "-3"]) == 2
    assert main([g, "-", "--text", "-"]) == 2


_bytes = st.one_of(
    st.binary(max_size=60),
    st.lists(
        st.sampled_from(
            ["0", "1", "2", "9999999", "2097152", "-", "p", "-P", " ", "\t", "\n", "\r\n", "\ufeff", "S", "x", "|||"]
        ),
        max_size=30,
    ).map(lambda x: "".join(x).encode()),
)


@settings(max_examples=120, deadline=None)
@given(
    _bytes,
    _bytes,
    st.sampled_from(["pharaoh", "talp", "naacl"]),
    st.sampled_from(["pharaoh", "talp", "naacl"]),
    st.booleans(),
    st.sampled_from([1, 2, 1000]),
)
def test_fuzz_cli_exit_0_or_1_and_matches_whole_file_scoring(tmp_path_factory, gold, hyp, gfmt, hfmt, text, block):
    import contextlib

    d = tmp_path_factory.mktemp("cli")
    (d / "g").write_bytes(gold)
    (d / "h").write_bytes(hyp)
    (d / "t").write_bytes(hyp)
    argv = [str(d / "g"), str(d / "h"), "--gold-format", gfmt, "--hyp-format", hfmt, "--format", "json"]
    if text:
        argv += ["--text", str(d / "t")]
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(argv)
    assert rc in (0, 1), err.getvalue()
    if rc == 1:
        msg = err.getvalue()
        assert msg.startswith(f"align-eval: {d}/") and "Traceback" not in msg and msg.count("\n") == 1
        return
    r = json.loads(out.getvalue())[0]
    g, h = read_alignments(str(d / "g"), gfmt), read_alignments(str(d / "h"), hfmt)
    s = score_corpus(g, h)
    assert (r["links"], r["sure"], r["matched_sure"], r["matched_possible"], r["sentences"]) == (
        s.links,
        s.sure,
        s.matched_sure,
        s.matched_possible,
        len(g),
    )
    r2 = evaluate(main_args(str(d / "g"), [str(d / "h")], gold_format=gfmt, hyp_format=hfmt), block_lines=block)[0]
    assert (r2["links"], r2["matched_sure"], r2["matched_possible"]) == (s.links, s.matched_sure, s.matched_possible)


_corpus = st.lists(
    st.tuples(
        st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=6),
        st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=3),
        st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=6),
    ),
    max_size=9,
)


@settings(max_examples=60, deadline=None)
@given(
    _corpus,
    st.sampled_from(["pharaoh", "talp", "naacl"]),
    st.sampled_from(["pharaoh", "talp", "naacl"]),
    st.booleans(),
    st.booleans(),
    st.sampled_from([1, 2, 3, 1000]),
    st.randoms(use_true_random=False),
)
def test_streamed_scores_equal_in_memory_scores(tmp_path_factory, corpus, gfmt, hfmt, rev, all_sure, block, rnd):
    from align.io.formats import write_alignments
    from align.links.alignments import Alignments

    gold = Alignments.from_lists([c[0] for c in corpus], [c[1] for c in corpus])
    hyp = Alignments.from_lists([c[2] for c in corpus])
    d = tmp_path_factory.mktemp("st")
    g, h = str(d / "g"), str(d / "h")
    write_alignments(gold, g, gfmt, reverse=rev)
    write_alignments(hyp, h, hfmt)
    if hfmt == "naacl":  # NAACL lines in any order: read whole, same scores
        lines = open(h).read().splitlines(keepends=True)
        rnd.shuffle(lines)
        open(h, "w").write("".join(lines))
    ids = write(d, "ids", "".join(f"{k + 1}\n" for k in range(len(corpus))))
    r = evaluate(
        main_args(g, [h], gold_format=gfmt, hyp_format=hfmt, reverse_gold=rev, all_sure=all_sure, naacl_ids=ids),
        block_lines=block,
    )[0]
    s = score_corpus(gold.all_sure() if all_sure else gold, hyp)
    assert (r["links"], r["sure"], r["matched_sure"], r["matched_possible"], r["sentences"]) == (
        s.links,
        s.sure,
        s.matched_sure,
        s.matched_possible,
        len(corpus),
    )


@settings(max_examples=60, deadline=None)
@given(_bytes, st.sampled_from([b"", b"<s snum=1> a </s>\n", b"1\n2\n"]))
def test_fuzz_naacl_id_files(tmp_path_factory, ids, prefix):
    import contextlib

    d = tmp_path_factory.mktemp("ids")
    (d / "ids").write_bytes(prefix + ids)
    g, h = write(d, "g.wa", "1 1 1\n"), write(d, "h", "0-0\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main([g, h, "--gold-format", "naacl", "--naacl-ids", str(d / "ids")])
    assert rc in (0, 1)
    if rc == 1:
        assert err.getvalue().startswith(f"align-eval: {d}/") and err.getvalue().count("\n") == 1


# -- named test sets (align.gold.testsets) ---------------------------------------------------------

HANSARDS = "align/gold/sets/enfr_hansards"


def _gold_as_hyp(tmp_path, langs=None):
    """The Hansards gold's sure links as a Pharaoh hypothesis (in direction ``langs``): AER 0 against any P."""
    from align.gold import testsets
    from align.io.formats import write_alignments

    p = str(tmp_path / f"sure-{langs}.align")
    write_alignments(testsets.load("hansards", langs).gold.all_sure(), p)
    return p


def test_named_set_scores_as_its_files_do(tmp_path, capsys, monkeypatch):
    import os

    monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    h = write(tmp_path, "h.align", "0-0\n" * 447)
    assert main([f"{HANSARDS}/enfr.gold", h, "--format", "json"]) == 0
    by_file = json.loads(capsys.readouterr().out)[0]
    assert main(["-t", "hansards", h, "--format", "json"]) == 0
    by_name = json.loads(capsys.readouterr().out)[0]
    assert {k: by_name[k] for k in ("aer", "precision", "recall", "links", "sure")} == {
        k: by_file[k] for k in ("aer", "precision", "recall", "links", "sure")
    }
    assert (
        by_name["signature"].startswith("test:hansards|lang:en-fr|sha:")
        and by_name["test_set"]["name"] == "hansards"
        and by_name["test_set"]["verified"]
    )


def test_named_set_other_direction(tmp_path, capsys):
    fren, enfr = _gold_as_hyp(tmp_path, "fr-en"), _gold_as_hyp(tmp_path)
    assert main(["-t", "hansards", "-l", "fr-en", fren]) == 0
    out = capsys.readouterr().out
    assert "AER   0.0" in out and "test:hansards|lang:fr-en|" in out
    # the En-Fr file read as Fr-En: a link outside its sentence, named by file and line
    assert main(["-t", "hansards", "-l", "fr-en", enfr]) == 1
    assert f"{enfr}:6: sentence 6: link" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,code,message",
    [
        (["-t", "hansard", "h"], 2, "unknown test set 'hansard'; valid: rwth, hansards"),
        (["-t", "hansards", "-l", "de-en", "h"], 2, "neither en-fr nor fr-en"),
        (["-t", "hansards", "--text", "x", "h"], 2, "--text describe a gold file"),
        (["-t", "hansards", "--gold-format", "talp", "h"], 2, "--gold-format describe a gold file"),
        (["g", "-l", "fr-en", "h"], 2, "-l applies to a named test set"),
        (["-t", "hansards"], 2, "and at least one HYP"),
        (["g"], 2, "give a GOLD file and at least one HYP"),
    ],
)
def test_named_set_usage_errors(argv, code, message, capsys):
    assert main(argv) == code
    assert message in capsys.readouterr().err


def test_named_set_missing_or_changed_is_bad_input(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NORM_ALIGN_TESTSETS", str(tmp_path))
    h = write(tmp_path, "h.align", "\n" * 508)
    assert main(["-t", "rwth", h]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "put deen.src-tgt, deen.gold in" in err
    (tmp_path / "deen_rwth").mkdir()
    for f in ("deen.src-tgt", "deen.gold"):
        (tmp_path / "deen_rwth" / f).write_text("1-1\n" * 508)
    assert main(["-t", "rwth", h]) == 1
    assert "deen.src-tgt: sha256" in capsys.readouterr().err


def test_list(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["name", "langs", "pairs", "sure", "poss", "where"]
    assert "kftt      ja-en    582  13562      0  shipped" in out
    assert main(["--list", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows][:3] == ["rwth", "hansards", "wpt03"] and len(rows) == 10


def test_paired_bootstrap_on_one_sentence_says_it_cannot_decide(tmp_path, capsys):
    g, h = write(tmp_path, "g.talp", "1-1 2-2\n"), write(tmp_path, "h.txt", "0-0 1-1\n")
    h2 = write(tmp_path, "h2.txt", "0-1\n")
    assert main([g, h, h2, "--paired-bootstrap", "1000", "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert "the test cannot decide (1 sentence(s)" in out and "p=" not in out and "no interval" in out
    assert main([g, h, h2, "--paired-bootstrap", "1000", "--format", "json"]) == 0
    t = json.loads(capsys.readouterr().out)[1]["paired_bootstrap"]
    assert t["p_value"] is None and t["p_one_sided"] is None and "1 sentence" in t["undecided"]


def test_named_set_numbers_naacl_hypotheses_as_its_own_files(shared, tmp_path, monkeypatch, capsys):
    """WPT 2005 numbers its sentences from 26 (<s snum=N>): a NAACL hypothesis numbered so scores with -t, and one
    whose last sentences have no links is not short of sentences."""
    monkeypatch.setenv("NORM_ALIGN_TESTSETS", str(shared / "gold"))
    from align.gold import testsets

    ts = testsets.load("wpt05")
    rows = [f"{ts.ids[k]} {s + 1} {t + 1}" for k, links in enumerate(ts.gold.to_lists()) for s, t in links]
    h = write(tmp_path, "w.naacl", "\n".join(rows) + "\n")
    assert main(["-t", "wpt05", "--hyp-format", "naacl", h, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)[0]
    assert out["aer"] == 0.0 and "|ids:set|" in out["signature"]  # numbered by the set's own ids, not 1..max
    last = ts.ids[-1]
    h2 = write(tmp_path, "w2.naacl", "\n".join(r for r in rows if not r.startswith(f"{last} ")) + "\n")
    assert main(["-t", "wpt05", "--hyp-format", "naacl", h2]) == 0
