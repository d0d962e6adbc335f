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


# -- sizes a newcomer can read: no module of align/ over 500 lines, no function over 80 ---------------------

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
SIZE_EXCEPTIONS: dict[str, str] = {
    # "path" or "path:function": why it stays longer (none today; add one only with its reason)
}


def _sizes() -> list[str]:
    import ast

    over = []
    for path in sorted((ROOT / "align").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        src = path.read_text(encoding="utf-8")
        if len(src.splitlines()) > MAX_MODULE_LINES and rel not in SIZE_EXCEPTIONS:
            over.append(f"{rel}: {len(src.splitlines())} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES and f"{rel}:{node.name}" not in SIZE_EXCEPTIONS:
                    over.append(f"{rel}:{node.lineno} {node.name}: {n} lines (at most {MAX_FUNCTION_LINES})")
    return over


def test_modules_and_functions_stay_readable():
    over = _sizes()
    assert not over, "split these (or add them to SIZE_EXCEPTIONS with the reason):\n" + "\n".join(over)


def test_every_size_exception_is_still_needed():
    stale = [k for k in SIZE_EXCEPTIONS if not (ROOT / k.partition(":")[0]).exists()]
    assert not stale, f"SIZE_EXCEPTIONS names files that are gone: {stale}"
