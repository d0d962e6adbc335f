"""align.io.softscores: the .scores.jsonl format (one quantized (tgt, src) matrix per line)."""

import base64
import gzip
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from align.io.errors import AlignmentFormatError
from align.io.softscores import (
    PRECISIONS,
    ScoresFormatError,
    decode_scores,
    encode_scores,
    iter_scores,
    quantize_scores,
    read_scores,
    scores_name,
    write_scores,
)


def quantize_loop(m):
    """Plain-loop reference: each cell round(255 * score / row max) (ties to even), zero rows zero."""
    out = np.zeros((len(m), len(m[0]) if len(m) else 0), dtype=np.uint8)
    for i, row in enumerate(m):
        top = max([max(0.0, float(x)) for x in row], default=0.0)
        for j, x in enumerate(row):
            out[i, j] = round(255 * max(0.0, float(x)) / top) if top > 0 else 0
    return out


def test_golden_line():
    # row 0: max 0.6 -> 255*0.2/0.6 = 85, 255, 85; row 1 is all zeros and stays zeros.
    # bytes 0x55 0xFF 0x55 0 0 0 -> base64 "Vf9V" "AAAA"
    line = encode_scores(np.array([[0.2, 0.6, 0.2], [0.0, 0.0, 0.0]]))
    assert line == '{"tgt": 2, "src": 3, "q": "Vf9VAAAA"}'
    m = decode_scores(line, "f", 1)
    assert m.dtype == np.uint8 and m.shape == (2, 3)
    assert m.tolist() == [[85, 255, 85], [0, 0, 0]]


@pytest.mark.parametrize(
    "scores, expected",
    [
        ([[1.0, 2.0]], [[128, 255]]),  # 127.5 rounds to the even 128, as Python's round
        ([[3.0, 2.0]], [[255, 170]]),  # 255 * 2/3 = 170
        ([[-1.0, 2.0]], [[0, 255]]),  # negative scores are stored as 0
        ([[-1.0, -2.0]], [[0, 0]]),  # a row with no positive score stays zeros
        ([[0.5], [0.25]], [[255], [255]]),  # each row is scaled by its own maximum
        ([[1e-300, 1e-301]], [[255, 26]]),  # 25.5 -> 26 (ties to even: 26)
    ],
)
def test_quantize_by_hand(scores, expected):
    assert quantize_scores(np.array(scores)).tolist() == expected
    assert quantize_loop(scores).tolist() == expected


def test_quantize_matches_the_loop_reference():
    rng = np.random.default_rng(3)
    for shape in [(1, 1), (4, 7), (9, 2), (13, 13)]:
        m = rng.random(shape) * rng.choice([1e-3, 1, 50])
        m[rng.random(shape) < 0.2] = 0
        m[0] = 0  # a zero row
        assert np.array_equal(quantize_scores(m), quantize_loop(m))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.data())
def test_round_trip_any_matrix(t, s, data):
    vals = data.draw(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=t * s, max_size=t * s))
    m = np.array(vals, dtype=np.float64).reshape(t, s)
    line = encode_scores(m)
    assert "\n" not in line
    q = decode_scores(line, "f", 1)
    assert q.shape == (t, s) and np.array_equal(q, quantize_scores(m))
    if t and s:  # every row with a positive score peaks at 255
        assert all(row.max() == 255 for row, src in zip(q, m) if src.max() > 0)


def test_empty_sides():
    assert encode_scores(np.zeros((0, 3))) == '{"tgt": 0, "src": 3, "q": ""}'
    assert encode_scores(np.zeros((2, 0))) == '{"tgt": 2, "src": 0, "q": ""}'
    assert decode_scores('{"tgt": 2, "src": 0, "q": ""}', "f", 1).shape == (2, 0)


def test_not_a_matrix():
    with pytest.raises(ValueError, match="2-D"):
        encode_scores(np.zeros(3))
    with pytest.raises(ValueError, match="NaN or infinity"):
        encode_scores(np.array([[0.1, np.nan]]))


def q64(n):
    return base64.b64encode(bytes(n)).decode()


@pytest.mark.parametrize(
    "line, found",
    [
        ("not json", "not JSON"),
        ("[1, 2]", "a JSON list"),
        ('{"tgt": 1, "q": ""}', "no 'src'"),
        ('{"tgt": true, "src": 1, "q": "AA=="}', "'tgt' is True"),
        ('{"tgt": -1, "src": 1, "q": ""}', "'tgt' is -1"),
        ('{"tgt": 1.5, "src": 1, "q": ""}', "'tgt' is 1.5"),
        ('{"tgt": 1, "src": 1, "q": 5}', "'q' is a JSON int"),
        ('{"tgt": 1, "src": 1, "q": "A*=="}', "not valid base64"),
        (f'{{"tgt": 2, "src": 3, "q": "{q64(5)}"}}', "'q' holds 5 bytes; expected tgt \\* src = 2 \\* 3 = 6"),
    ],
)
def test_bad_lines_name_file_and_line(line, found):
    with pytest.raises(ScoresFormatError, match=f"^dump/x.scores.jsonl:7: .*{found}") as e:
        decode_scores(line, "dump/x.scores.jsonl", 7)
    assert isinstance(e.value, AlignmentFormatError) and "expected" in str(e.value)
    assert (e.value.path, e.value.line) == ("dump/x.scores.jsonl", 7)


