"""align-symmetrize: link files (hard heuristics) and soft-score files (every name of align.links.combine)."""

import gzip
import re

import numpy as np
import pytest
from conftest import write

from align.cli.symmetrize import main
from align.io.softscores import encode_scores, write_scores


def test_symmetrize_cli(tmp_path, capsys):
    f = write(tmp_path, "f", "0-0 1-1 2-1\n0-0\n")
    r = write(tmp_path, "r", "0-0 1-1 1-2\n0-0\n")
    assert main(["-m", "grow-diag", f, r]) == 0
    assert capsys.readouterr().out == "0-0 1-1 1-2 2-1\n0-0\n"
    rt = write(tmp_path, "rt", "0-0 1-1 2-1\n0-0\n")  # the same reverse links, target first
    assert main(["-m", "intersect", f, rt, "--reverse-target-first"]) == 0
    assert capsys.readouterr().out == "0-0 1-1\n0-0\n"


def test_symmetrize_cli_errors(tmp_path, capsys):
    f = write(tmp_path, "f", "0-0\n0-0\n")
    r = write(tmp_path, "r", "0-0\n")
    out = tmp_path / "out"
    assert main([f, r, "-o", str(out)]) == 1
    assert "r: 1 lines; expected 2" in capsys.readouterr().err
    assert not out.exists()
    assert main(["-m", "nope", f, r]) == 2


# -- soft-score files: the forward model's (T, S) and the reverse model's own (S, T) matrices ----------

# Sentence 1: forward (T=2, S=3), reverse (S=3, T=2); sentence 2 has an empty target side.
F = [np.array([[2.0, 1.0, 1.0], [0.0, 1.0, 3.0]]), np.zeros((0, 2))]
R = [np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 3.0]]), np.zeros((2, 0))]


def score_files(tmp_path, precision, f=F, r=R, names=("f.scores.jsonl", "r.scores.jsonl")):
    paths = [str(tmp_path / n) for n in names]
    write_scores(paths[0], f, precision=precision)
    write_scores(paths[1], r, precision=precision)
    return paths


@pytest.mark.parametrize("precision", ["8bit", "float32"])
def test_soft_names_by_hand(tmp_path, capsys, precision):
    f, r = score_files(tmp_path, precision)
    # float32: row shares f = [[.5, .25, .25], [0, .25, .75]]; reverse row shares [[1, 0], [.5, .5], [.25, .75]],
    # transposed b = [[1, .5, .25], [0, .5, .75]]; hmean 2fb/(f+b) = [[2/3, 1/3, .25], [0, 1/3, .75]].
    # 8-bit: F's rows are stored [255, 128, 128] and [0, 85, 255], R's [255, 0], [255, 255], [85, 255]:
    # f row 0 = [255, 128, 128] / 511 = [.499, .2505, .2505], the rest as above;
    # hmean row 0 = [.666, .334, .2503]: the same links at both cutoffs.
    # threshold .3 -> cells (t0, s0) (t0, s1) (t1, s1) (t1, s2) -> "0-0 1-0 1-1 2-1"; sentence 2 has no links
    assert main(["-m", "hmean:threshold", "--threshold", "0.3", f, r]) == 0
    assert capsys.readouterr().out == "0-0 1-0 1-1 2-1\n\n"
    # the default .2 adds (t0, s2): .25 (8-bit .2503)
    assert main(["-m", "hmean:threshold", f, r]) == 0
    assert capsys.readouterr().out == "0-0 1-0 1-1 2-0 2-1\n\n"
    # intersect: row argmax t0 -> s0, t1 -> s2; column argmax s0 -> t0, s1 -> t0 (1/3 vs 1/3: the lowest), s2 -> t1
    assert main(["-m", "hmean:intersect", f, r]) == 0
    assert capsys.readouterr().out == "0-0 2-1\n\n"


@pytest.mark.parametrize("precision", ["8bit", "float32"])
def test_hard_names_on_score_files_by_hand(tmp_path, capsys, precision):
    f, r = score_files(tmp_path, precision)
    # forward argmax per target word: t0 -> s0, t1 -> s2: {(0,0), (2,1)}
    # reverse argmax per source word (rows of R): s0 -> t0, s1 -> t0 (a tie: the lowest), s2 -> t1:
    # {(0,0), (1,0), (2,1)}
    # intersect: {(0,0), (2,1)}; grow-diag-final-and adds (1,0): diagonal-or-side neighbour of (0,0), source 1 unaligned
    assert main(["-m", "intersect", f, r]) == 0
    assert capsys.readouterr().out == "0-0 2-1\n\n"
    out = tmp_path / "gdfa.align"
    assert main([f, r, "-o", str(out)]) == 0  # grow-diag-final-and is the default
    assert out.read_text() == "0-0 1-0 2-1\n\n"


