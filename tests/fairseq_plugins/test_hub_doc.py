"""The examples in docstrings and README run and give what they say (the shipped En-Fr model)."""

import doctest
import os
import subprocess
import sys

import pytest

pytest.importorskip("fairseq")
pytestmark = pytest.mark.fairseq
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_hub_docstring_runs():
    import fairseq_plugins.hub as hub

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        res = doctest.testmod(hub, optionflags=doctest.ELLIPSIS)
    finally:
        os.chdir(cwd)
    assert res.attempted >= 3 and res.failed == 0


def test_readme_align_extract_example(tmp_path):
    pytest.importorskip("transformers")
    out = tmp_path / "enfr_hf"
    subprocess.run(
        [sys.executable, "data/scripts/fairseq_to_hf.py", "data/models/enfr", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    pair = "mr. speaker , i thank the minister . ||| monsieur le président , je remercie le ministre .\n"
    want = "0-0 0-1 0-2 2-3 3-4 4-5 6-6 6-7 7-8\n"
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert want.strip() in readme
    for model in (str(out), "data/models/enfr"):
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "align.cli.extract",
                "--model",
                model,
                "--input",
                "-",
                "--methods",
                "norm",
                "--layers",
                "0",
            ],
            input=pair,
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": ROOT},
        )
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout == want