def test_iter_scores_gz_bom_crlf_and_error_line(tmp_path):
    good = [encode_scores(np.eye(2)), encode_scores(np.ones((1, 3)))]
    p = tmp_path / "a.scores.jsonl.gz"
    with gzip.open(p, "wb") as f:
        f.write(b"\xef\xbb\xbf" + "\r\n".join(good).encode() + b"\r\n")
    mats = list(iter_scores(str(p)))
    assert [m.tolist() for m in mats] == [[[255, 0], [0, 255]], [[255, 255, 255]]]
    bad = tmp_path / "b.scores.jsonl"
    bad.write_text(good[0] + "\n" + good[1] + "\n" + '{"tgt": 1, "src": 2, "q": "AA=="}\n')
    it = iter_scores(str(bad))
    assert next(it).shape == (2, 2) and next(it).shape == (1, 3)
    with pytest.raises(ScoresFormatError, match=r"b.scores.jsonl:3: 'q' holds 1 bytes"):
        next(it)


def test_write_read_and_name(tmp_path):
    mats = [np.array([[0.1, 0.3]]), np.zeros((0, 0)), np.array([[2.0], [0.0]])]
    p = str(tmp_path / "x.scores.jsonl")
    write_scores(p, mats)
    lines = open(p).read().splitlines()
    assert len(lines) == 3 and json.loads(lines[1]) == {"tgt": 0, "src": 0, "q": ""}
    assert [m.tolist() for m in read_scores(p)] == [[[85, 255]], [], [[255], [0]]]
    assert scores_name("dump/norm-awi-layer1.align") == "dump/norm-awi-layer1.scores.jsonl"
    assert scores_name("out/x") == "out/x.scores.jsonl"


def test_missing_file_is_a_format_error(tmp_path):
    with pytest.raises(AlignmentFormatError, match="cannot read"):
        read_scores(str(tmp_path / "none.scores.jsonl"))


# -- float32: the raw scores ------------------------------------------------------------------------


def test_float32_golden_line():
    # 1.0 is 0x3F800000, -2.0 0xC0000000; little-endian bytes 00 00 80 3f 00 00 00 c0 -> "AACAPwAAAMA="
    line = encode_scores(np.array([[1.0, -2.0]]), precision="float32")
    assert line == '{"tgt": 1, "src": 2, "q": "AACAPwAAAMA=", "dtype": "float32"}'
    m = decode_scores(line, "f", 1)
    assert m.dtype == np.float32 and m.tolist() == [[1.0, -2.0]]  # not rescaled, the negative kept
    assert PRECISIONS == ("8bit", "float32")
    assert encode_scores(np.array([[1.0, -2.0]]), precision="8bit") == encode_scores(np.array([[1.0, -2.0]]))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.data())
def test_float32_round_trip_any_matrix(t, s, data):
    vals = data.draw(st.lists(st.floats(-1e30, 1e30, allow_nan=False), min_size=t * s, max_size=t * s))
    m = np.array(vals, dtype=np.float64).reshape(t, s)
    q = decode_scores(encode_scores(m, precision="float32"), "f", 1)
    assert q.dtype == np.float32 and q.shape == (t, s)
    assert np.array_equal(q, m.astype(np.float32))


def test_float32_empty_sides_and_bad_matrices():
    assert encode_scores(np.zeros((0, 3)), precision="float32") == '{"tgt": 0, "src": 3, "q": "", "dtype": "float32"}'
    assert decode_scores('{"tgt": 2, "src": 0, "q": "", "dtype": "float32"}', "f", 1).shape == (2, 0)
    with pytest.raises(ValueError, match="NaN or infinity"):
        encode_scores(np.array([[np.inf]]), precision="float32")
    with pytest.raises(ValueError, match="beyond float32"):
        encode_scores(np.array([[1e39]]), precision="float32")  # finite in float64, infinite in float32
    with pytest.raises(ValueError, match="2-D"):
        encode_scores(np.zeros(2), precision="float32")
    with pytest.raises(ValueError, match="unknown precision '16bit'; valid: 8bit, float32"):
        encode_scores(np.zeros((1, 1)), precision="16bit")
    with pytest.raises(ValueError, match="stored 8-bit"):
        encode_scores(np.zeros((1, 1)), absolute=True, precision="float32")


@pytest.mark.parametrize(
    "line, found",
    [
        ('{"tgt": 1, "src": 1, "q": "AA==", "dtype": "float64"}', "'dtype' is 'float64'; expected one of float32"),
        ('{"tgt": 1, "src": 1, "q": "AA==", "dtype": 4}', "'dtype' is 4; expected one of float32"),
        # 1 x 2 float32 is 8 bytes; "AACAPw==" holds 4
        (
            '{"tgt": 1, "src": 2, "q": "AACAPw==", "dtype": "float32"}',
            r"holds 4 bytes; expected 4 \* tgt \* src = 4 \* 1 \* 2 = 8",
        ),
        ('{"tgt": 1, "src": 1, "q": "AADAfw==", "dtype": "float32"}', "NaN or infinity"),  # 0x7FC00000: NaN
    ],
)
def test_bad_float32_lines_name_file_and_line(line, found):
    with pytest.raises(ScoresFormatError, match=f"^s.scores.jsonl:3: .*{found}"):
        decode_scores(line, "s.scores.jsonl", 3)


def test_write_and_iter_float32(tmp_path):
    p = str(tmp_path / "x.scores.jsonl.gz")
    write_scores(p, [np.array([[0.5, 0.0, 0.25]]), np.zeros((0, 1))], precision="float32")
    mats = list(iter_scores(p))
    assert [m.dtype for m in mats] == [np.float32, np.float32]
    assert mats[0].tolist() == [[0.5, 0.0, 0.25]] and mats[1].shape == (0, 1)


def test_imports_without_torch():
    code = (
        "import sys; sys.modules['torch'] = None; import align.io.softscores, eval.view; "
        "bad = [m for m in ('torch', 'fairseq', 'transformers', 'matplotlib') if sys.modules.get(m)]; "
        "print(bad); sys.exit(bool(bad))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
