"""A run's hypothesis scored against another test set or direction than it aligned (eval.provenance): refused,
by the manifest.json align-extract writes beside its files; a file without one is scored as it is."""

import json

import pytest

from align.gold import testsets
from align.io.errors import AlignmentFormatError
from eval.cli import main as eval_main
from eval.provenance import check_hypothesis_set, recorded_test_set


def _run_folder(tmp_path, test_set, name="run", turned=False):
    """A folder as align-extract leaves it: one hypothesis (the gold itself, target first when ``turned``) and the
    manifest naming the set."""
    d = tmp_path / name
    d.mkdir()
    ts = testsets.load("hansards")
    hyp = d / "norm-awi-layer0.align"
    links = [ts.gold.links(k) for k in range(len(ts))]
    hyp.write_text("".join(" ".join(f"{t}-{s}" if turned else f"{s}-{t}" for s, t in ls) + "\n" for ls in links))
    if test_set is not None:
        sig = {"input": {"lines": len(ts), "sha256": "0" * 64, "test_set": test_set}}
        (d / "manifest.json").write_text(json.dumps({"signature": sig}))
    return hyp


def test_the_recorded_set_is_read_from_the_manifest(tmp_path):
    hyp = _run_folder(tmp_path, "test:hansards|lang:fr-en|sha:e0aa322eb361")
    assert recorded_test_set(str(hyp)) == ("hansards", "fr-en")
    assert recorded_test_set(str(_run_folder(tmp_path, None, "plain"))) is None  # another aligner's file
    assert recorded_test_set("-") is None
    (tmp_path / "plain" / "manifest.json").write_text("[1, 2]")  # not a run's manifest: nothing to compare
    assert recorded_test_set(str(tmp_path / "plain" / "norm-awi-layer0.align")) is None


def test_another_set_or_direction_is_refused_naming_the_file(tmp_path):
    hyp = str(_run_folder(tmp_path, "test:hansards|lang:fr-en|sha:e0aa322eb361"))
    check_hypothesis_set(hyp, "hansards", "fr-en")
    check_hypothesis_set(hyp, "hansards", "en-fr", reversed_hyp=True)  # read target first: en-fr
    with pytest.raises(
        AlignmentFormatError, match=r"aligned test set hansards as fr-en .* scored as en-fr: give -l fr-en"
    ):
        check_hypothesis_set(hyp, "hansards", "en-fr")
    with pytest.raises(AlignmentFormatError, match=r"aligned test set hansards \(fr-en\) .* scored against rwth"):
        check_hypothesis_set(hyp, "rwth", "de-en")


def test_align_eval_refuses_a_run_of_the_other_direction(tmp_path, capsys):
    # the links are the en-fr gold's, but the run says it aligned fr-en: scored as en-fr they would be read as the
    # gold turned round; with -l fr-en the gold is turned to the file's direction and the run is scored
    hyp = str(_run_folder(tmp_path, "test:hansards|lang:en-fr|sha:e0aa322eb361"))
    assert eval_main(["-t", "hansards", hyp]) == 0
    capsys.readouterr()
    other = str(_run_folder(tmp_path, "test:hansards|lang:fr-en|sha:e0aa322eb361", "other", turned=True))
    assert eval_main(["-t", "hansards", other]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and other in err and "give -l fr-en" in err
    assert eval_main(["-t", "hansards", "-l", "fr-en", other]) == 0


def test_the_text_digest_is_the_one_align_extract_records(tmp_path):
    # a BOM, a CRLF line and a last line without newline: the digest is PairReader's (the manifest's input.sha256)
    from align.io.inputs import PairReader
    from eval.provenance import lines_sha256

    text = tmp_path / "t.txt"
    text.write_bytes(b"\xef\xbb\xbfa b ||| c d\r\ne ||| f\ng ||| h")
    reader = PairReader(str(text))
    assert len(list(reader)) == 3 and lines_sha256(str(text)) == reader.sha256


def test_align_view_refuses_a_run_of_another_text(tmp_path, capsys):
    # the text has as many lines as the run's input, but another digest: the links would be shown on other words
    from eval.provenance import lines_sha256
    from eval.view import main as view_main

    text = tmp_path / "t.txt"
    text.write_text("a b ||| c d\ne ||| f\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "x.align").write_text("0-0\n0-0\n")
    man = {"signature": {"input": {"sha256": "ab" * 32, "lines": 2}}}
    (run / "manifest.json").write_text(json.dumps(man))
    assert view_main([str(text), str(run / "x.align"), "-o", str(tmp_path / "v.html")]) == 1
    err = capsys.readouterr().err
    assert "made from another input (sha256 abababababab" in err and not (tmp_path / "v.html").exists()
    man["signature"]["input"]["sha256"] = lines_sha256(str(text))  # the run of this text: shown
    (run / "manifest.json").write_text(json.dumps(man))
    assert view_main([str(text), str(run / "x.align"), "-o", str(tmp_path / "v.html")]) == 0
