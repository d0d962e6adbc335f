"""align-calibrate and align-extract --calibration end to end on the shipped En-Fr model (60 Hansards pairs)."""

import json
import os
import shutil

import numpy as np
import pytest

pytest.importorskip("fairseq")
pytestmark = pytest.mark.fairseq
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "data", "models", "enfr")


@pytest.fixture(scope="module")
def gold_pairs(tmp_path_factory):
    from align.gold import testsets
    from align.io.formats import write_alignments

    ts = testsets.load("hansards")
    d = tmp_path_factory.mktemp("cal")
    (d / "pairs.txt").write_text("".join(line + "\n" for line in ts.text_lines()[:60]), encoding="utf-8")
    write_alignments(ts.gold.select(list(range(60))), str(d / "gold.talp"), "talp")
    return d


def calibrate(*args):
    from align.cli.calibrate import main

    return main(list(args))


def extract(*args):
    from align.cli.extract import main

    return main(list(args))


@pytest.fixture(scope="module")
def cal(gold_pairs):
    out = gold_pairs / "cal.json"
    assert (
        calibrate(
            "--model",
            MODEL,
            "--input",
            str(gold_pairs / "pairs.txt"),
            "--gold",
            str(gold_pairs / "gold.talp"),
            "--method",
            "norm",
            "--layer",
            "0",
            "--fit-on",
            "odd",
            "-o",
            str(out),
        )
        == 0
    )
    return out


def test_calibration_file(cal, capsys):
    d = json.loads(cal.read_text())
    assert d["format"] == "norm-align/calibration" and d["setting"]["method"] == "norm" and d["setting"]["layer"] == 0
    assert d["fitted_on"]["sentences"] == 30 and d["fitted_on"]["negatives"] == 90  # 3 corruptions of 30 pairs
    assert d["measured"]["held_out_sentences"] == 30 and 0 <= d["measured"]["ece_held_out"] < 0.1
    assert len(d["model"]["sha256"]) == 64


def test_extract_writes_probabilities_and_sentence_scores(cal, gold_pairs, tmp_path):
    from align.io.softscores import read_scores

    out = tmp_path / "dump"
    assert (
        extract(
            "--model",
            MODEL,
            "--input",
            str(gold_pairs / "pairs.txt"),
            "--out",
            str(out),
            "--methods",
            "norm,attn",
            "--layers",
            "0",
            "--calibration",
            str(cal),
            "--sentence-scores",
        )
        == 0
    )
    links = (out / "norm-awi-layer0.align").read_text().splitlines()
    probs = (out / "norm-awi-layer0.probs").read_text().splitlines()
    assert len(links) == len(probs) == 60 and all(len(a.split()) == len(p.split()) for a, p in zip(links, probs))
    assert all(0 <= float(x) <= 1 for line in probs for x in line.split())
    mats = read_scores(str(out / "norm-awi-layer0.probs.jsonl"))
    # the probability written beside each link is the cell's in the matrix (to the byte's precision)
    for line, pline, m in zip(links[:10], probs[:10], mats[:10]):
        for tok, p in zip(line.split(), pline.split()):
            s, t = map(int, tok.split("-"))
            assert abs(m[t, s] / 255 - float(p)) <= 0.5 / 255 + 1e-4
    rows = [r.split("\t") for r in (out / "sentence_scores.tsv").read_text().splitlines()]
    assert [int(r[0]) for r in rows] == list(range(1, 61)) and all(0 <= float(r[1]) <= 1 for r in rows)
    man = json.loads((out / "manifest.json").read_text())
    assert "norm-awi-layer0.probs" in man["files"] and man["signature"]["settings"]["calibration"]["sha256"]
    assert not (out / "attn-awi-layer0.probs").exists()


def test_probability_threshold_decodes(cal, gold_pairs, tmp_path):
    out = tmp_path / "thr"
    assert (
        extract(
            "--model",
            MODEL,
            "--input",
            str(gold_pairs / "pairs.txt"),
            "--out",
            str(out),
            "--methods",
            "norm",
            "--layers",
            "0",
            "--calibration",
            str(cal),
            "--prob-threshold",
            "0.9",
        )
        == 0
    )
    probs = [float(x) for line in (out / "norm-awi-layer0.probs").read_text().splitlines() for x in line.split()]
    assert probs and min(probs) >= 0.9


