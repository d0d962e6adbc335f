"""Output that cannot be written, for every command that prints, run as a user runs it (a subprocess):
standard output a full disk (``> /dev/full``), closed (``>&-``), or a pipe whose reader goes away after
any number of bytes (``| head -1``, even after the last write). Each ends with one line naming standard
output and exit 1, never a traceback; a reader that took everything leaves exit 0. And ``align-extract
--out`` a symbolic link: refused before any work, nothing written, no temporary entry left."""

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = {**os.environ, "PYTHONPATH": ROOT, "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1"}

COMMANDS = {  # name: module and arguments, run in the fixture's folder; each prints to standard output
    "align-eval": ["eval.cli", "g.talp", "h.align", "h.align"],
    "align-symmetrize": ["align.cli.symmetrize", "s.align", "s.align"],
    "align-symmetrize-big": ["align.cli.symmetrize", "h.align", "h.align"],  # more than a pipe's buffer
    "align-merge": ["align.cli.merge", "run", "--overwrite"],
    "align-view": ["eval.view", "t.txt", "s.align", "-o", "-"],
}


def _argv(module, *args):
    """The command as its console script runs it: ``main()`` of its module (``-m`` would warn about align.cli)."""
    return [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main())", *args]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from align.extraction.shards import write_shard

    d = tmp_path_factory.mktemp("out")
    (d / "g.talp").write_text("1-1 2-2\n" * 12000)
    (d / "h.align").write_text("0-0 1-1\n" * 12000)  # 96 KB: symmetrized, more than a 64 KB pipe buffer
    (d / "s.align").write_text("0-0 1-1\n0-0\n1-0\n")
    (d / "t.txt").write_text("a b ||| c d\nx ||| y\nu v ||| w\n")
    write_shard(str(d / "run"), 0, 1, 1, {"a.align": [(0, "0-0")]}, {})
    return d


@pytest.fixture(scope="module")
def full_outputs(folder):
    """How much each command prints when nothing goes wrong: (bytes, bytes of its first line, lines)."""
    out = {}
    for name, args in COMMANDS.items():
        r = subprocess.run(_argv(*args), capture_output=True, cwd=folder, env=ENV, timeout=120)
        assert r.returncode == 0 and r.stdout, (name, r.stderr)
        out[name] = (len(r.stdout), len(r.stdout.split(b"\n")[0]) + 1, len(r.stdout.splitlines()))
    return out


def _check_one_line(code, err, expected):
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert code == 1 and len(err.strip().splitlines()) == 1 and expected in err, (code, err)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_full_disk_is_one_line(folder, name):
    with open("/dev/full", "wb") as full:
        r = subprocess.run(_argv(*COMMANDS[name]), stdout=full, stderr=subprocess.PIPE, cwd=folder, env=ENV)
    _check_one_line(r.returncode, r.stderr.decode(), "cannot write standard output: No space left on device")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_closed_standard_output_is_one_line(folder, name):
    r = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" >&-', *_argv(*COMMANDS[name])],
        capture_output=True,
        cwd=folder,
        env=ENV,
    )
    _check_one_line(r.returncode, r.stderr.decode(), "cannot write standard output: it is closed")


def test_a_closed_standard_output_is_fine_for_a_command_that_prints_nothing(folder, tmp_path):
    out = tmp_path / "o.align"
    r = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" >&-', *_argv("align.cli.symmetrize", "s.align", "s.align", "-o", str(out))],
        capture_output=True,
        cwd=folder,
        env=ENV,
    )
    assert r.returncode == 0 and out.read_text() == "0-0 1-1\n0-0\n1-0\n"
    assert r.stderr.decode().startswith("align-symmetrize: 3 sentences") and r.stderr.count(b"\n") == 1  # summary


def test_a_closed_standard_error_never_sends_the_message_to_standard_output(folder):
    r = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" 2>&-', *_argv("align.cli.symmetrize", "s.align", "missing")],
        capture_output=True,
        cwd=folder,
        env=ENV,
    )
    assert r.returncode == 1 and r.stdout == b""


def _read_then_close(folder, name, n):
    """(exit status, stderr) of a command whose reader takes ``n`` bytes and goes away."""
    p = subprocess.Popen(_argv(*COMMANDS[name]), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=folder, env=ENV)
    fd, got = p.stdout.fileno(), 0
    while got < n:
        chunk = os.read(fd, n - got)
        assert chunk, "the command wrote less than it does alone"
        got += len(chunk)
    p.stdout.close()
    err = p.stderr.read().decode("utf-8", "replace")
    return p.wait(timeout=120), err


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(COMMANDS)), share=st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)))
def test_a_reader_that_goes_away_early_is_one_line_whenever_it_goes(folder, full_outputs, name, share):
    size = full_outputs[name][0]
    n = min(size, int(share * size))
    code, err = _read_then_close(folder, name, n)
    if n < size:  # bytes were left unread: the output did not reach its reader
        _check_one_line(code, err, "broken pipe")
    else:  # the reader took everything (and then went): nothing was lost (align-view says what it wrote)
        assert code == 0 and "broken pipe" not in err and "Traceback" not in err, err


@pytest.mark.parametrize("name", ["align-symmetrize", "align-eval", "align-view"])
def test_head_1_after_the_last_write(folder, full_outputs, name):
    """`align-symmetrize ... | head -1` exited 0: everything fit in the pipe's buffer, so no write failed."""
    _, first_line, lines = full_outputs[name]
    assert lines > 1
    code, err = _read_then_close(folder, name, first_line)
    _check_one_line(code, err, "broken pipe")


@pytest.mark.parametrize("overwrite", [False, True])
def test_align_extract_out_a_symbolic_link_is_refused_before_any_work(tmp_path, overwrite):
    target = tmp_path / "target"
    target.mkdir()
    (target / "old.align").write_text("0-0\n")
    (target / "manifest.json").write_text('{"files": ["old.align"]}\n')
    (tmp_path / "LINK").symlink_to(target)
    (tmp_path / "p.txt").write_text("a b ||| c d\n")
    args = ["--model", str(tmp_path / "no-model"), "--input", "p.txt", "--out", "LINK"]
    r = subprocess.run(
        _argv("align.cli.extract", *args, *(["--overwrite"] if overwrite else [])),
        capture_output=True,
        cwd=tmp_path,
        env=ENV,
        timeout=120,
    )
    err = r.stderr.decode()
    assert r.returncode == 1 and err.count("\n") == 1 and "LINK: is a symbolic link (to " in err, err
    assert sorted(os.listdir(tmp_path)) == ["LINK", "p.txt", "target"] and (tmp_path / "LINK").is_symlink()
    assert sorted(os.listdir(target)) == ["manifest.json", "old.align"]
