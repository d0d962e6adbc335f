"""A command that needs an extra says which, in one line, with exit status 2 (align.extraction.extras)."""

import os
import subprocess
import sys

import pytest

from align.extraction.extras import install_hint, missing_module

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIRS = os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards", "enfr.src-tgt")


def _extract_without(module: str, *argv: str) -> subprocess.CompletedProcess:
    # sys.modules[name] = None makes `import name` raise ModuleNotFoundError, as if it were not installed
    code = (
        f"import sys; sys.modules[{module!r}] = None; from align.cli.extract import main; sys.exit(main(sys.argv[1:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT},
    )


@pytest.mark.parametrize(
    "module,model,extra",
    [
        ("torch", "data/models/enfr", "fairseq"),
        ("torch", "Helsinki-NLP/opus-mt-en-fr", "hf"),
        ("fairseq", "data/models/enfr", "fairseq"),
    ],
)
def test_a_missing_package_names_the_extra(module, model, extra):
    r = _extract_without(module, "--model", model, "--input", PAIRS)
    assert r.returncode == 2, r.stderr
    assert (
        r.stderr == f"align-extract: this needs {module}, which is not installed: pip install 'norm-align[{extra}]'\n"
    )


def test_help_and_version_need_no_torch():
    r = _extract_without("torch", "--help")
    assert r.returncode == 0 and "--methods METHODS" in r.stdout
    assert "listed once torch is installed" in " ".join(r.stdout.split())
    r = _extract_without("torch", "--version")
    assert r.returncode == 0 and r.stdout.startswith("align-extract 0.")


def test_hints():
    assert install_hint("transformers", None) == (
        "this needs transformers, which is not installed: pip install 'norm-align[hf]'"
    )
    assert "'norm-align[fairseq]' (fairseq models) or 'norm-align[hf]'" in install_hint("torch", None)
    assert missing_module(ModuleNotFoundError("x", name="torch.nn")) == "torch"
    assert missing_module(ModuleNotFoundError("x", name="mypackage")) is None
    assert missing_module(ValueError("torch")) is None
