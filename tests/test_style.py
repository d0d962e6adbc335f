"""The habits CI enforces, configured in pyproject.toml: Ruff's lint and format check, and mypy
(strict on align/links, eval and align/attribution; the rest of the packages checked as typed).

Without ruff or mypy installed these skip, saying so; under CI (``CI`` set) they fail instead
(``./run test`` installs both with the ``dev`` extra)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(module: str) -> list[str]:
    if importlib.util.find_spec(module) is None:
        why = f"{module} is not installed (pip install -e '.[dev]')"
        if os.environ.get("CI"):
            pytest.fail(f"CI: {why}", pytrace=False)
        pytest.skip(why)
    return [sys.executable, "-m", module]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_ruff_lint_is_clean():
    r = _run(_tool("ruff") + ["check", "--no-cache", "--output-format", "concise", "."])
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-2000:]


def test_ruff_format_is_clean():
    r = _run(_tool("ruff") + ["format", "--check", "--no-cache", "."])
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-2000:]


def test_mypy_is_clean():
    r = _run(_tool("mypy") + ["--cache-dir", str(ROOT / ".mypy_cache")])  # files and flags: pyproject.toml
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-2000:]
    assert "Success: no issues found" in r.stdout
