import io
import json
import sys

import pytest

from conftest import write
from eval.cli import main

GOLD = "1-1 2p2 2-3\n1-2\n"        # talp, 1-based
HYP = "0-0 1-1\n0-1\n"             # pharaoh, 0-based: (0,0) sure hit, (1,1) possible hit, (0,1) sure hit


def test_text_line(tmp_path, capsys):
    g, h = write(tmp_path, "g.talp", GOLD), write(tmp_path, "h.txt", HYP)
    assert main([g, h]) == 0
    out = capsys.readouterr().out.strip()
    # |A|=3, |S|=3, |A&S|=2, |A&P|=3: AER = 1 - 5/6 = 16.7, P 100, R 66.7, F1 80
    assert out == f"{h}  AER  16.7  P 100.0  R  66.7  F1  80.0  links 3  sents 2"


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


@pytest.mark.parametrize("gold,hyp,extra,msg", [
    (GOLD, "0-0\n", [], "h.txt: 1 sentences; expected 2"),
    (GOLD, "0-0\n0-a\n", [], "h.txt:2: bad link '0-a'"),
    ("0-1\n1-1\n", HYP, [], "g.talp:1: index below 1"),
    (GOLD, "0-0 5-5\n0-1\n", ["--text"], "h.txt:1: sentence 1: link (5, 5)"),
])
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
