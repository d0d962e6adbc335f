"""data/scripts/train_background.sh and make_models.sh: a shipped model of the test-halves protocol is never continued
on the x20 recipe's text, nor lends it its pieces (refused before anything is written)."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")  # the scripts read the models' record with fairseq_plugins.checkpoint

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "data", "scripts")


def run(tmp_path, script, *args):
    """Run a script from a folder holding only data/models/ (nothing of the repository can be touched)."""
    # the scripts run with the project's .venv active (their usage): its python first on PATH, as under ./run test
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    env = {**os.environ, "PATH": path, "PYTHONPATH": ROOT, "SHARED": str(tmp_path / "none")}
    return subprocess.run(["bash", os.path.join(SCRIPTS, script), *args], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip


@pytest.fixture
def halves_enfr(tmp_path):
    """data/models/enfr of the test-halves protocol (as once the half models replace the x20 ones)."""
    d = tmp_path / "data" / "models" / "enfr"
    d.mkdir(parents=True)
    (d / "model_config.json").write_text(json.dumps({"training_text": {"test_halves": {"seen_once": 219}}}))
    return tmp_path


def test_train_background_does_not_continue_a_half_model_on_the_x20_text(halves_enfr):
    r = run(halves_enfr, "train_background.sh", "enfr")
    assert r.returncode == 2
    assert "data/models/enfr is a model of the test-halves protocol" in r.stderr and "train enfr_half" in r.stderr
    assert sorted(os.listdir(halves_enfr)) == ["data"]  # no work/


def test_make_models_fren_x20_does_not_take_a_half_models_pieces(halves_enfr):
    r = run(halves_enfr, "make_models.sh", "fren")
    assert r.returncode == 2 and "fren (x20) needs the x20 En->Fr's pieces" in r.stderr
    assert sorted(os.listdir(halves_enfr)) == ["data"]


def test_the_second_direction_continues_its_own_shipped_model_without_work(tmp_path):
    # data/models/fren of the test-halves protocol and no work/ (a fresh machine): train_background.sh fren_half
    # continues it with its own pieces (RESUME), not "prepare work/enfr_half first"; it stops later, here, at the
    # weights this stand-in folder lacks
    d = tmp_path / "data" / "models" / "fren"
    d.mkdir(parents=True)
    (d / "model_config.json").write_text(json.dumps({"training_text": {"test_halves": {"seen_once": 219}}}))
    os.symlink(SCRIPTS, tmp_path / "data" / "scripts")  # the scripts call each other from the repository root
    r = run(tmp_path, "train_background.sh", "fren_half")
    assert r.returncode != 0 and "prepare work/enfr_half first" not in r.stderr
    assert "data/models/fren" in r.stderr  # it went for the shipped model's weights
