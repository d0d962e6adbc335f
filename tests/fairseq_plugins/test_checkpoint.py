"""fairseq_plugins/checkpoint.py: checkpoints load without running code from them; the safetensors format
round-trips exactly; fairseq's own loading (``--user-dir fairseq_plugins``) goes through the safe loader."""

import argparse
import enum
import glob
import os
import shutil
import subprocess
import sys

import pytest

# Importing the plugin package imports fairseq. Without it, skip; under CI its absence is a failure.
if not os.environ.get("CI"):
    pytest.importorskip("fairseq")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from align.gold.protocol import protocol_of  # noqa: E402
from align.io.atomic import new_file_mode  # noqa: E402
from fairseq_plugins import checkpoint as ck  # noqa: E402

pytestmark = pytest.mark.fairseq

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENFR = os.path.join(ROOT, "data", "models", "enfr")
TIED = ["encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "decoder.output_projection.weight"]
# models are shipped once, as safetensors; fairseq's .pt is written into the cache on first use
SHIPPED = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, "data", "models", "*", "model.safetensors")))
needs_enfr = pytest.mark.skipif(
    not os.path.exists(os.path.join(ENFR, "model.safetensors")), reason="shipped En-Fr model absent"
)


def enfr_pt() -> str:
    """The shipped En-Fr model as the .pt fairseq reads (ck.fairseq_checkpoint: cached, verified)."""
    return ck.fairseq_checkpoint(ENFR)


sys.path.insert(0, os.path.join(ROOT, "data", "scripts"))


class OpensFile:
    """Unpickling calls open(path, "w"): the file appears only if the pickle ran."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


class RunsShell:
    """Unpickling runs a shell command that creates a file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


PAYLOADS = [(OpensFile, f"{open.__module__}.open"), (RunsShell, f"{os.system.__module__}.system")]


def crafted(tmp_path, payload, with_model: bool = False) -> tuple[str, str]:
    """A checkpoint holding ``payload`` (optionally beside the En-Fr model's real content); the marker path."""
    marker = str(tmp_path / "pwned")
    state = ck.load_checkpoint(enfr_pt()) if with_model else {"model": {}}
    state["extra"] = payload(marker)
    path = str(tmp_path / "crafted.pt")
    torch.save(state, path)
    return path, marker


def same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("payload,name", PAYLOADS)
def test_crafted_checkpoint_is_refused_and_runs_nothing(tmp_path, payload, name):
    path, marker = crafted(tmp_path, payload)
    with pytest.raises(ck.UnsafeCheckpointError) as e:
        ck.load_checkpoint(path)
    assert not os.path.exists(marker)
    assert isinstance(e.value, ValueError) and e.value.names == [name]
    msg = str(e.value)
    assert msg.startswith(f"{path}: refused") and name in msg and "--trust-checkpoint" in msg and "trust=True" in msg


@pytest.mark.parametrize("payload,name", PAYLOADS)
def test_fairseq_loading_is_routed_through_the_safe_loader(tmp_path, payload, name):
    from fairseq import checkpoint_utils

    path, marker = crafted(tmp_path, payload)
    with pytest.raises(ck.UnsafeCheckpointError, match=name):
        checkpoint_utils.load_checkpoint_to_cpu(path)
    assert not os.path.exists(marker)


def test_trusted_load_runs_the_old_way(tmp_path):
    path, marker = crafted(tmp_path, OpensFile)
    state = ck.load_checkpoint(path, trust=True)
    state["extra"].close()
    assert os.path.exists(marker)  # what trust means: the file's code ran


@needs_enfr
def test_trust_flag_for_fairseq_loading(tmp_path):
    from fairseq import checkpoint_utils

    path, marker = crafted(tmp_path, OpensFile, with_model=True)
    ck.set_trust_checkpoint(True)
    try:
        state = checkpoint_utils.load_checkpoint_to_cpu(path)
    finally:
        ck.set_trust_checkpoint(False)
    state["extra"].close()
    assert os.path.exists(marker) and state["cfg"].model.arch == "transformer"


