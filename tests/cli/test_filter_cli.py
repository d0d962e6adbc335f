"""align-filter from a scores file: usage (exit 2), bad input (exit 1, nothing written), the split."""

import json

import pytest

from align.cli.filter import main


@pytest.fixture
def corpus(tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("a ||| x\nb ||| y\nc ||| z\n")
    scores = tmp_path / "scores.tsv"
    scores.write_text("1\t0.9\n2\t0.2\n3\t0.6\n")
    return pairs, scores


def test_min_score(corpus, tmp_path, capsys):
    pairs, scores = corpus
    out = tmp_path / "out"
    assert main([str(pairs), "--scores", str(scores), "--min-score", "0.5", "--out", str(out), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kept"] == 2 and summary["rejected"] == 1 and summary["lowest_kept"] == 0.6
    assert (out / "kept.txt").read_text() == "a ||| x\nc ||| z\n"
    assert (out / "rejected.tsv").read_text() == "2\t0.200000\tb ||| y\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--min-score", "0.5"], "give --scores FILE, or --model with --calibration"),
        (["--scores", "S", "--model", "m", "--min-score", "0.5"], "give --scores FILE, or --model"),
        (["--model", "m", "--min-score", "0.5"], "--model needs --calibration"),
        (["--scores", "S", "--calibration", "c", "--min-score", "0.5"], "go with --model"),
        (["--scores", "S"], "one of the arguments --min-score --keep-fraction is required"),
        (["--scores", "S", "--keep-fraction", "1.5"], "1.5: expected a number in (0, 1]"),
        (["--scores", "S", "--keep-fraction", "nan"], "nan: expected a number, not NaN"),
        (["--scores", "S", "--min-score", "nan"], "nan: expected a number, not NaN"),
    ],
)
def test_usage_errors_exit_2(corpus, tmp_path, capsys, args, message):
    pairs, scores = corpus
    args = [str(scores) if a == "S" else a for a in args]
    code = main([str(pairs), "--out", str(tmp_path / "out"), *args])
    assert code == 2 and message in capsys.readouterr().err.replace("\n", " ").replace("  ", " ")


def test_scores_of_another_input_write_nothing(corpus, tmp_path, capsys):
    pairs, scores = corpus
    scores.write_text("1\t0.9\n2\t0.2\n")
    out = tmp_path / "out"
    assert main([str(pairs), "--scores", str(scores), "--min-score", "0.5", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"align-filter: {pairs}:3: a line beyond the 2 the scores are for") and err.count("\n") == 1
    assert "nothing written" in err and not out.exists()


def test_an_existing_folder_is_kept_without_overwrite(corpus, tmp_path, capsys):
    pairs, scores = corpus
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    assert main([str(pairs), "--scores", str(scores), "--min-score", "0.5", "--out", str(out)]) == 1
    assert (out / "mine.txt").read_text() == "keep me" and "align-filter:" in capsys.readouterr().err


def test_overwrite_replaces_an_earlier_filter_folder_but_never_the_scores(corpus, tmp_path, capsys):
    pairs, scores = corpus
    out = tmp_path / "out"
    args = [str(pairs), "--scores", str(scores), "--out", str(out)]
    assert main([*args, "--min-score", "0.5"]) == 0
    assert main([*args, "--min-score", "0.1", "--overwrite"]) == 0  # its own folder: replaced
    assert (out / "kept.txt").read_text().count("\n") == 3
    inside = out / "sentence_scores.tsv"
    inside.write_text(scores.read_text())
    assert main([str(pairs), "--scores", str(inside), "--out", str(out), "--min-score", "0.5", "--overwrite"]) == 1
    assert "holds the input" in capsys.readouterr().err and inside.exists()


def test_scores_from_standard_input_are_read_once_and_hashed(corpus, tmp_path, capsys, monkeypatch):
    import hashlib
    import io

    pairs, scores = corpus
    data = scores.read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    out = tmp_path / "out"
    assert main([str(pairs), "--scores", "-", "--min-score", "0.5", "--out", str(out), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kept"] == 2 and summary["scores_sha256"] == hashlib.sha256(data).hexdigest()


def test_the_input_from_standard_input_with_a_scores_file(corpus, tmp_path, capsys, monkeypatch):
    import io

    pairs, scores = corpus
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(pairs.read_bytes())))
    out = tmp_path / "out"
    assert main(["-", "--scores", str(scores), "--min-score", "0.5", "--out", str(out)]) == 0
    assert (out / "kept.txt").read_text() == "a ||| x\nc ||| z\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-", "--model", "m", "--calibration", "c"], "with --model the input is read twice"),
        (["-", "--scores", "-"], "the input and --scores are both standard input"),
    ],
)
def test_standard_input_twice_is_a_usage_error(tmp_path, capsys, argv, message):
    code = main([*argv, "--min-score", "0.5", "--out", str(tmp_path / "out")])
    assert code == 2 and message in capsys.readouterr().err


def test_scores_of_another_input_of_as_many_lines_are_refused_by_their_manifest(corpus, tmp_path, capsys):
    # align-extract's manifest beside sentence_scores.tsv records the sha256 of the input it scored
    import hashlib

    pairs, scores = corpus
    run = tmp_path / "run"
    run.mkdir()
    (run / "sentence_scores.tsv").write_bytes(scores.read_bytes())
    manifest = {"signature": {"input": {"sha256": hashlib.sha256(b"another corpus").hexdigest(), "lines": 3}}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "out"
    assert (
        main([str(pairs), "--scores", str(run / "sentence_scores.tsv"), "--min-score", "0.5", "--out", str(out)]) == 1
    )
    err = capsys.readouterr().err
    assert "scored on another input (sha256 " in err and err.count("\n") == 1 and not out.exists()
    manifest["signature"]["input"]["sha256"] = hashlib.sha256(pairs.read_bytes()).hexdigest()
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert (
        main([str(pairs), "--scores", str(run / "sentence_scores.tsv"), "--min-score", "0.5", "--out", str(out)]) == 0
    )
