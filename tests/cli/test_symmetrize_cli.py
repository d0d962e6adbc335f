"""align-symmetrize: link files (hard heuristics) and soft-score files (every name of align.links.combine)."""

import gzip
import os
import re

import numpy as np
import pytest
from conftest import write
from hypothesis import HealthCheck, given, settings, strategies as st

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


def test_the_summary_line_counts_what_was_written(tmp_path, capsys):
    # grow-diag of the two files above: 4 links in sentence 1 and 1 in sentence 2, said on stderr (text or json)
    import json

    f = write(tmp_path, "f", "0-0 1-1 2-1\n0-0\n")
    r = write(tmp_path, "r", "0-0 1-1 1-2\n0-0\n")
    assert main(["-m", "grow-diag", f, r]) == 0
    assert capsys.readouterr().err == "align-symmetrize: 2 sentences, 5 links (grow-diag) -> standard output\n"
    assert main(["-m", "grow-diag", f, r, "-o", str(tmp_path / "o"), "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().err)
    assert got == {"sentences": 2, "links": 5, "method": "grow-diag", "output": str(tmp_path / "o")}


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


# -- files that must describe the same sentences: checked against each other, and against --text ------------


def _one_line_exit_1(capsys, argv, out, message):
    capsys.readouterr()  # an earlier run's summary line
    assert main([*argv, "-o", str(out)]) == 1, argv
    err = capsys.readouterr().err
    assert err.startswith("align-symmetrize: ") and err.count("\n") == 1, err
    assert re.search(message, err.strip()), (message, err)
    assert not out.exists()


def test_text_checks_link_files_against_the_sentences(tmp_path, capsys):
    """Two link files of other sentences, of the same line count, wrote `12-12` into an 11 x 9 sentence."""
    text = write(tmp_path, "t.txt", "a b c d e f g h i j k ||| 1 2 3 4 5 6 7 8 9\nx ||| y\n")
    f = write(tmp_path, "f.align", "0-0 12-12\n0-0\n")
    r = write(tmp_path, "r.align", "0-0 1-1\n0-0\n")
    out = tmp_path / "o.align"
    assert main([f, r, "-o", str(out)]) == 0  # nothing in two files of 2 lines proves them wrong: no text
    out.unlink()
    capsys.readouterr()  # its summary line
    msg = r"f.align:1: sentence 1: link \(12, 12\) .* outside a sentence pair of 11 source and 9 target tokens"
    _one_line_exit_1(capsys, [f, r, "--text", text], out, msg)
    _one_line_exit_1(capsys, [r, f, "--text", text], out, r"f.align:1: sentence 1: link \(12, 12\)")
    rt = write(tmp_path, "rt.align", "0-0 9-1\n0-0\n")  # target first: (src 1, tgt 9) lies outside 9 target words
    _one_line_exit_1(capsys, [r, rt, "--reverse-target-first", "--text", text], out, r"rt.align:1: .*\(1, 9\)")
    short = write(tmp_path, "short.txt", "a ||| b\n")
    _one_line_exit_1(capsys, [r, r, "--text", short], out, r"r.align: 2 lines; expected 1 as in the text .*short")
    assert main([r, r, "--text", text, "-o", str(out)]) == 0 and out.read_text() == "0-0 1-1\n0-0\n"


def test_text_checks_score_files_and_finds_them_swapped(tmp_path, capsys):
    """Two stand-alone score files given the wrong way round were each other's transpose: exit 0, links turned."""
    f, r = score_files(tmp_path, "float32")  # sentence 1: 2 target x 3 source words; sentence 2: 0 x 2
    text = write(tmp_path, "t.txt", "a b c ||| x y\nd e ||| \n")
    out = tmp_path / "o.align"
    assert main(["-m", "hmean:intersect", f, r, "--text", text, "-o", str(out)]) == 0
    assert out.read_text() == "0-0 2-1\n\n"
    out.unlink()
    msg = r"r.scores.jsonl:1: a 3x2 \(tgt x src\) matrix; expected 2x3, .* sentence 1 in the text .*t.txt \(the shape "
    _one_line_exit_1(capsys, ["-m", "hmean:intersect", r, f, "--text", text], out, msg)
    other = write(tmp_path, "o.txt", "a b c ||| x y\nd e f ||| \n")
    _one_line_exit_1(capsys, [f, r, "--text", other], out, r"f.scores.jsonl:2: a 0x2 .* expected 0x3")
    for lines, message in (("a b c ||| x y\n", "f.scores.jsonl: more than 1 lines; expected 1"),
                           ("a b c ||| x y\nd e ||| \nq ||| r\n", "f.scores.jsonl: 2 lines; expected 3")):  # fmt: skip
        _one_line_exit_1(capsys, [f, r, "--text", write(tmp_path, "n.txt", lines)], out, message)
    marked = write(tmp_path, "m.scores.jsonl", "".join(encode_scores(m, reverse=True) + "\n" for m in R))
    _one_line_exit_1(capsys, [marked, f], out, r"m.scores.jsonl:1: a reverse model's matrix")
    assert main(["-", r, "--text", "-"]) == 2  # stdin read once


# -- generators: any two files (and text) of possibly different sentences -----------------------------------

SIZES = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=4)  # (source, target) words per line


@st.composite
def _changed(draw, sizes):
    """``sizes``, or another corpus that often looks like it: a line dropped or added, a shape changed, all turned."""
    how = draw(st.sampled_from(["same", "same", "drop", "add", "reshape", "turn"]))
    out = list(sizes)
    if how == "drop" and out:
        del out[draw(st.integers(0, len(out) - 1))]
    elif how == "add":
        out.insert(draw(st.integers(0, len(out))), draw(st.tuples(st.integers(0, 4), st.integers(0, 4))))
    elif how == "reshape" and out:
        k = draw(st.integers(0, len(out) - 1))
        out[k] = (out[k][0] + draw(st.integers(1, 2)), out[k][1])
    elif how == "turn":
        out = [(t, s) for s, t in out]
    return out


def _links(draw, s, t):
    cells = [(i, j) for i in range(s) for j in range(t)]
    return sorted(draw(st.sets(st.sampled_from(cells), max_size=4))) if cells else []


def _setup(draw):
    base = draw(SIZES)
    fs, rs = draw(_changed(base)), draw(_changed(base))
    text = draw(st.one_of(st.none(), _changed(base)))
    return fs, rs, text


def _text_file(tmp_path, sizes):
    lines = [" ".join(f"s{i}" for i in range(s)) + " ||| " + " ".join(f"t{j}" for j in range(t)) for s, t in sizes]
    return write(tmp_path, "t.txt", "".join(line + "\n" for line in lines))


def _run_and_check(tmp_path, capsys, argv, ok):
    """Exit 0 with the output when ``ok``, else exit 1, one line naming a file, and no output file."""
    out = tmp_path / "o.align"
    if out.exists():
        out.unlink()
    code = main([*argv, "-o", str(out)])
    err = capsys.readouterr().err
    if not ok:
        assert code == 1 and err.count("\n") == 1 and err.startswith("align-symmetrize: "), (argv, err)
        assert any(os.path.basename(p) in err for p in argv if os.path.sep in p), err
        assert not out.exists()
        return None
    assert code == 0 and err.count("\n") == 1 and " sentences, " in err, err  # the summary line only
    return [[tuple(map(int, x.split("-"))) for x in line.split()] for line in out.read_text().splitlines()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), method=st.sampled_from(["grow-diag-final-and", "intersect", "union", "grow-diag"]))
