"""Every command a user runs, fed random bytes, byte order marks, carriage returns, NUL, huge
lines and corrupt model files: it ends with exit status 1 (bad input) or 2 (usage), or 0 when the
bytes happen to be valid, with one message line naming the file, never a traceback."""

import os
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENFR = os.path.join(ROOT, "data", "models", "enfr")
GOLD = os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards", "enfr.gold")
TEXT = os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards", "enfr.src-tgt")

PIECES = [
    b"0-0 1-1\n",
    b"2p3 ",
    b"\xef\xbb\xbf",
    b"\r",
    b"\r\n",
    b"\x00",
    b"\xff\xfe",
    b"x ||| y\n",
    b" ||| ",
    b"|||",
    b"\n",
    b"-",
    b"99999999-1",
    b"\xe2\x80\xa8",
    b"1-1-P",
    b"0 1 2 S\n",
    b"a" * 5000,
]
RAW = st.one_of(st.binary(max_size=300), st.lists(st.sampled_from(PIECES), max_size=30).map(b"".join))


def _call(main, argv, capsys):
    """(exit status, stderr) of a CLI main; a traceback (an escaping exception) fails the test."""
    code = main(argv)  # console_main returns argparse's exits too
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def _check(code, err, ok_allowed=True):
    assert code in ((0, 1, 2) if ok_allowed else (1, 2)), (code, err)
    if code == 1:
        lines = [x for x in err.strip().splitlines() if x.strip()]
        assert lines and ":" in lines[-1], err  # one line naming the file (and line)


def _file(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=RAW, where=st.sampled_from(["gold", "hyp", "text"]))
def test_align_eval(tmp_path, capsys, data, where):
    from eval.cli import main

    f = _file(tmp_path, "f.txt", data)
    gold, hyp, text = (
        (f if where == "gold" else GOLD),
        (f if where == "hyp" else GOLD),
        (f if where == "text" else TEXT),
    )
    code, err = _call(main, [gold, hyp, "--hyp-format", "talp", "--text", text], capsys)
    _check(code, err)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=RAW, b=RAW, text=st.one_of(st.none(), RAW))
def test_align_symmetrize(tmp_path, capsys, a, b, text):
    from align.cli.symmetrize import main

    argv = [_file(tmp_path, "a", a), _file(tmp_path, "b", b), "-o", str(tmp_path / "o")]
    code, err = _call(main, argv + (["--text", _file(tmp_path, "t", text)] if text is not None else []), capsys)
    _check(code, err)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=RAW, hyp=RAW)
def test_align_view(tmp_path, capsys, text, hyp):
    from eval.view import main

    code, err = _call(
        main, [_file(tmp_path, "t", text), _file(tmp_path, "h.align", hyp), "-o", str(tmp_path / "v.html")], capsys
    )
    _check(code, err)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(manifest=RAW, rows=RAW)
def test_align_merge(tmp_path, capsys, manifest, rows):
    import shutil

    from align.cli.merge import main

    d = tmp_path / "run"
    shutil.rmtree(d, ignore_errors=True)
    for k in range(2):
        (d / f"shard-{k}-of-2").mkdir(parents=True)
        (d / f"shard-{k}-of-2" / "manifest.json").write_bytes(
            manifest if k else b'{"shard": 0, "shards": 2, "total": 2, "files": ["a.align"]}'
        )
        (d / f"shard-{k}-of-2" / "a.align").write_bytes(rows if k else b"0\t0-0\n")
    code, err = _call(main, [str(d)], capsys)
    _check(code, err)


@pytest.fixture(scope="module")
def corrupt_models(tmp_path_factory):
    """Model folders a user may hand over by mistake: cut, garbage, empty, wrong JSON."""
    import shutil

    root = tmp_path_factory.mktemp("models")
    out = {}
    for name, how in (
        ("cut-safetensors", "cut"),
        ("garbage-safetensors", "garbage"),
        ("bad-config", "config"),
        ("garbage-pt", "pt"),
    ):
        d = root / name
        shutil.copytree(ENFR, d, ignore=shutil.ignore_patterns("MODEL_CARD.md"))
        w = d / "model.safetensors"
        if how == "cut":
            w.write_bytes(w.read_bytes()[:5000])
        elif how == "garbage":
            w.write_bytes(bytes(random.Random(1).randrange(256) for _ in range(4000)))
        elif how == "config":
            (d / "model_config.json").write_text("{not json")
        else:
            w.unlink()
            (d / "model.pt").write_bytes(b"PK\x03\x04 not a checkpoint")
        out[name] = str(d)
    hf = root / "hf-broken"
    hf.mkdir()
    (hf / "config.json").write_text('{"model_type": "marian", "d_model": 8}')
    (hf / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}garbage")
    out["hf-broken"] = str(hf)
    return out


@pytest.mark.fairseq
@pytest.mark.parametrize("which", ["cut-safetensors", "garbage-safetensors", "bad-config", "garbage-pt", "hf-broken"])
def test_align_extract_corrupt_models(tmp_path, capsys, corrupt_models, which):
    pytest.importorskip("fairseq")
    pytest.importorskip("transformers")
    from align.cli.extract import main

    pairs = _file(tmp_path, "p.txt", b"the house ||| la maison\n")
    code, err = _call(main, ["--model", corrupt_models[which], "--input", pairs], capsys)
    assert code == 1, err
    assert err.count("\n") == 1 and corrupt_models[which] in err, err