def test_damaged_file_is_a_checkpoint_error(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")  # no zip, no pickle: not offered to be unpickled
    with pytest.raises(ck.CheckpointError, match=f"{bad}: not a torch checkpoint .it starts with b'not '") as e:
        ck.load_checkpoint(bad)
    assert "--trust-checkpoint" not in str(e.value)
    bad.write_bytes(b"PK\x03\x04 cut short")  # a zip archive that is damaged
    with pytest.raises(ck.CheckpointError, match=f"{bad}: not a readable torch checkpoint"):
        ck.load_checkpoint(bad)
    with pytest.raises(FileNotFoundError):
        ck.load_checkpoint(tmp_path / "missing.pt")


@pytest.mark.skipif(not SHIPPED, reason="no shipped models")
@pytest.mark.parametrize("folder", SHIPPED, ids=[os.path.basename(p) for p in SHIPPED])
def test_every_shipped_model_loads_safely(folder):
    path = ck.fairseq_checkpoint(folder)
    before = set(torch.serialization.get_safe_globals())
    state = ck.load_checkpoint(path)
    # torch keeps the allow-list as a set (its list order follows object ids), so compare as sets
    assert set(torch.serialization.get_safe_globals()) == before  # the allow-list was only for this load
    assert isinstance(state["cfg"]["model"], argparse.Namespace) and state["model"]
    assert same_state(state["model"], ck.load_checkpoint(path, trust=True)["model"])


@needs_enfr
def test_fairseq_checkpoint_is_written_once_into_the_cache_and_verified(tmp_path, monkeypatch):
    monkeypatch.setenv("NORM_ALIGN_CACHE", str(tmp_path / "cache"))
    pt = ck.fairseq_checkpoint(ENFR)
    assert pt.startswith(str(tmp_path / "cache" / "fairseq")) and pt.endswith("model.pt")
    assert same_state(ck.load_checkpoint(pt)["model"], ck.load_safe(ENFR)["model"])
    # the tied embeddings are written once (three copies made it 35.5 MB for the De-En model, not 19.2)
    model = ck.load_checkpoint(pt)["model"]
    assert len({model[k].data_ptr() for k in TIED}) == 1
    assert os.path.getsize(pt) < os.path.getsize(os.path.join(ENFR, "model.safetensors")) + 2**20
    stamp = os.stat(pt).st_mtime_ns
    assert ck.fairseq_checkpoint(ENFR) == pt and os.stat(pt).st_mtime_ns == stamp  # found, not rewritten
    with open(pt, "r+b") as f:  # a damaged cache file fails its sha256 and is written again
        f.seek(1000)
        f.write(b"\0" * 64)
    assert ck.fairseq_checkpoint(ENFR) == pt
    assert same_state(ck.load_checkpoint(pt)["model"], ck.load_safe(ENFR)["model"])
    assert ck.fairseq_checkpoint(pt) == pt  # a .pt is taken as it is
    assert not [n for n in os.listdir(os.path.dirname(pt)) if n not in ("model.pt", "model.pt.sha256")]


def test_omegaconf_config_checkpoint_loads_safely(tmp_path):
    # older fairseq pickled cfg as a DictConfig: its containers and nodes are on the allow-list
    from omegaconf import DictConfig, OmegaConf

    cfg = OmegaConf.create({"model": {"arch": "transformer", "lr": [0.001], "x": None}, "task": {"data": "."}})
    path = str(tmp_path / "dictconfig.pt")
    torch.save({"cfg": cfg, "model": {"w": torch.ones(2)}}, path)
    state = ck.load_checkpoint(path)
    assert isinstance(state["cfg"], DictConfig) and state["cfg"].model.lr == [0.001]


def test_importing_the_plugin_sets_no_environment_variable():
    code = "import os, fairseq_plugins; print(os.environ.get('TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'))"
    env = {k: v for k, v in os.environ.items() if k != "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"}
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": ROOT},
        cwd=ROOT,
        check=True,
    )
    assert r.stdout.strip() == "None"


class Color(enum.Enum):
    RED = 1


@pytest.mark.parametrize(
    "value,expected",
    [
        ({"a": (1, 2.5), "b": None}, {"a": [1, 2.5], "b": None}),
        (argparse.Namespace(lr=[0.1], arch="t"), {"__namespace__": {"lr": [0.1], "arch": "t"}}),
        ({"m": argparse.Namespace(x=Color.RED)}, {"m": {"__namespace__": {"x": "RED"}}}),
        ({"best": np.float32(0.5), "n": np.int64(3)}, {"best": 0.5, "n": 3}),
    ],
)
def test_config_json_form(value, expected):
    assert ck.to_json_config(value) == expected