def test_mixed_precisions_compressed_names_and_the_scores_flag(tmp_path, capsys):
    f, r = score_files(tmp_path, "8bit", names=("f.scores.jsonl.gz", "r.txt"))
    write_scores(r, R, precision="float32")
    assert main(["-m", "hmean:threshold", "--threshold", "0.3", f, r]) == 2  # r.txt is not named as a score file
    assert "f.scores.jsonl.gz is a soft-score file (.scores.jsonl) and" in capsys.readouterr().err
    assert main(["--scores", "-m", "hmean:threshold", "--threshold", "0.3", f, r]) == 0
    assert capsys.readouterr().out == "0-0 1-0 1-1 2-1\n\n"
    with gzip.open(f, "rt") as z:
        assert len(z.read().splitlines()) == 2


@pytest.mark.parametrize("precision", ["8bit", "float32"])
def test_score_file_errors_exit_1_naming_file_and_line(tmp_path, capsys, precision):
    f, _ = score_files(tmp_path, precision)
    lines = [encode_scores(m, precision=precision) for m in R]
    cases = [
        ([lines[0]], r"r.scores.jsonl: 1 lines; expected 2 as in .*f.scores.jsonl$"),
        ([*lines, lines[1]], r"r.scores.jsonl: 3 lines; expected 2 as in .*f.scores.jsonl$"),
        # R turned round is 2 x 3; the forward 2 x 3 needs a 3 x 2
        ([encode_scores(R[0].T, precision=precision), lines[1]], r"r.scores.jsonl:1: a 2x3 matrix; expected 3x2"),
        ([lines[0], "{bad"], r"r.scores.jsonl:2: found '\{bad', not JSON"),
        ([lines[0], '{"tgt": 2, "src": 0, "q": "", "dtype": "float16"}'], r"r.scores.jsonl:2: 'dtype' is 'float16'"),
    ]
    out = tmp_path / "out.align"
    for content, message in cases:
        r = write(tmp_path, "r.scores.jsonl", "".join(line + "\n" for line in content))
        assert main(["-m", "hmean:threshold", f, r, "-o", str(out)]) == 1, message
        err = capsys.readouterr().err
        assert err.startswith("align-symmetrize: ") and err.count("\n") == 1
        assert re.search(message, err.strip()), (message, err)
        assert not out.exists()  # nothing partial written


def test_usage_errors_exit_2(tmp_path, capsys):
    f, r = score_files(tmp_path, "float32")
    lf, lr = write(tmp_path, "f.align", "0-0\n"), write(tmp_path, "r.align", "0-0\n")
    cases = [
        (["-m", "hmean:threshold", lf, lr], "hmean:threshold combines score matrices; give two soft-score files"),
        ([f, lr], "f.scores.jsonl is a soft-score file (.scores.jsonl) and"),
        ([lf, r], "r.scores.jsonl is a soft-score file (.scores.jsonl) and"),
        (["-m", "grow-diag", "--threshold", "0.3", f, r], "--threshold applies to a soft COMBINER:threshold name"),
        (["-m", "hmean:itermax", "--threshold", "0.3", f, r], "not hmean:itermax"),
        (["-m", "hmean:threshold", "--threshold", "nan", f, r], "expected a value in [0, 1]"),
        (["-m", "max:threshold", f, r], "unknown combiner 'max'; valid: hmean, gmean, mean"),
        (["-m", "hmean:best", f, r], "unknown soft decoder 'best'; valid: threshold, intersect, itermax, argmax"),
        (["-m", "nope", f, r], "valid: intersect, union, grow-diag, grow-diag-final, grow-diag-final-and, or"),
        (["--reverse-target-first", f, r], "--reverse-target-first applies to link files"),
        (["-", "-"], "stdin (-) can be read once"),
    ]
    for args, message in cases:
        assert main(args) == 2, args
        err = capsys.readouterr().err
        last = err.splitlines()[-1]  # after argparse's usage lines, one line
        assert last.startswith("align-symmetrize: error: ") and message in last, (message, err)
    assert main(["--help"]) == 0
    assert "hmean:threshold" in capsys.readouterr().out