def test_any_two_link_files_are_combined_only_when_they_fit(tmp_path, capsys, data, method):
    fs, rs, text = _setup(data.draw)
    fl = [_links(data.draw, s, t) for s, t in fs]
    rl = [_links(data.draw, s, t) for s, t in rs]
    f = write(tmp_path, "f.align", "".join(" ".join(f"{i}-{j}" for i, j in ls) + "\n" for ls in fl))
    r = write(tmp_path, "r.align", "".join(" ".join(f"{i}-{j}" for i, j in ls) + "\n" for ls in rl))
    argv = ["-m", method, f, r] + (["--text", _text_file(tmp_path, text)] if text is not None else [])
    fits = len(fl) == len(rl)
    if text is not None:
        fits = (
            fits
            and len(fl) == len(text)
            and all(i < s and j < t for links, (s, t) in zip([*fl, *rl], [*text, *text]) for i, j in links)
        )
    got = _run_and_check(tmp_path, capsys, argv, fits)
    if got is not None:
        assert len(got) == len(fl)
        for k, links in enumerate(got):  # never a link outside what either file said (nor the sentence)
            assert set(links) <= set(fl[k]) | set(rl[k])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    method=st.sampled_from(["grow-diag-final-and", "intersect", "hmean:threshold", "gmean:itermax", "mean:argmax"]),
    marks=st.sampled_from([(False, False), (False, True), (True, False), (True, True)]),
)
def test_any_two_score_files_are_combined_only_when_their_shapes_fit(tmp_path, capsys, data, method, marks):
    fs, rs, text = _setup(data.draw)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    fm = [rng.random((t, s)) for s, t in fs]  # the forward model's (T, S)
    rm = [rng.random((s, t)) for s, t in rs]  # the reverse model's own (S, T)
    paths = [str(tmp_path / n) for n in ("f.scores.jsonl", "r.scores.jsonl")]
    for path, mats, mark in zip(paths, (fm, rm), marks):
        write(tmp_path, os.path.basename(path), "".join(encode_scores(m, reverse=mark) + "\n" for m in mats))
    argv = ["-m", method, *paths] + (["--text", _text_file(tmp_path, text)] if text is not None else [])
    fits = fs == rs and not (marks[0] and fs)
    if text is not None:
        fits = fits and fs == text
    got = _run_and_check(tmp_path, capsys, argv, fits)
    if got is not None:
        assert len(got) == len(fs)
        assert all(i < s and j < t for links, (s, t) in zip(got, fs) for i, j in links)
