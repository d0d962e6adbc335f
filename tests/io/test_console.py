"""Every console script, run as a user runs it: a reader that closes the pipe early (``| head -1``)
and arguments with bytes that are not UTF-8 end in one line and exit status 0 or 1, never a traceback
(align.io.console)."""

import os
import subprocess
import sys

import pytest

from align.io.console import clean_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = {**os.environ, "PYTHONPATH": ROOT, "LC_ALL": "C.UTF-8", "PYTHONUTF8": "0", "OMP_NUM_THREADS": "1"}


def _closed_pipe(args, cwd):
    """(exit status, stderr) of a module run with its stdout a pipe closed before it writes."""
    p = subprocess.Popen(
        [sys.executable, "-m", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=ENV
    )
    p.stdout.close()  # like `| head -0`: the reader is gone before the first write
    err = p.stderr.read().decode("utf-8", "replace")
    return p.wait(timeout=120), err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "g.talp").write_text("1-1 2-2\n" * 3000)
    (tmp_path / "h.align").write_text("0-0 1-1\n" * 3000)
    (tmp_path / "t.txt").write_text("a b ||| c d\n" * 3000)
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["eval.cli", "g.talp", "h.align", "h.align"],
        ["eval.view", "t.txt", "h.align", "-o", "-"],
        ["align.cli.merge", "."],
    ],
)
def test_a_closed_pipe_is_one_line_and_no_traceback(files, args):
    if args[0] == "align.cli.merge":
        from align.extraction.shards import write_shard

        write_shard(str(files), 0, 1, 1, {"a.align": [(0, "0-0")]}, {})
    code, err = _closed_pipe(args, files)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert code == 1 and len(err.strip().splitlines()) == 1 and "broken pipe" in err.lower()


def test_arguments_that_are_not_utf8_are_shown_not_a_crash(files):
    hyp = os.fsencode(str(files / "h.align")).replace(b"h.align", b"h\xff.align")
    os.link(files / "h.align", hyp)
    for args in (
        [b"-m", b"eval.cli", b"g.talp", hyp],
        [b"-m", b"eval.view", b"t.txt", hyp, b"--title", b"caf\xe9 \xff", b"-o", b"v\xfe.html"],
        [b"-c", b"import sys; from align.cli.symmetrize import main; sys.exit(main())", hyp, hyp],
    ):
        r = subprocess.run([os.fsencode(sys.executable), *args], capture_output=True, cwd=files, env=ENV)
        err = r.stderr.decode("utf-8", "replace")
        assert r.returncode == 0 and "Traceback" not in err, err
    page = open(files / os.fsdecode(b"v\xfe.html"), encoding="utf-8").read()
    assert "caf\ufffd \ufffd" in page


def test_clean_text_replaces_what_utf8_cannot_encode():
    assert clean_text("a\udcffb\ud800") == "a\ufffdb\ufffd" and clean_text("é ok") == "é ok"


COMMANDS = [
    "align.cli.extract",
    "align.cli.calibrate",
    "align.cli.filter",
    "align.cli.train",
    "align.cli.merge",
    "align.cli.symmetrize",
    "eval.cli",
    "eval.view",
]


@pytest.mark.parametrize("module", COMMANDS)
def test_main_returns_the_status_of_help_and_of_a_usage_error(module, capsys):
    # main(argv) -> int: argparse's exits (0 for --help, 2 for an unknown flag) are returned, never raised
    import importlib

    main = importlib.import_module(module).main
    assert main(["--help"]) == 0
    assert "usage:" in capsys.readouterr().out
    assert main(["--no-such-flag"]) == 2
    assert "error:" in capsys.readouterr().err  # a required argument missing, or the flag unrecognized
