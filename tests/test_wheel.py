"""The package as a new user gets it: ``python -m build`` makes the sdist and, from it, the wheel;
the wheel goes into a fresh virtualenv with its dependencies alone (numpy, zstandard: no torch),
and every console script answers ``--help`` and ``--version`` there. ``align-eval`` scores the
shipped gold set with the same figures as the source tree, and ``align-extract`` says in one line
which extra to install (exit 2) instead of a traceback.

About 30 s: the build, a venv and one ``pip install`` (numpy and zstandard from the index or pip's
cache). Nothing here runs against the source tree: the commands run outside it, without
PYTHONPATH."""

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HANSARDS = ROOT / "align" / "gold" / "sets" / "enfr_hansards"
SCRIPTS = ("align-eval", "align-view", "align-symmetrize", "align-extract", "align-merge", "align-calibrate")


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    # an installed package as a user has it: no source tree on the path, and no shared data named (the suite
    # names ../shared through NORM_ALIGN_SHARED; the wheel must not find it otherwise)
    drop = ("PYTHONPATH", "PYTHONHOME", "PIP_CONSTRAINT", "NORM_ALIGN_SHARED", "NORM_ALIGN_TESTSETS")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, **kw)


def _can_build_here() -> bool:
    """``build`` and setuptools in this interpreter (by spec: a ``build/`` folder in the tree is no package)."""
    specs = [importlib.util.find_spec(m) for m in ("build", "setuptools")]
    return all(s is not None and s.origin is not None for s in specs)  # a namespace package has no origin


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: the venv's own setuptools (pyproject.toml's build requirements), no download
    flags = ["--no-isolation"] if _can_build_here() else []
    r = _run([sys.executable, "-m", "build", *flags, "--outdir", out, ROOT], cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory) -> Path:
    """A fresh virtualenv holding the wheel and its dependencies only."""
    home = tmp_path_factory.mktemp("venv")
    r = _run([sys.executable, "-m", "venv", home / "v"])
    assert r.returncode == 0, r.stderr
    (wheel,) = dist.glob("*.whl")
    r = _run([home / "v" / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return home / "v" / "bin"


def test_sdist_and_wheel_carry_what_a_user_reads(dist):
    from align import __version__

    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    assert sdist.name == f"norm_align-{__version__}.tar.gz" and wheel.name.startswith(f"norm_align-{__version__}-")
    names = tarfile.open(sdist).getnames()
    top = f"norm_align-{__version__}"
    for name in ("LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "setup.cfg", "eval/view_template.html"):
        assert f"{top}/{name}" in names, name
    with zipfile.ZipFile(wheel) as z:
        files = z.namelist()
        meta = z.read(f"norm_align-{__version__}.dist-info/METADATA").decode()
    assert "eval/view_template.html" in files and "align/py.typed" in files
    assert any(f.endswith("licenses/LICENSE") for f in files)
    assert f"Version: {__version__}" in meta and "License-File: LICENSE" in meta
    assert "Classifier: Typing :: Typed" in meta and "Description-Content-Type: text/markdown" in meta
    assert "Provides-Extra: fairseq" in meta and "Provides-Extra: hf" in meta


def test_long_description_renders(dist):
    pytest.importorskip("twine")
    r = _run([sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir())])
    assert r.returncode == 0 and "PASSED" in r.stdout, r.stdout + r.stderr


def test_the_wheel_installs_numpy_alone(venv):
    r = _run(
        [
            venv / "python",
            "-c",
            "import align, eval, numpy, importlib.util as u; "
            "print(align.__file__, [m for m in ('torch', 'fairseq', 'transformers') if u.find_spec(m)])",
        ],
        cwd=venv,
    )
    assert r.returncode == 0, r.stderr
    where, found = r.stdout.split(" ", 1)
    assert str(ROOT) not in where and "site-packages" in where
    assert found.strip() == "[]"


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_console_script_answers_help_and_version(venv, script):
    from align import __version__

    r = _run([venv / script, "--help"], cwd=venv)
    assert r.returncode == 0 and r.stdout.startswith(f"usage: {script}"), r.stdout + r.stderr
    assert "--version" in r.stdout
    r = _run([venv / script, "--version"], cwd=venv)
    assert r.returncode == 0 and r.stdout.strip() == f"{script} {__version__}", r.stdout + r.stderr


def _hypotheses(tmp_path: Path) -> list[Path]:
    """Two Pharaoh files for the gold set: the diagonal, and the gold's sure links with every third dropped."""
    gold = (HANSARDS / "enfr.gold").read_text(encoding="utf-8").splitlines()
    diag, sure = [], []
    for line in (HANSARDS / "enfr.src-tgt").read_text(encoding="utf-8").splitlines():
        src, tgt = (len(s.split()) for s in line.split(" ||| "))
        diag.append(" ".join(f"{i}-{i}" for i in range(min(src, tgt))))
    for line in gold:
        links = [t for t in line.split() if "-" in t]
        sure.append(" ".join("{}-{}".format(*(int(x) - 1 for x in t.split("-"))) for k, t in enumerate(links) if k % 3))
    out = []
    for name, rows in (("diag", diag), ("sure", sure)):
        (tmp_path / f"{name}.align").write_text("\n".join(rows) + "\n", encoding="utf-8")
        out.append(tmp_path / f"{name}.align")
    return out


def test_scoring_with_the_wheel_gives_the_source_trees_figures(venv, tmp_path):
    hyps = _hypotheses(tmp_path)
    flags = ["--paired-bootstrap", "200", "--format", "json"]
    installed = _run([venv / "align-eval", HANSARDS / "enfr.gold", *hyps, *flags], cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    tree = _run([sys.executable, "-m", "eval.cli", HANSARDS / "enfr.gold", *hyps, *flags], cwd=ROOT)
    assert tree.returncode == 0, tree.stderr
    got, want = json.loads(installed.stdout), json.loads(tree.stdout)
    assert got == want
    rows = got["results"] if isinstance(got, dict) and "results" in got else got
    assert len(rows) == 2 and all(0 <= r["aer"] < 100 for r in rows)

    sym = _run([venv / "align-symmetrize", "-m", "intersect", *hyps], cwd=tmp_path)
    assert sym.returncode == 0 and len(sym.stdout.splitlines()) == 447, sym.stderr
    view = _run(
        [
            venv / "align-view",
            HANSARDS / "enfr.src-tgt",
            *hyps,
            "--gold",
            HANSARDS / "enfr.gold",
            "-o",
            tmp_path / "view.html",
            "--format",
            "json",
        ],
        cwd=tmp_path,
    )
    assert view.returncode == 0 and json.loads(view.stdout)["sentences"] == 447, view.stderr


@pytest.mark.parametrize(
    "model,extra", [(ROOT / "data" / "models" / "enfr", "fairseq"), ("Helsinki-NLP/opus-mt-en-fr", "hf")]
)
def test_align_extract_without_torch_names_the_extra(venv, tmp_path, model, extra):
    r = _run([venv / "align-extract", "--model", model, "--input", HANSARDS / "enfr.src-tgt"], cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr == f"align-extract: this needs torch, which is not installed: pip install 'norm-align[{extra}]'\n"


def test_named_test_sets_from_the_wheel(venv, tmp_path):
    """The shipped sets are package data; the others come from NORM_ALIGN_TESTSETS, as laid out in ../shared."""
    hyps = _hypotheses(tmp_path)
    installed = _run([venv / "align-eval", "-t", "hansards", *hyps, "--format", "json"], cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    tree = _run([sys.executable, "-m", "eval.cli", "-t", "hansards", *hyps, "--format", "json"], cwd=ROOT)
    assert json.loads(installed.stdout) == json.loads(tree.stdout)
    listing = _run([venv / "align-eval", "--list", "--format", "json"], cwd=tmp_path)
    rows = {r["name"]: r for r in json.loads(listing.stdout)}
    assert {n for n, r in rows.items() if r["where"] == "shipped"} == {"hansards", "wpt03", "kftt", "czenali"}
    missing = _run([venv / "align-eval", "-t", "rwth", hyps[0]], cwd=tmp_path)
    assert missing.returncode == 1 and "put deen.src-tgt, deen.gold in" in missing.stderr
    shared = ROOT.parent / "shared" / "data" / "gold"
    if shared.is_dir():
        (tmp_path / "empty.align").write_text("\n" * 450)
        env_run = subprocess.run(
            [str(venv / "align-eval"), "-t", "tsinghua", tmp_path / "empty.align", "--format", "json"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "NORM_ALIGN_TESTSETS": str(shared)},
        )
        assert env_run.returncode == 0, env_run.stderr
        assert json.loads(env_run.stdout)[0]["test_set"]["name"] == "tsinghua"