def test_config_json_round_trip_restores_namespaces():
    cfg = {"model": argparse.Namespace(lr=[0.001], share=True, name=None), "task": {"data": "."}}
    assert ck.from_json_config(ck.to_json_config(cfg)) == cfg


def test_config_without_json_form_names_where():
    with pytest.raises(ck.CheckpointError, match=r"cfg\.model\.w: a Tensor has no JSON form"):
        ck.to_json_config({"model": {"w": torch.ones(1)}})


@needs_enfr
def test_safetensors_round_trip_is_identical(tmp_path):
    pt = enfr_pt()
    weights = ck.save_safe(pt, tmp_path)
    assert weights == os.path.join(tmp_path, "model.safetensors")
    assert os.path.isfile(tmp_path / "model_config.json")
    a, b = ck.load_checkpoint(pt), ck.load_safe(tmp_path)
    assert same_state(a["model"], b["model"])
    assert {b["model"][k].dtype for k in b["model"]} == {torch.float16}  # fp16 kept as stored
    assert vars(b["cfg"]["model"]) == vars(a["cfg"]["model"])
    assert {k: v for k, v in b["cfg"].items() if k != "model"} == {k: v for k, v in a["cfg"].items() if k != "model"}
    assert b["optimizer_history"][-1]["num_updates"] == a["optimizer_history"][-1]["num_updates"]
    # tied embeddings are stored once: the file is every tensor's bytes less two of the three copies
    every = sum(t.numel() * t.element_size() for t in a["model"].values())
    tied = a["model"][TIED[0]].numel() * a["model"][TIED[0]].element_size()
    assert os.path.getsize(weights) < every - 2 * tied + 2**20
    assert ck.load_safe(weights)["model"].keys() == a["model"].keys()  # the file path works as well as the folder
    # safetensors writes 0o600; the model must be readable as any file the user writes
    mode = new_file_mode()
    assert os.stat(weights).st_mode & 0o777 == mode and os.stat(tmp_path / "model_config.json").st_mode & 0o777 == mode


@needs_enfr
def test_a_model_folder_resolves_to_its_weights(tmp_path):
    assert same_state(ck.read_state(ENFR)["model"], ck.load_checkpoint(enfr_pt())["model"])
    shutil.copy(enfr_pt(), tmp_path)
    ck.save_safe(enfr_pt(), tmp_path)
    assert ck.resolve_model_path(tmp_path) == os.path.join(tmp_path, "model.safetensors")  # no pickle preferred
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="neither model.safetensors nor model.pt"):
        ck.resolve_model_path(tmp_path / "empty")


@needs_enfr
def test_safetensors_model_gives_identical_outputs(tmp_path):
    from fairseq import checkpoint_utils

    ck.save_safe(enfr_pt(), tmp_path)
    pt_model, _, task = ck.load_model_and_task(enfr_pt(), data_dir=ENFR)
    st_model, cfg, _ = ck.load_model_and_task(tmp_path, data_dir=ENFR)
    # fairseq's own entry point, with a .safetensors path, through the installed loader
    (fs_model,), _, _ = checkpoint_utils.load_model_ensemble_and_task(
        [str(tmp_path / "model.safetensors")], arg_overrides={"data": ENFR}
    )
    d = task.source_dictionary
    src = torch.tensor([[d.index(p) for p in ("▁the", "▁house", "▁.")] + [d.eos()]])
    prev = torch.tensor([[d.eos(), 10, 11, 12]])
    with torch.no_grad():
        outs = [m.eval()(src, torch.tensor([src.shape[1]]), prev)[0] for m in (pt_model, st_model, fs_model)]
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[0], outs[2])
    assert cfg.model.arch == "transformer"


def test_safe_format_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        ck.load_safe(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 16)
    (tmp_path / "model_config.json").write_text('{"format": "something else"}')
    with pytest.raises(ck.CheckpointError, match="expected 'norm-align/fairseq-safetensors'"):
        ck.load_safe(tmp_path)
    with pytest.raises(ck.CheckpointError, match="neither 'cfg' nor 'args'"):
        ck.save_safe({"model": {}}, tmp_path / "out")


def _export_workdir(tmp_path):
    """export_model.py's WORKDIR for the En-Fr model: its dictionaries under bin/, spm.model beside."""
    work = tmp_path / "work"
    (work / "bin").mkdir(parents=True)
    for lang in ("en", "fr"):
        shutil.copy(os.path.join(ENFR, f"dict.{lang}.txt"), work / "bin")
    shutil.copy(os.path.join(ENFR, "spm.model"), work)
    return work


