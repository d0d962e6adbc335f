"""data/scripts/gpu_prepare.sh, gpu_paper_setting.sh and gpu_halves.sh: their refusals (the run itself needs the
binarized corpus and, for its purpose, a GPU; its CPU smoke test is in data/README.md)."""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "data", "scripts")


def run(tmp_path, script, *args, env=None):
    """Run a script from an empty folder (nothing of the repository can be touched)."""
    return subprocess.run(
        ["bash", os.path.join(SCRIPTS, script), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def test_prepare_usage_and_refusals(tmp_path):
    r = run(tmp_path, "gpu_prepare.sh", "--bogus")
    assert r.returncode == 2 and "usage" in r.stderr
    r = run(tmp_path, "gpu_prepare.sh", "--restore")
    assert r.returncode == 1 and "nothing in work/gpu_aside" in r.stderr
    r = run(tmp_path, "gpu_prepare.sh", env={"SHARED": str(tmp_path / "none")})
    assert r.returncode == 1 and "deen.gold" in r.stderr
    assert os.listdir(tmp_path) == []  # refused before writing anything


def test_restore_puts_the_weights_back(tmp_path):
    aside = tmp_path / "work" / "gpu_aside" / "deen"
    aside.mkdir(parents=True)
    (aside / "model.pt").write_bytes(b"weights")
    (tmp_path / "data" / "models" / "deen").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    r = run(tmp_path, "gpu_prepare.sh", "--restore")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "data" / "models" / "deen" / "model.pt").read_bytes() == b"weights"
    assert not (tmp_path / "work" / "gpu_aside").exists()


def test_restore_never_overwrites_newer_weights(tmp_path):
    aside = tmp_path / "work" / "gpu_aside" / "deen"
    aside.mkdir(parents=True)
    (aside / "model.pt").write_bytes(b"old")
    (aside / "spm.model").write_bytes(b"spm")
    models = tmp_path / "data" / "models" / "deen"
    models.mkdir(parents=True)
    (models / "model.pt").write_bytes(b"new")  # exported while the old weights were aside
    r = run(tmp_path, "gpu_prepare.sh", "--restore")
    assert r.returncode == 1 and "left in work/gpu_aside" in r.stderr
    assert (models / "model.pt").read_bytes() == b"new" and (aside / "model.pt").read_bytes() == b"old"
    assert (models / "spm.model").read_bytes() == b"spm"
    r = run(tmp_path, "gpu_prepare.sh")  # a second prepare would mix the two: refused
    assert r.returncode == 1 and "--restore" in r.stderr


def test_paper_setting_needs_the_prepared_folder(tmp_path):
    r = run(tmp_path, "gpu_paper_setting.sh", env={"GPU_DIR": str(tmp_path / "none")})
    assert r.returncode == 1 and "gpu_prepare.sh" in r.stderr
    assert os.listdir(tmp_path) == []


def test_prepare_halves_names_only_test_halves_runs(tmp_path):
    r = run(tmp_path, "gpu_prepare.sh", "halves", "deen")  # an x20 run: not this recipe
    assert r.returncode == 2 and "deen is not a test-halves run" in r.stderr
    assert os.listdir(tmp_path) == []


def test_halves_needs_the_prepared_folder(tmp_path):
    r = run(tmp_path, "gpu_halves.sh", env={"GPU_DIR": str(tmp_path / "none")})
    assert r.returncode == 1 and "gpu_prepare.sh halves" in r.stderr and "deen_half" in r.stderr
    assert os.listdir(tmp_path) == []


def test_device_scripts_share_one_set_up_and_keep_weights_only_loading():
    # the set-up both device scripts need (fairseq from the carried wheels, a fairseq-train on PATH) is written
    # once, and no script lifts torch's weights-only default: checkpoints go through the allow-listed loader
    for name in ("gpu_halves.sh", "gpu_paper_setting.sh"):
        with open(os.path.join(SCRIPTS, name)) as f:
            text = f.read()
        assert 'source "$root/data/scripts/gpu_env.sh"' in text, name
        assert "pip install" not in text and "exec python3 -m fairseq_cli.train" not in text, name
    for name in sorted(os.listdir(SCRIPTS)):
        with open(os.path.join(SCRIPTS, name)) as f:
            assert "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" not in f.read(), name
