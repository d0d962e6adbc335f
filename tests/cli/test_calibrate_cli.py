"""align-calibrate and align-extract --calibration end to end on the shipped En-Fr model (60 Hansards pairs)."""

import json
import os
import shutil

import numpy as np
import pytest

from align.confidence.sentence import FORWARD_FEATURES, PER_KIND_FORWARD_FEATURES

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


def test_calibration_file(cal, gold_pairs, capsys):
    d = json.loads(cal.read_text())
    assert d["format"] == "norm-align/calibration" and d["setting"]["method"] == "norm" and d["setting"]["layer"] == 0
    from align.confidence import noise
    from align.io.text import read_text_pairs

    # the odd lines' noisy copies of every kind but wrong-language (no --third-language), those equal to their
    # pair left out
    fit = [(list(s), list(t)) for s, t in read_text_pairs(str(gold_pairs / "pairs.txt"))[0::2]]
    kinds = [k for k in noise.KINDS if k != "wrong-language"]
    want = sum(p != q for k in kinds for p, q in zip(noise.make(fit, k, 1), fit))
    assert d["version"] == 4 and d["fitted_on"]["noise"] == kinds
    assert d["fitted_on"]["sentences"] == 30 and d["fitted_on"]["negatives"] == want and 300 < want <= 12 * 30
    assert (
        d["sentence"]["features"] == list(PER_KIND_FORWARD_FEATURES) and d["fitted_on"]["sentence_model"] == "per-kind"
    )
    # the default sentence model: one detector per kind fitted on (each kind once), combined by one weight > 0
    assert [x["kind"] for x in d["sentence"]["detectors"]] == kinds and d["sentence"]["combine"]["weights"][1] > 0
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
    # the score of pair 2 from the library: the calibration's features of the pair, the forward model's
    # forced-decoding log-probabilities included (written to 6 decimals)
    from align.confidence.calibration import read_calibration
    from align.extraction.aligner import score_matrices
    from align.io.text import read_text_pairs
    from fairseq_plugins.hub import NormAligner

    c = read_calibration(str(cal))
    aligner = NormAligner.from_checkpoint(MODEL)
    src, tgt = read_text_pairs(str(gold_pairs / "pairs.txt"))[1]
    spec = aligner.spec(["norm"], [0], ["awi"])
    ((w, null, lp),) = score_matrices(aligner, spec, "norm-awi-layer0.align", [(src, tgt)], 8, logprobs=True)
    assert len(lp) == len(aligner.encode_target(list(tgt), "t").ids) and (lp < 0).all()
    want = c.sentence_score(c.probabilities(w, null), list(src), list(tgt), lp)
    assert float(rows[1][1]) == pytest.approx(want, abs=1e-6)


def test_the_full_sentence_model_fits_every_feature(gold_pairs, tmp_path):
    from align.confidence.calibration import read_calibration

    out = tmp_path / "full.json"
    argv = ["--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--gold", str(gold_pairs / "gold.talp"),
            "--method", "norm", "--layer", "0", "--fit-on", "odd", "--sentence-model", "full", "-o", str(out)]  # fmt: skip
    assert calibrate(*argv) == 0
    c = read_calibration(str(out))
    assert c.sentence.features == FORWARD_FEATURES and c.fitted_on["sentence_model"] == "full"


def test_sentence_features_give_the_score_back(cal, gold_pairs, tmp_path):
    # --sentence-features implies --sentence-scores; each line holds the score and every feature the run can
    # compute (no reverse model: the forward model's and the words'), from which the calibration's sentence model
    # gives the score again (features to 6 decimals)
    from align.confidence.calibration import read_calibration

    out = tmp_path / "feats"
    argv = ["--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--out", str(out), "--methods", "norm",
            "--layers", "0", "--calibration", str(cal), "--sentence-features"]  # fmt: skip
    assert extract(*argv) == 0
    scores = [float(r.split("\t")[1]) for r in (out / "sentence_scores.tsv").read_text().splitlines()]
    rows = [json.loads(r) for r in (out / "sentence_features.jsonl").read_text().splitlines()]
    assert [r["line"] for r in rows] == list(range(1, 61)) and [r["score"] for r in rows] == scores
    assert list(rows[0]["features"]) == list(FORWARD_FEATURES)  # registry order; no reverse model, no rev_*
    c = read_calibration(str(cal))
    x = np.array([[r["features"][n] for n in c.sentence.features] for r in rows])
    np.testing.assert_allclose(c.sentence.predict(x), scores, atol=1e-4)
    assert "sentence_features.jsonl" in json.loads((out / "manifest.json").read_text())["files"]