@needs_enfr
def test_export_writes_a_safely_loadable_model(tmp_path):
    import export_model

    work = _export_workdir(tmp_path)
    out = tmp_path / "out"
    assert export_model.main([enfr_pt(), str(work), str(out), "en", "fr"]) == 0
    state = ck.load_checkpoint(out / "model.pt")
    assert same_state(state["model"], ck.load_safe(out)["model"])
    assert sorted(os.listdir(out)) == [
        "dict.en.txt",
        "dict.fr.txt",
        "model.pt",
        "model.safetensors",
        "model_config.json",
        "spm.model",
    ]


@needs_enfr
def test_export_records_what_the_training_text_held_of_the_gold(tmp_path):
    # prepare.json of a test-halves run (data/scripts/prepare.py --test-halves): kept as training_text, and the
    # model still loads (the loader reads only its own keys)
    import json

    import export_model

    work = _export_workdir(tmp_path)
    halves = {"seen_once": 219, "never_seen": 223}
    prep = {"train_pairs": 10, "test_pairs": 447, "test_repeat": None, "test_halves": halves,
            "test_file": "/somewhere/gold/enfr_hansards/enfr.src-tgt"}  # fmt: skip
    (work / "prepare.json").write_text(json.dumps(prep))
    out = tmp_path / "out"
    assert export_model.main([enfr_pt(), str(work), str(out), "en", "fr"]) == 0
    got = json.loads((out / "model_config.json").read_text())["training_text"]
    assert got == {"train_pairs": 10, "test_file": "enfr.src-tgt", "test_pairs": 447, "test_repeat": None,
                   "test_halves": halves}  # fmt: skip
    assert "model" in ck.load_safe(out)


@needs_enfr
@pytest.mark.parametrize("copies", [False, True])
def test_export_writes_tied_weights_once(tmp_path, copies):
    import export_model

    # a CPU training checkpoint holds the shared embeddings as one fp32 tensor under three keys; a GPU
    # run's as three equal fp16 tensors (fairseq moves each key to the CPU on its own), which the export
    # once wrote three times (35.5 MB instead of 19.2 for the De-En model)
    state = ck.load_checkpoint(enfr_pt())
    one = state["model"][TIED[0]].half() if copies else state["model"][TIED[0]].float()
    for k in TIED:
        state["model"][k] = one.clone() if copies else one
    assert len({state["model"][k].data_ptr() for k in TIED}) == (3 if copies else 1)
    torch.save(state, tmp_path / "checkpoint_last.pt")
    work = _export_workdir(tmp_path)
    out = tmp_path / "out"
    assert export_model.main([str(tmp_path / "checkpoint_last.pt"), str(work), str(out), "en", "fr"]) == 0
    model = ck.load_checkpoint(out / "model.pt")["model"]
    assert len({model[k].data_ptr() for k in TIED}) == 1 and model[TIED[0]].dtype == torch.float16
    assert torch.equal(model[TIED[2]], one.half())
    # every other tensor is the one it was, value for value
    assert all(torch.equal(model[k], v.half()) for k, v in state["model"].items() if v.is_floating_point())
    # written once: the .pt is no bigger than the safetensors file (which dedupes) by more than its pickle
    assert os.path.getsize(out / "model.pt") < os.path.getsize(out / "model.safetensors") + one.numel()