def test_calibration_of_another_model_or_setting(cal, gold_pairs, tmp_path, capsys):
    d = json.loads(cal.read_text())
    d["model"]["sha256"] = "0" * 64
    other = tmp_path / "other.json"
    other.write_text(json.dumps(d))
    args = [
        "--model",
        MODEL,
        "--input",
        str(gold_pairs / "pairs.txt"),
        "--out",
        str(tmp_path / "o"),
        "--methods",
        "norm",
        "--layers",
        "0",
        "--calibration",
    ]
    assert extract(*args, str(other)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fitted on model sha256='0000" in err and not (tmp_path / "o").exists()
    with pytest.raises(SystemExit) as e:
        extract(*args[:-2], "1", "--calibration", str(cal))
    assert e.value.code == 2 and "does not compute that setting" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        extract("--model", MODEL, "--input", "x", "--prob-threshold", "0.5")
    assert e.value.code == 2


@pytest.mark.parametrize(
    "path,value,message",
    [
        (("setting", "layer"), 0.0, "setting.layer: found 0.0; expected an integer >= 0 (not a bool)"),
        (("setting", "layer"), False, "setting.layer: found false; expected an integer >= 0"),
        (("cells", "weights", 0), 1e308, "cells.weights[0]: found 1e+308; expected a finite number in [-10000, 10000]"),
        (("cells", "scale", 0), float("inf"), "cells.scale[0]: found Infinity; expected a finite number"),
        (("cells", "weights", 1), "0.5", 'cells.weights[1]: found "0.5"; expected a finite number'),
        (("version",), 2, "version: found 2; expected 1 (the versions norm-align "),
        (("setting", "method"), "nrom", 'setting.method: found "nrom"; expected one of '),
    ],
)
def test_a_tampered_calibration_is_refused_before_the_model_loads(
    cal, gold_pairs, tmp_path, capsys, monkeypatch, path, value, message
):
    import align.extraction.plan as plan

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded before the calibration file was checked")

    monkeypatch.setattr(plan, "load_aligner", no_model)
    d = json.loads(cal.read_text())
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    out = tmp_path / "o"
    code = extract(
        "--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--out", str(out), "--calibration", str(bad)
    )
    err = capsys.readouterr().err
    assert code == 1 and err.startswith(f"align-extract: {bad}: {message}") and err.count("\n") == 1, err
    assert not out.exists()


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--level", "subword"], "was fitted with level word; this run has level subword (give --level word: a "),
        (["--heads", "0,1"], "was fitted with heads all; this run has heads 0,1 (leave out --heads: a calibration"),
    ],
)
def test_a_calibration_of_another_level_or_heads_says_so(cal, gold_pairs, tmp_path, capsys, flags, message):
    args = ["--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit) as e:
        extract(*args, "--methods", "norm", "--layers", "0", *flags, "--calibration", str(cal))
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"--calibration {cal} {message}" in err and "--methods" not in err.splitlines()[-1]


def test_too_few_links_is_one_line(gold_pairs, tmp_path, capsys):
    small = tmp_path / "p.txt"
    small.write_text("".join((gold_pairs / "pairs.txt").read_text().splitlines(True)[:4]))
    g = tmp_path / "g.talp"
    g.write_text("".join((gold_pairs / "gold.talp").read_text().splitlines(True)[:4]))
    assert (
        calibrate(
            "--model", MODEL, "--input", str(small), "--gold", str(g), "--layer", "0", "-o", str(tmp_path / "c.json")
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fitting needs at least 10 sentences" in err and not (tmp_path / "c.json").exists()


def test_gold_that_does_not_fit_the_text(gold_pairs, tmp_path, capsys):
    g = tmp_path / "g.talp"
    g.write_text("".join((gold_pairs / "gold.talp").read_text().splitlines(True)[1:]))  # shifted by one line
    assert (
        calibrate(
            "--model",
            MODEL,
            "--input",
            str(gold_pairs / "pairs.txt"),
            "--gold",
            str(g),
            "--layer",
            "0",
            "-o",
            str(tmp_path / "c.json"),
        )
        == 1
    )
    assert str(g) in capsys.readouterr().err
    np.testing.assert_equal((tmp_path / "c.json").exists(), False)


def test_bidirectional_calibration_on_rwth(shared, tmp_path, capsys):
    """De->En with En->De as --reverse-model on 40 RWTH pairs (the gold read from ../shared, never copied)."""
    from align.gold import testsets
    from align.io.formats import write_alignments

    ts = testsets.load("rwth", folder=str(shared / "gold"))
    (tmp_path / "p.txt").write_text("".join(line + "\n" for line in ts.text_lines()[:40]), encoding="utf-8")
    write_alignments(ts.gold.select(list(range(40))), str(tmp_path / "g.talp"), "talp")
    deen, ende = (os.path.join(ROOT, "data", "models", m) for m in ("deen", "ende"))
    cal = tmp_path / "bi.json"
    assert (
        calibrate(
            "--model",
            deen,
            "--reverse-model",
            ende,
            "--input",
            str(tmp_path / "p.txt"),
            "--gold",
            str(tmp_path / "g.talp"),
            "--layer",
            "0",
            "-o",
            str(cal),
        )
        == 0
    )
    d = json.loads(cal.read_text())
    assert len(d["cells"]["features"]) == 24 and len(d["setting"]["reverse_model"]["sha256"]) == 64
    args = [
        "--model",
        deen,
        "--input",
        str(tmp_path / "p.txt"),
        "--methods",
        "norm",
        "--layers",
        "0",
        "--calibration",
        str(cal),
        "--prob-threshold",
        "0.5",
    ]
    assert extract(*args, "--reverse-model", ende, "--out", str(tmp_path / "d")) == 0
    assert len((tmp_path / "d" / "norm-awi-layer0.probs").read_text().splitlines()) == 40
    man = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert man["signature"]["settings"]["calibration"]["reverse_model"] == d["setting"]["reverse_model"]
    with pytest.raises(SystemExit) as e:  # a bidirectional calibration without its reverse model
        extract(*args, "--out", str(tmp_path / "e"))
    assert e.value.code == 2 and "bidirectional" in capsys.readouterr().err
    assert extract(*args, "--reverse-model", deen, "--out", str(tmp_path / "f")) == 1  # not the other direction
    assert "translates de->en; expected en->de" in capsys.readouterr().err and not (tmp_path / "f").exists()
    other = tmp_path / "ende-copy"  # the right direction, but not the model it was fitted with
    shutil.copytree(ende, other)
    config = json.loads((other / "model_config.json").read_text())
    (other / "model_config.json").write_text(json.dumps({**config, "note": "another model"}))
    assert extract(*args, "--reverse-model", str(other), "--out", str(tmp_path / "g")) == 1
    assert "fitted with reverse model" in capsys.readouterr().err and not (tmp_path / "g").exists()