def test_filter_keeps_the_best_half_and_rejects_the_rest_with_their_scores(cal, gold_pairs, tmp_path):
    from align.cli.filter import main as filter_main

    out = tmp_path / "filtered"
    pairs = gold_pairs / "pairs.txt"
    code = filter_main(
        [str(pairs), "--model", MODEL, "--calibration", str(cal), "--keep-fraction", "0.5", "--out", str(out)]
    )
    assert code == 0
    lines = pairs.read_text().splitlines()
    kept = (out / "kept.txt").read_text().splitlines()
    rejected = [r.split("\t", 2) for r in (out / "rejected.tsv").read_text().splitlines()]
    scores = {
        int(a): float(b)
        for a, b in (r.split("\t") for r in (out / "scored" / "sentence_scores.tsv").read_text().splitlines())
    }
    assert len(kept) == len(rejected) == 30 and sorted(kept + [r[2] for r in rejected]) == sorted(lines)
    assert all(lines[int(n) - 1] == text and float(v) == scores[int(n)] for n, v, text in rejected)
    assert max(float(v) for _, v, _ in rejected) <= min(scores[k + 1] for k, x in enumerate(lines) if x in kept)
    summary = json.loads((out / "filter.json").read_text())
    assert summary["kept"] == 30 and summary["rule"] == {"min_score": None, "keep_fraction": 0.5}


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
    code = extract(*args[:-2], "1", "--calibration", str(cal))
    assert code == 2 and "does not compute that setting" in capsys.readouterr().err
    code = extract("--model", MODEL, "--input", "x", "--prob-threshold", "0.5")
    assert code == 2


def test_a_calibration_records_how_the_model_read_and_holds_for_that_only(cal, gold_pairs, tmp_path, capsys):
    # lowercased or not changes every score: a calibration fitted on the model reading cased text is refused for
    # a run that lowercases (the shipped models do), in one line, nothing written; a file without the fields
    # (made before they were recorded) reads as before
    d = json.loads(cal.read_text())
    assert d["setting"]["lowercase"] is True and d["setting"]["languages"] == "en->fr"
    args = ["--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--methods", "norm", "--layers", "0"]
    for key, value, said in (("lowercase", False, "lowercase=False"), ("languages", "de->en", "languages='de->en'")):
        other = tmp_path / f"{key}.json"
        other.write_text(json.dumps({**d, "setting": {**d["setting"], key: value}}))
        assert extract(*args, "--out", str(tmp_path / "o"), "--calibration", str(other)) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"fitted with the model reading {said}" in err and not (tmp_path / "o").exists()
    # a version 3 file (made before the fields) records neither and is not checked for them
    old = tmp_path / "old.json"
    plain = {k: v for k, v in d["setting"].items() if k not in ("lowercase", "languages")}
    old.write_text(json.dumps({**d, "version": 3, "setting": plain}))
    assert extract(*args, "--out", str(tmp_path / "p"), "--calibration", str(old)) == 0