@needs_enfr
def test_export_continues_counts_the_previous_updates(tmp_path, capsys):
    import export_model

    # a GPU continuation (fp16: FP16Optimizer, one flat parameter, its own update count from 0) of a
    # shipped CPU model (FairseqAdam, one parameter group entry per tensor)
    prev = ck.load_checkpoint(enfr_pt())
    before = prev["optimizer_history"][-1]
    run = ck.load_checkpoint(enfr_pt())
    run["optimizer_history"] = [dict(before, optimizer_name="FP16Optimizer", num_updates=7)]
    run["last_optimizer_state"] = {
        "state": {},
        "loss_scale": 64.0,
        "param_groups": [dict(prev["last_optimizer_state"]["param_groups"][0], params=[0])],
    }
    torch.save(run, tmp_path / "checkpoint_last.pt")
    work = _export_workdir(tmp_path)
    out = tmp_path / "out"
    argv = [str(tmp_path / "checkpoint_last.pt"), str(work), str(out), "en", "fr"]
    assert export_model.main(argv + ["--continues", enfr_pt()]) == 0
    assert f"{before['num_updates']} updates + 7 here = {before['num_updates'] + 7}" in capsys.readouterr().out
    state = ck.load_checkpoint(out / "model.pt")
    # fairseq resumes from the last record: the CPU optimizer's, at the sum; the GPU run's stays before it
    assert [h["num_updates"] for h in state["optimizer_history"]] == [7, before["num_updates"] + 7]
    assert [h["optimizer_name"] for h in state["optimizer_history"]] == ["FP16Optimizer", "FairseqAdam"]
    assert state["last_optimizer_state"] == {"state": {}, "param_groups": prev["last_optimizer_state"]["param_groups"]}
    assert export_model.main(argv + ["--continues"]) == 2
    assert export_model.main(argv + ["--continues", str(tmp_path / "missing.pt")]) == 1
    # a run resumed with its optimizer (already counting the earlier updates) is refused: it would count twice
    run["optimizer_history"] = [dict(before, num_updates=before["num_updates"] + 7)]
    torch.save(run, tmp_path / "resumed.pt")
    again = [str(tmp_path / "resumed.pt"), str(work), str(tmp_path / "out2"), "en", "fr", "--continues", enfr_pt()]
    assert export_model.main(again) == 1
    assert "resumed" in capsys.readouterr().err and not os.path.exists(tmp_path / "out2")
    del prev["last_optimizer_state"]  # a model exported without its optimizer record cannot be continued from
    torch.save(prev, tmp_path / "bare.pt")
    assert export_model.main(argv + ["--continues", str(tmp_path / "bare.pt")]) == 1
    assert "needs an optimizer record" in capsys.readouterr().err


@needs_enfr
def test_converter_cli(tmp_path, capsys):
    import to_safetensors

    out = tmp_path / "out"
    assert to_safetensors.main([ENFR, str(out)]) == 0
    assert {"model.safetensors", "model_config.json", "dict.en.txt", "dict.fr.txt", "spm.model"} <= set(os.listdir(out))
    assert same_state(ck.load_safe(out)["model"], ck.load_checkpoint(enfr_pt())["model"])
    assert to_safetensors.main([str(tmp_path / "missing"), str(out)]) == 1
    assert "no such checkpoint" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        to_safetensors.main([])
    assert e.value.code == 2


@needs_enfr
def test_converter_refuses_then_converts_a_trusted_file_once(tmp_path, capsys):
    import to_safetensors

    path, marker = crafted(tmp_path, OpensFile, with_model=True)
    assert to_safetensors.main([path, str(tmp_path / "out")]) == 1
    assert "--trust-checkpoint" in capsys.readouterr().err and not os.path.exists(marker)
    assert to_safetensors.main(["--trust-checkpoint", path, str(tmp_path / "out")]) == 0
    os.remove(marker)
    ck.load_model_and_task(tmp_path / "out", data_dir=ENFR)  # from now on, no pickle at all
    assert not os.path.exists(marker)