@pytest.mark.fairseq
@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbfthe house ||| la maison\r\n",
        b"the\x00 house ||| la maison\n",
        b"the house ||| la\rmaison\n",
        b"\xff\xfe\x00a ||| b\n",
        b"a ||| b\n" * 3 + b"c",
        b"a" * 1_000_000 + b" ||| b\n",
        b"a ||| b ||| c\n",
        b" ||| b\n",
        b"\n",
        b"a\xe2\x80\xa8b ||| c\n",
        b"",
        b"x ||| y\nx ||| \n",
    ],
)
def test_align_extract_bad_input(tmp_path, capsys, data):
    pytest.importorskip("fairseq")
    from align.cli.extract import main

    pairs = _file(tmp_path, "p.txt", data)
    code, err = _call(main, ["--model", ENFR, "--input", pairs, "--out", str(tmp_path / "o"), "--layers", "0"], capsys)
    _check(code, err)
    if code == 1:
        assert pairs in err.strip().splitlines()[-1]
        assert not (tmp_path / "o").exists() or os.listdir(tmp_path / "o") == []  # no partial output


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=RAW)
def test_align_eval_named_test_set(tmp_path, capsys, data):
    from eval.cli import main

    code, err = _call(main, ["-t", "hansards", _file(tmp_path, "h.txt", data)], capsys)
    _check(code, err)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=RAW)
def test_calibration_file(tmp_path, data):
    from align.confidence.calibration import CalibrationError, read_calibration

    with pytest.raises(CalibrationError):  # random bytes are never a calibration; one error, naming the file
        read_calibration(_file(tmp_path, "c.json", data))


def _packed(suffix, data):
    import gzip
    import lzma

    if suffix == ".zst":
        zstandard = pytest.importorskip("zstandard")
        c = zstandard.ZstdCompressor()
        first = c.compress(data[: len(data) // 3])
        return first + c.compress(data[len(data) // 3 :]), len(first)  # two frames, as pzstd writes
    return (gzip.compress(data) if suffix == ".gz" else lzma.compress(data)), None


CUT_LINKS = b"".join(b"0-0 1-1 2-2\n" for _ in range(400))
CUT_TEXT = b"".join(b"a b c ||| x y z\n" for _ in range(400))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    suffix=st.sampled_from([".gz", ".xz", ".zst"]),
    share=st.floats(0.05, 0.99),
    which=st.sampled_from(
        ["eval-gold", "eval-hyp", "eval-both", "symmetrize", "symmetrize-both", "view-text", "view-hyp", "view-scores"]
    ),
)
def test_a_truncated_compressed_input_is_refused_by_every_command(tmp_path, capsys, suffix, share, which):
    """#42: a compressed file cut anywhere is one line and exit 1, never fewer sentences read as all."""
    import numpy as np

    from align.cli.symmetrize import main as sym
    from align.io.softscores import encode_scores
    from eval.cli import main as ev
    from eval.view import main as view

    scores = b"".join((encode_scores(np.ones((3, 3))) + "\n").encode() for _ in range(400))
    full = {"view-text": CUT_TEXT, "view-scores": scores}.get(which, CUT_LINKS)
    packed, boundary = _packed(suffix, full)
    n = max(1, int(len(packed) * share))
    assume(n != boundary)  # cut exactly between two frames, the rest is a whole valid stream (as gzip members)
    cut = _file(tmp_path, ("h.scores.jsonl" if which == "view-scores" else "f.align") + suffix, packed[:n])
    links = _file(tmp_path, "ok.align", CUT_LINKS)
    text = _file(tmp_path, "t.txt", CUT_TEXT)
    out = tmp_path / "out.file"
    if out.exists():
        out.unlink()
    main, argv = {
        "eval-gold": (ev, [cut, links, "--gold-format", "pharaoh", "--per-sentence", str(out)]),
        "eval-hyp": (ev, [links, cut, "--gold-format", "pharaoh", "--per-sentence", str(out)]),
        "eval-both": (ev, [cut, cut, "--gold-format", "pharaoh", "--per-sentence", str(out)]),  # no count to differ
        "symmetrize": (sym, [links, cut, "-o", str(out)]),
        "symmetrize-both": (sym, [cut, cut, "-o", str(out)]),
        "view-text": (view, [cut, links, "-o", str(out)]),
        "view-hyp": (view, [text, f"h={cut}", "-o", str(out)]),
        "view-scores": (view, [text, f"h={links}", "--scores", f"h={cut}", "-o", str(out)]),
    }[which]
    code, err = _call(main, argv, capsys)
    assert code == 1, err
    assert len(err.strip().splitlines()) == 1 and os.path.basename(cut) in err, err
    assert not out.exists()  # no partial output


@pytest.mark.parametrize("where", ["folder", "under-a-file"])
def test_align_symmetrize_unwritable_output_is_one_line(tmp_path, capsys, where):
    from align.cli.symmetrize import main

    a = _file(tmp_path, "a.align", b"0-0 1-1\n")
    (tmp_path / "d").mkdir()
    out = str(tmp_path / "d") if where == "folder" else os.path.join(a, "x")
    code, err = _call(main, [a, a, "-o", out], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "cannot write" in err, err
    assert os.listdir(tmp_path / "d") == []