@pytest.mark.parametrize(
    "path,value,message",
    [
        (("setting", "layer"), 0.0, "setting.layer: found 0.0; expected an integer >= 0 (not a bool)"),
        (("setting", "layer"), False, "setting.layer: found false; expected an integer >= 0"),
        (("cells", "weights", 0), 1e308, "cells.weights[0]: found 1e+308; expected a finite number in [-10000, 10000]"),
        (("cells", "scale", 0), float("inf"), "cells.scale[0]: found Infinity; expected a finite number"),
        (("cells", "weights", 1), "0.5", 'cells.weights[1]: found "0.5"; expected a finite number'),
        (("version",), 5, "version: found 5; expected 1 or 2 or 3 or 4 (the versions norm-align "),
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
    code = extract(*args, "--methods", "norm", "--layers", "0", *flags, "--calibration", str(cal))
    err = capsys.readouterr().err
    assert code == 2 and f"--calibration {cal} {message}" in err and "--methods" not in err.splitlines()[-1]


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
    code = extract(*args, "--out", str(tmp_path / "e"))  # a bidirectional calibration without its reverse model
    assert code == 2 and "bidirectional" in capsys.readouterr().err
    assert extract(*args, "--reverse-model", deen, "--out", str(tmp_path / "f")) == 1  # not the other direction
    assert "translates de->en; expected en->de" in capsys.readouterr().err and not (tmp_path / "f").exists()
    other = tmp_path / "ende-copy"  # the right direction, but not the model it was fitted with
    shutil.copytree(ende, other)
    config = json.loads((other / "model_config.json").read_text())
    (other / "model_config.json").write_text(json.dumps({**config, "note": "another model"}))
    assert extract(*args, "--reverse-model", str(other), "--out", str(tmp_path / "g")) == 1
    assert "fitted with reverse model" in capsys.readouterr().err and not (tmp_path / "g").exists()


@pytest.mark.parametrize(
    "flag, text, message",
    [
        ("--sentence-pairs", "a b ||| x y\nno separator here\n", ":2: "),
        ("--sentence-pairs", "a b ||| x y\na b ||| \n", ":2: an empty target; expected a translation with words"),
        ("--sentence-pairs", "", ": no pair; expected 'source ||| target' lines"),
        ("--third-language", "ein satz\n\n", ":2: an empty line; expected a sentence (--third-language)"),
    ],
)
def test_a_bad_sentence_file_is_refused_before_the_model_loads(
    gold_pairs, tmp_path, capsys, monkeypatch, flag, text, message
):
    import align.cli.calibrate as cli

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded before the input files were checked")

    monkeypatch.setattr(cli, "load_aligner", no_model)
    bad = tmp_path / "bad.txt"
    bad.write_text(text)
    out = tmp_path / "cal.json"
    code = calibrate(
        "--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--gold", str(gold_pairs / "gold.talp"),
        "--layer", "0", flag, str(bad), "-o", str(out),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and err.startswith(f"align-calibrate: {bad}{message}") and err.count("\n") == 1, err
    assert not out.exists()


def test_the_sentence_score_fitted_on_other_pairs_says_so(gold_pairs, tmp_path):
    pairs = (gold_pairs / "pairs.txt").read_text().splitlines()
    held = tmp_path / "held.txt"
    held.write_text("\n".join(pairs[30:]) + "\n")
    out = tmp_path / "cal.json"
    code = calibrate(
        "--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--gold", str(gold_pairs / "gold.talp"),
        "--layer", "0", "--fit-on", "odd", "--sentence-pairs", str(held), "-o", str(out),
    )  # fmt: skip
    d = json.loads(out.read_text())
    assert code == 0 and d["fitted_on"]["sentence_pairs"] == f"{held} (30 pairs)" and d["fitted_on"]["sentences"] == 30


def test_filter_refuses_pairs_in_the_other_direction_and_writes_nothing(cal, gold_pairs, tmp_path, capsys):
    from align.cli.filter import main as filter_main

    turned = tmp_path / "turned.txt"
    lines = (gold_pairs / "pairs.txt").read_text().splitlines()
    turned.write_text("".join(" ||| ".join(line.split(" ||| ")[::-1]) + "\n" for line in lines))
    out = tmp_path / "filtered"
    code = filter_main(
        [str(turned), "--model", MODEL, "--calibration", str(cal), "--min-score", "0.5", "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 1 and f"align-filter: {turned}: its first 60 pairs read as the other direction" in err, err
    assert err.rstrip().endswith("swap the two sides; nothing written") and not out.exists()


def test_extract_sentence_scores_check_the_direction_in_one_line(cal, gold_pairs, tmp_path, capsys):
    # align-extract --sentence-scores refuses a turned file as align-filter does; a bad line among the first pairs
    # the check reads is file:line in one line (not a traceback); --translate has no pairs to turn and is not checked
    lines = (gold_pairs / "pairs.txt").read_text().splitlines()
    args = ["--model", MODEL, "--methods", "norm", "--layers", "0", "--calibration", str(cal), "--sentence-scores"]
    turned = tmp_path / "turned.txt"
    turned.write_text("".join(" ||| ".join(line.split(" ||| ")[::-1]) + "\n" for line in lines))
    assert extract(*args, "--input", str(turned), "--out", str(tmp_path / "a")) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "read as the other direction" in err and not (tmp_path / "a").exists()
    bad = tmp_path / "bad.txt"
    bad.write_text(lines[0] + "\nno separator here\n")
    assert extract(*args, "--input", str(bad), "--out", str(tmp_path / "b")) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}:2: found 0 '|||' separators" in err and not (tmp_path / "b").exists()


def test_sentence_model_help_names_every_model_and_the_default():
    # the option's help is built from the registry: a model added there is described without touching the CLI
    from align.cli.calibrate import build_parser
    from align.confidence.sentence import DEFAULT_SENTENCE_MODEL, SENTENCE_MODELS

    action = next(a for a in build_parser()._actions if "--sentence-model" in a.option_strings)
    assert action.default == DEFAULT_SENTENCE_MODEL and sorted(action.choices) == sorted(SENTENCE_MODELS)
    for name, model in SENTENCE_MODELS.items():
        assert f"{name}" in action.help and model.description in action.help
    assert f"{DEFAULT_SENTENCE_MODEL} (the default)" in action.help


@pytest.mark.parametrize(
    "extra, message",
    [
        (["-l", "fr-en"], "-l and --testsets-dir apply to -t NAME"),
        (["--reverse-alignment-layer", "L"], "--reverse-alignment-layer needs --reverse-model"),
    ],
)
def test_flags_that_would_be_ignored_are_usage_errors(gold_pairs, tmp_path, capsys, extra, message):
    code = calibrate("--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--gold", str(gold_pairs / "gold.talp"),
                     "--layer", "0", "-o", str(tmp_path / "c.json"), *extra)  # fmt: skip
    assert code == 2 and message in capsys.readouterr().err


def test_every_command_checks_a_files_direction_not_only_sentence_scores(cal, gold_pairs, tmp_path, capsys):
    # links of a file turned round are all wrong without any error: align-extract refuses it with or without
    # --sentence-scores, and align-calibrate refuses to fit on it (its gold turned round with it); the right
    # direction passes
    lines = (gold_pairs / "pairs.txt").read_text().splitlines()
    turned = tmp_path / "turned.txt"
    turned.write_text("".join(" ||| ".join(line.split(" ||| ")[::-1]) + "\n" for line in lines))
    args = ["--model", MODEL, "--methods", "norm", "--layers", "0"]
    assert extract(*args, "--input", str(turned), "--out", str(tmp_path / "a")) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{turned}: its first 60 pairs read as the other direction" in err
    assert not (tmp_path / "a").exists()
    assert extract(*args, "--input", str(gold_pairs / "pairs.txt"), "--out", str(tmp_path / "b")) == 0
    code = calibrate("--model", MODEL, "--input", str(turned), "--gold", str(gold_pairs / "gold.talp"), "--reverse-gold",
                     "--method", "norm", "--layer", "0", "-o", str(tmp_path / "c.json"))  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and f"align-calibrate: {turned}: its first 60 pairs read as the other direction" in err
    assert not (tmp_path / "c.json").exists()


def test_what_could_not_be_checked_is_said_not_passed_over(monkeypatch, capsys):
    # a model that declares no languages cannot be checked against the set: align-calibrate says so in a note, as
    # align-extract does, instead of going on silently
    import argparse

    from align.cli.calibrate import _load_models
    from fairseq_plugins.hub import NormAligner

    monkeypatch.setattr(NormAligner, "languages", lambda self: (None, None))
    args = argparse.Namespace(model=MODEL, framework=None, device="cpu", src_lang=None, tgt_lang=None,
                              reverse_model=None, lowercase=False, test_set="hansards", method="norm")  # fmt: skip
    _load_models(args, ("en", "fr"))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "note: " in err
    assert "its direction could not be checked against test set hansards (en-fr)" in err


def test_progress_on_shows_a_bar_that_ends_full(gold_pairs, tmp_path, capsys):
    # the gold's pairs and their noisy copies, as the model scores them; the bar's estimate (copies equal to their
    # pair are not scored) is set to what was scored at the end, so it ends at 100%
    code = calibrate("--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--gold", str(gold_pairs / "gold.talp"),
                     "--layer", "0", "-o", str(tmp_path / "c.json"), "--progress", "on")  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0 and "scoring pairs" in err and "100%" in err.replace("\r", "\n").splitlines()[-1]


def test_a_pair_the_model_cannot_read_is_named_by_file_and_line(gold_pairs, tmp_path, capsys):
    # a word SentencePiece leaves no piece for (U+200B) on line 2 of --sentence-pairs: the error names that file and
    # line, not "sentence 2" of nothing in particular
    lines = (gold_pairs / "pairs.txt").read_text(encoding="utf-8").splitlines()[:5]
    lines[1] = "the \u200b house ||| la maison"
    spairs = tmp_path / "held.txt"
    spairs.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    code = calibrate("--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--gold", str(gold_pairs / "gold.talp"),
                     "--layer", "0", "-o", str(tmp_path / "c.json"), "--sentence-pairs", str(spairs))  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and f"{spairs}:2: source: SentencePiece leaves no piece" in err, err
    assert not (tmp_path / "c.json").exists()


def test_a_layer_the_model_lacks_names_the_model(gold_pairs, tmp_path, capsys):
    code = calibrate("--model", MODEL, "--input", str(gold_pairs / "pairs.txt"), "--gold", str(gold_pairs / "gold.talp"),
                     "--layer", "9", "-o", str(tmp_path / "c.json"))  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and f"align-calibrate: error: {MODEL}: " in err and "9" in err.splitlines()[-1], err