@needs_enfr
def test_fairseq_generate_loads_safely(tmp_path):
    """The command-line path: fairseq-generate --user-dir fairseq_plugins, no environment variable."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(ENFR, "spm.model"))
    raw = tmp_path / "raw"
    raw.mkdir()
    for lang, lines in (("en", ["the house is small .", "thank you ."]), ("fr", ["la maison est petite .", "merci ."])):
        (raw / f"test.{lang}").write_text("".join(" ".join(sp.encode(s, out_type=str)) + "\n" for s in lines))
    env = {k: v for k, v in os.environ.items() if k != "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"}
    env.update(OMP_NUM_THREADS="1", PYTHONPATH=ROOT)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fairseq_cli.preprocess",
            "--source-lang",
            "en",
            "--target-lang",
            "fr",
            "--testpref",
            str(raw / "test"),
            "--destdir",
            str(tmp_path / "bin"),
            "--workers",
            "1",
            "--srcdict",
            os.path.join(ENFR, "dict.en.txt"),
            "--tgtdict",
            os.path.join(ENFR, "dict.fr.txt"),
        ],
        check=True,
        capture_output=True,
        env=env,
    )
    ck.save_safe(enfr_pt(), tmp_path / "safe")
    crafted_path, marker = crafted(tmp_path, OpensFile, with_model=True)

    def generate(path: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "fairseq_cli.generate",
                str(tmp_path / "bin"),
                "--path",
                path,
                "--user-dir",
                os.path.join(ROOT, "fairseq_plugins"),
                "--source-lang",
                "en",
                "--target-lang",
                "fr",
                "--gen-subset",
                "test",
                "--score-reference",
                "--print-alignment",
                "--batch-size",
                "8",
                "--required-batch-size-multiple",
                "1",
            ],
            capture_output=True,
            text=True,
            env=env,
        )

    runs = {p: generate(p) for p in (enfr_pt(), str(tmp_path / "safe"), crafted_path)}
    pt, safe, bad = runs.values()
    assert pt.returncode == 0, pt.stderr[-2000:]
    assert safe.returncode == 0, safe.stderr[-2000:]
    lines = [line for line in pt.stdout.splitlines() if line[:2] in ("H-", "A-")]
    assert len(lines) == 4 and lines == [line for line in safe.stdout.splitlines() if line[:2] in ("H-", "A-")]
    # one line naming the refusal, exit 1, no traceback (the plugin's error hook)
    assert bad.returncode == 1 and "refused: unpickling it would load" in bad.stderr and not os.path.exists(marker)
    assert "Traceback" not in bad.stderr


def test_save_safe_folder_loads_on_its_own_with_its_preprocessing(tmp_path):
    # a folder written by save_safe from a .pt (one a user trained, dictionaries and spm.model beside it)
    # is a whole model: align-extract and NormAligner take it, and its recorded preprocessing is kept
    pytest.importorskip("fairseq")
    from align.cli.extract import main
    from fairseq_plugins.checkpoint import read_preprocessing, save_safe

    fold = tmp_path / "trained"
    fold.mkdir()
    for f in ("dict.en.txt", "dict.fr.txt", "spm.model", "model_config.json"):
        shutil.copy(os.path.join(ENFR, f), fold / f)
    shutil.copy(enfr_pt(), fold / "model.pt")
    save_safe(str(fold / "model.pt"), str(tmp_path / "safe"))
    assert {"dict.en.txt", "dict.fr.txt", "spm.model", "model.safetensors", "model_config.json"} <= set(
        os.listdir(tmp_path / "safe")
    )
    assert read_preprocessing(str(tmp_path / "safe"))["lowercase"] is True
    pairs = tmp_path / "p.txt"
    pairs.write_text("The House . ||| La Maison .\n", encoding="utf-8")
    assert main(["--model", str(tmp_path / "safe"), "--input", str(pairs), "--layers", "0"]) == 0


def test_training_vocab_looks_in_the_folder_then_its_bin(tmp_path):
    # make_models.sh's layout: spm.model in the run's folder, the dictionaries in its bin/
    (tmp_path / "bin").mkdir()
    (tmp_path / "spm.model").write_text("")
    (tmp_path / "bin" / "dict.en.txt").write_text("")
    (tmp_path / "dict.en.txt").write_text("")  # the folder's own file wins over bin/'s
    (tmp_path / "bin" / "dict.fr.txt").write_text("")
    got = ck.training_vocab(tmp_path, ("spm.model", "dict.en.txt", "dict.fr.txt"))
    assert got == {
        "spm.model": str(tmp_path / "spm.model"),
        "dict.en.txt": str(tmp_path / "dict.en.txt"),
        "dict.fr.txt": str(tmp_path / "bin" / "dict.fr.txt"),
    }
    with pytest.raises(ck.CheckpointError, match=r"no dict\.de\.txt in it or in its bin/"):
        ck.training_vocab(tmp_path, ("dict.de.txt",))


def test_each_shipped_pair_was_trained_alike():
    # the demo and the benchmarks table a forward and a reverse model together: both directions of a shipped pair
    # saw the gold alike (a pair swapped to the test-halves models one model at a time would be caught here), and a
    # pair of the test-halves protocol shares its pieces (make_models.sh: the second direction takes the first's)
    models = os.path.join(ROOT, "data", "models")
    for fwd, rev in (("enfr", "fren"), ("deen", "ende")):
        a, b = os.path.join(models, fwd), os.path.join(models, rev)
        if protocol_of([a, b]) == "halves":
            with open(os.path.join(a, "spm.model"), "rb") as f, open(os.path.join(b, "spm.model"), "rb") as g:
                assert f.read() == g.read(), (fwd, rev)
