"""align.confidence.filtering: the rules, the scores file's checks, and the split that loses no line."""

import numpy as np
import pytest

from align.confidence.filtering import KEPT, REJECTED, Rule, read_scores, split
from align.io.errors import AlignmentFormatError


def test_min_score_keeps_scores_at_or_above_it():
    assert Rule(min_score=0.5).keep(np.array([0.5, 0.49, 0.9])).tolist() == [True, False, True]


def test_keep_fraction_keeps_the_best_share_ties_in_line_order():
    s = np.array([0.2, 0.9, 0.5, 0.5, 0.1])
    # round(0.6 * 5) = 3: 0.9, then the two 0.5s
    assert Rule(keep_fraction=0.6).keep(s).tolist() == [False, True, True, True, False]
    # round(0.4 * 5) = 2: 0.9, then the first 0.5 (line 3 before line 4)
    assert Rule(keep_fraction=0.4).keep(s).tolist() == [False, True, True, False, False]
    assert Rule(keep_fraction=1.0).keep(s).all()
    # 0.5 of 5 lines is 2.5: halves up, 3 lines (round() would give 2, and 4 for 0.5 of 7 lines)
    assert Rule(keep_fraction=0.5).keep(s).sum() == 3 and Rule(keep_fraction=0.5).keep(np.zeros(7)).sum() == 4


@pytest.mark.parametrize("fraction, kept", [(0.285, 29), (0.145, 15), (0.575, 58), (0.284, 28), (0.29, 29)])
def test_keep_fraction_halves_go_up_in_decimal_not_binary(fraction, kept):
    # 0.285 * 100 is 28.4999... in binary floating point: the half of 28.5 must still go up, to 29
    assert Rule(keep_fraction=fraction).keep(np.linspace(0, 1, 100)).sum() == kept


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "give one of"),
        ({"min_score": 0.5, "keep_fraction": 0.5}, "give one of"),
        ({"min_score": 1.5}, "expected a number from 0 to 1"),
        ({"keep_fraction": 0.0}, r"expected a number in \(0, 1\]"),
    ],
)
def test_bad_rules(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rule(**kwargs)


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("1\t0.5\n3\t0.2\n", 2, "found '3\\\\t0.2'; expected '2<TAB>SCORE'"),
        ("1\t0.5\n2\n", 2, "found '2'; expected '2<TAB>SCORE'"),
        ("1\t1.5\n", 1, "score '1.5'; expected a number from 0 to 1"),
        ("1\tnan\n", 1, "score 'nan'; expected a number from 0 to 1"),
        ("1\tx\n", 1, "score 'x'"),
    ],
)
def test_a_bad_scores_file_names_file_and_line(tmp_path, text, line, message):
    p = tmp_path / "s.tsv"
    p.write_text(text)
    with pytest.raises(AlignmentFormatError, match=f"s.tsv:{line}: {message}"):
        read_scores(str(p))


def test_read_scores_digest_is_of_the_lines_read_from_a_file_or_a_pipe(tmp_path):
    import hashlib
    import subprocess
    import sys

    text = b"1\t0.9\n2\t0.2\n"
    p = tmp_path / "s.tsv"
    p.write_bytes(text)
    scores, digest = read_scores(str(p))
    assert scores.tolist() == [0.9, 0.2] and digest == hashlib.sha256(text).hexdigest()
    # through a pipe: the bytes read are hashed, not the drained pipe (which would be sha256 of nothing)
    code = "import sys; from align.confidence.filtering import read_scores; print(read_scores('-')[1])"
    out = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, check=True).stdout
    assert out.decode().strip() == hashlib.sha256(text).hexdigest()


def test_split_every_line_in_exactly_one_file(tmp_path):
    pairs = tmp_path / "pairs.txt"
    lines = ["a b ||| x y", "c ||| z", "d e f ||| u v w", "g ||| t"]
    pairs.write_bytes(("\n".join(lines[:2]) + "\r\n" + "\n".join(lines[2:]) + "\n").encode())
    scores = np.array([0.9, 0.1, 0.6, 0.3])
    counts = split(str(pairs), scores, Rule(min_score=0.5).keep(scores), str(tmp_path))
    import hashlib

    assert counts == {
        "lines": 4,
        "kept": 2,
        "rejected": 2,
        "input_sha256": hashlib.sha256(pairs.read_bytes()).hexdigest(),
    }
    # kept byte for byte (line 2's \r\n is line 2's own); rejected with line number and score
    assert (tmp_path / KEPT).read_bytes() == b"a b ||| x y\nd e f ||| u v w\n"
    assert (tmp_path / REJECTED).read_text() == "2\t0.100000\tc ||| z\n4\t0.300000\tg ||| t\n"


def test_an_input_of_another_length_than_the_scores_is_an_error(tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("a ||| b\nc ||| d\ne ||| f\n")
    with pytest.raises(AlignmentFormatError, match="pairs.txt:3: a line beyond the 2 the scores are for"):
        split(str(pairs), np.array([0.5, 0.5]), np.array([True, True]), str(tmp_path))
    # too many scores: the scores file's first line without an input line is named
    with pytest.raises(AlignmentFormatError, match="s.tsv:4: a score for line 4, but .*pairs.txt has 3 lines"):
        split(str(pairs), np.full(4, 0.5), np.full(4, True), str(tmp_path), "s.tsv")


def test_a_line_that_is_not_utf8_is_an_error_whether_kept_or_not(tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_bytes(b"a \xff ||| x\nb ||| y\n")
    for keep in ([True, True], [False, True]):
        with pytest.raises(AlignmentFormatError, match="pairs.txt:1: bytes .* are not UTF-8"):
            split(str(pairs), np.array([0.9, 0.9]), np.array(keep), str(tmp_path))


def test_a_last_line_without_newline_gets_the_ending_of_the_line_before(tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_bytes(b"a ||| x\r\nb ||| y")
    split(str(pairs), np.array([0.9, 0.9]), np.array([True, True]), str(tmp_path))
    assert (tmp_path / KEPT).read_bytes() == b"a ||| x\r\nb ||| y\r\n"
    pairs.write_bytes(b"b ||| y")  # a single line: \n
    split(str(pairs), np.array([0.9]), np.array([True]), str(tmp_path))
    assert (tmp_path / KEPT).read_bytes() == b"b ||| y\n"
