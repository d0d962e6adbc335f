"""align-train end to end with the shipped En->Fr and Fr->En models on a few Hansard-style pairs: the teacher from
both models, a layer stored beside each model, align-extract reading them (both directions, the signature naming
them); bad input in one line, nothing written; a finished layer, a held folder and a short teacher file refused."""

import json
import os

import pytest

pytest.importorskip("fairseq")
pytest.importorskip("safetensors")
pytestmark = [pytest.mark.fairseq, pytest.mark.usefixtures("one_torch_thread")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENFR, FREN = (os.path.join(ROOT, "data", "models", m) for m in ("enfr", "fren"))
PAIRS = [
    ("mr. speaker , i thank the minister .", "monsieur le président , je remercie le ministre ."),
    ("the house is small .", "la chambre est petite ."),
    ("we agree .", "nous sommes d' accord ."),
    ("yes", "oui"),
    ("the minister said no .", "le ministre a dit non ."),
    ("i thank the house .", "je remercie la chambre ."),
] * 2


def train(*args: str) -> int:
    from align.cli.train import main

    return main(list(args))


def extract(*args: str) -> int:
    from align.cli.extract import main

    return main(list(args))


LOADED: list[str] = []
"""The model paths the module's training loaded (the `trained` fixture counts them)."""


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from align.extraction import loading, plan

    d = tmp_path_factory.mktemp("train")
    (d / "p.txt").write_text("".join(f"{s} ||| {t}\n" for s, t in PAIRS), encoding="utf-8")

    def counting(path, *a, **k):
        LOADED.append(os.path.basename(path))
        return real(path, *a, **k)

    real = loading.load_aligner
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loading, "load_aligner", counting)
        mp.setattr(plan, "load_aligner", counting)
        code = train("--model", ENFR, "--reverse-model", FREN, "--input", str(d / "p.txt"), "--out", str(d / "enfr"),
                     "--reverse-out", str(d / "fren"), "--batch-size", "4", "--epochs", "2", "--checkpoint-every",
                     "2", "--progress", "off")  # fmt: skip
    assert code == 0
    return d


def test_each_model_is_loaded_once_for_the_checks_the_teacher_and_the_training(trained):
    assert LOADED == ["enfr", "fren"]


def test_a_layer_is_stored_beside_each_model_naming_model_corpus_and_teacher(trained):
    for name, langs in (("enfr", ["en", "fr"]), ("fren", ["fr", "en"])):
        assert sorted(x for x in os.listdir(trained / name) if x != "train") == ["layer.json", "layer.safetensors"]
        cfg = json.loads((trained / name / "layer.json").read_text())
        assert cfg["model"]["languages"] == langs and cfg["shape"] == {
            "layer": 1,
            "dim": 256,
            "heads": 4,
            "shift": "awi",
        }
        assert cfg["corpus"]["pairs"] == len(PAIRS) and cfg["teacher"]["blend"] == "alti-awi-layer0+attn-awo-layer2"
        assert cfg["training"]["steps"] == 6  # 3 batches of 4 pairs, 2 epochs
    assert (trained / "enfr" / "train" / "step-6.safetensors").exists()
    assert (trained / "enfr" / "train" / "teacher" / "alti-awi-layer0+attn-awo-layer2.gmean-threshold.align").exists()


def test_align_extract_reads_both_layers_and_names_them_in_its_signature(trained):
    out = trained / "x"
    code = extract("--model", ENFR, "--reverse-model", FREN, "--input", str(trained / "p.txt"), "--out", str(out),
                   "--methods", "learned", "--layers", "1", "--alignment-layer", str(trained / "enfr"),
                   "--reverse-alignment-layer", str(trained / "fren"), "--combine", "grow-diag-final-and",
                   "--progress", "off")  # fmt: skip
    assert code == 0
    for f in (
        "learned-awi-layer1.align",
        "learned-awi-layer1.reverse.align",
        "learned-awi-layer1.grow-diag-final-and.align",
    ):
        assert len((out / f).read_text().splitlines()) == len(PAIRS)
    sig = json.loads((out / "manifest.json").read_text())["signature"]
    digests = [json.loads((trained / n / "layer.json").read_text())["weights_sha256"] for n in ("enfr", "fren")]
    assert sig["settings"]["alignment_layer"] == digests


def test_a_layer_of_another_model_is_refused_before_anything_is_written(trained, tmp_path, capsys):
    code = extract("--model", FREN, "--input", str(trained / "p.txt"), "--out", str(tmp_path / "o"), "--methods",
                   "learned", "--layers", "1", "--alignment-layer", str(trained / "enfr"))  # fmt: skip
    assert code == 1 and not (tmp_path / "o").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"align-extract: alignment layer {trained / 'enfr'}: trained for en->fr, but the model translates fr->en"
    ]


def test_a_finished_layer_is_kept_unless_overwrite(trained, capsys):
    code = train("--model", ENFR, "--reverse-model", FREN, "--input", str(trained / "p.txt"), "--out",
                 str(trained / "enfr"), "--reverse-out", str(trained / "fren"), "--progress", "off")  # fmt: skip
    assert code == 1 and "already there; --overwrite replaces it" in capsys.readouterr().err


def test_a_bad_corpus_line_is_named_and_nothing_is_written(tmp_path, capsys):
    (tmp_path / "p.txt").write_text("a b ||| c d\nno separator here\n", encoding="utf-8")
    code = train("--model", ENFR, "--reverse-model", FREN, "--input", str(tmp_path / "p.txt"), "--out",
                 str(tmp_path / "a"), "--reverse-out", str(tmp_path / "b"))  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and f"{tmp_path / 'p.txt'}:2: found 0 '|||' separators" in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()  # nothing written, no folder made


@pytest.mark.parametrize("side", ["source", "target"])
def test_a_line_the_tokenizer_cannot_read_is_named_before_the_teacher_runs(tmp_path, capsys, monkeypatch, side):
    # a word SentencePiece leaves no piece for (U+200B) on line 3, on either side: named with its file, line and
    # side (the forward model encodes both sides first), before any teacher pass
    import align.extraction.layer_training as T

    monkeypatch.setattr(T, "_run_teacher", lambda *a, **k: pytest.fail("the teacher ran"))
    bad = ("the \u200b house", "la maison") if side == "source" else ("the house", "la \u200b maison")
    lines = [f"{s} ||| {t}\n" for s, t in PAIRS[:2] + [bad]]
    (tmp_path / "p.txt").write_text("".join(lines), encoding="utf-8")
    code = train("--model", ENFR, "--reverse-model", FREN, "--input", str(tmp_path / "p.txt"), "--out",
                 str(tmp_path / "a"), "--reverse-out", str(tmp_path / "b"), "--progress", "off")  # fmt: skip
    err = capsys.readouterr().err
    where = f"{tmp_path / 'p.txt'}:3: {side}: SentencePiece leaves no piece for word 2 '\\u200b'"
    assert code == 1 and where in err, err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_teacher_file_of_another_length_is_refused(tmp_path, capsys):
    (tmp_path / "p.txt").write_text("a b ||| c d\ne ||| f\n", encoding="utf-8")
    (tmp_path / "t.align").write_text("0-0 1-1\n", encoding="utf-8")
    code = train("--model", ENFR, "--input", str(tmp_path / "p.txt"), "--teacher-links", str(tmp_path / "t.align"),
                 "--out", str(tmp_path / "a"))  # fmt: skip
    assert code == 1 and "1 lines; expected 2, one per pair of the input" in capsys.readouterr().err
    (tmp_path / "t.align").write_text("0-0 1-1\n0-3\n", encoding="utf-8")
    code = train("--model", ENFR, "--input", str(tmp_path / "p.txt"), "--teacher-links", str(tmp_path / "t.align"),
                 "--out", str(tmp_path / "a"))  # fmt: skip
    assert (
        code == 1
        and "t.align:2: link 0-3 (0-based) but the pair has 1 source and 1 target words" in capsys.readouterr().err
    )


def test_two_trainings_into_one_folder(tmp_path, capsys):
    from align.extraction.train_layer import lock_folder

    (tmp_path / "p.txt").write_text("a b ||| c d\n", encoding="utf-8")
    (tmp_path / "t.align").write_text("0-0 1-1\n", encoding="utf-8")
    held = lock_folder(str(tmp_path / "a"))
    try:
        code = train("--model", ENFR, "--input", str(tmp_path / "p.txt"), "--teacher-links", str(tmp_path / "t.align"),
                     "--out", str(tmp_path / "a"))  # fmt: skip
    finally:
        held.close()
    assert code == 1 and "another align-train is writing here" in capsys.readouterr().err


def test_usage_errors_exit_2(tmp_path):
    code = train("--model", ENFR, "--input", str(tmp_path / "p.txt"))
    assert code == 2
    code = train("--model", ENFR, "--input", "x", "--teacher-links", "t", "--epochs", "0")
    assert code == 2


def test_a_calibration_of_the_learned_method_reads_the_layer(trained, tmp_path):
    from align.gold import testsets
    from align.io.formats import write_alignments

    ts = testsets.load("hansards")
    (tmp_path / "p.txt").write_text("".join(line + "\n" for line in ts.text_lines()[:40]), encoding="utf-8")
    write_alignments(ts.gold.select(list(range(40))), str(tmp_path / "g.talp"), "talp")
    from align.cli.calibrate import main as calibrate

    code = calibrate(["--model", ENFR, "--input", str(tmp_path / "p.txt"), "--gold", str(tmp_path / "g.talp"),
                      "--method", "learned", "--layer", "1", "--alignment-layer", str(trained / "enfr"),
                      "-o", str(tmp_path / "cal.json")])  # fmt: skip
    assert code == 0
    cal = json.loads((tmp_path / "cal.json").read_text())
    assert cal["setting"]["method"] == "learned" and cal["setting"]["layer"] == 1
    code = extract("--model", ENFR, "--input", str(tmp_path / "p.txt"), "--out", str(tmp_path / "x"), "--methods",
                   "learned", "--layers", "1", "--alignment-layer", str(trained / "enfr"), "--calibration",
                   str(tmp_path / "cal.json"), "--progress", "off")  # fmt: skip
    assert code == 0 and (tmp_path / "x" / "learned-awi-layer1.probs").exists()


def test_interrupted_in_the_reverse_model_it_resumes_and_overwrite_starts_again(tmp_path, monkeypatch, capsys):
    import align.extraction.train_layer as tl

    (tmp_path / "p.txt").write_text("".join(f"{s} ||| {t}\n" for s, t in PAIRS[:6]), encoding="utf-8")
    flags = ["--model", ENFR, "--reverse-model", FREN, "--input", str(tmp_path / "p.txt"), "--out",
             str(tmp_path / "a"), "--reverse-out", str(tmp_path / "b"), "--batch-size", "3", "--progress", "off",
             "--format", "json"]  # fmt: skip
    real, seen = tl.train_head, []

    def stop_in_the_second(aligner, *a, **k):
        seen.append(aligner.languages())
        if len(seen) == 2:
            raise KeyboardInterrupt  # the machine went away while the reverse model trained
        return real(aligner, *a, **k)

    monkeypatch.setattr(tl, "train_head", stop_in_the_second)
    with pytest.raises(KeyboardInterrupt):
        train(*flags)
    assert not (tmp_path / "a" / "layer.json").exists()  # nothing stored before both are trained
    monkeypatch.setattr(tl, "train_head", real)
    capsys.readouterr()
    assert train(*flags) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["resumed"] for r in out["layers"]] == [True, False] and (tmp_path / "b" / "layer.json").exists()
    # other settings into the same folders: refused, and --overwrite starts them again
    assert train(*flags, "--lr", "0.01") == 1
    capsys.readouterr()
    assert train(*flags, "--lr", "0.01", "--overwrite") == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["resumed"] for r in out["layers"]] == [False, False]


def test_the_models_own_folder_is_refused_as_out(tmp_path, capsys):
    # the layer's files in the model's folder would change the folder's sha256: the layer would refuse its own model
    code = train("--model", ENFR, "--input", "p.txt", "--teacher-links", "t.align", "--out", ENFR)
    assert code == 2 and "is the model's own folder" in capsys.readouterr().err


def test_a_pair_stored_half_says_so(tmp_path, capsys):
    # a run stopped between storing the forward and the reverse layer: the forward has layer.json, the reverse a
    # checkpoint only
    from align.extraction.alignment_layer import CONFIG

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / CONFIG).write_text("{}")
    (tmp_path / "b" / "train").mkdir(parents=True)
    (tmp_path / "b" / "train" / "checkpoint_last.pt").write_bytes(b"")
    code = train("--model", ENFR, "--reverse-model", FREN, "--input", str(tmp_path / "p.txt"), "--out",
                 str(tmp_path / "a"), "--reverse-out", str(tmp_path / "b"))  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and f"a trained alignment layer is there but not yet {tmp_path / 'b'}'s" in err
    assert "--overwrite resumes it and stores both" in err


def test_a_checkpoint_of_another_run_is_refused_before_the_teacher_runs(tmp_path, capsys, monkeypatch):
    # an interrupted run's teacher (another corpus) and checkpoint in --out: refused before the long teacher pass
    # that would replace that run's teacher, not after it
    import align.extraction.run as run

    monkeypatch.setattr(run, "extract", lambda *a, **k: pytest.fail("the teacher ran"))
    (tmp_path / "p.txt").write_text("".join(f"{s} ||| {t}\n" for s, t in PAIRS[:3]), encoding="utf-8")
    train_dir = tmp_path / "a" / "train"
    train_dir.mkdir(parents=True)
    (train_dir / "teacher.json").write_text(json.dumps({"want": {"corpus_sha256": "another corpus"}}))
    (train_dir / "checkpoint_last.pt").write_bytes(b"")
    code = train("--model", ENFR, "--reverse-model", FREN, "--input", str(tmp_path / "p.txt"), "--out",
                 str(tmp_path / "a"), "--reverse-out", str(tmp_path / "b"), "--progress", "off")  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "a checkpoint of another training (its teacher was aligned from another corpus" in err
    assert (train_dir / "teacher.json").read_text() == json.dumps({"want": {"corpus_sha256": "another corpus"}})


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--teacher", "bogus"], "argument --teacher: 'bogus' is not a setting"),
        (["--teacher-links", "t.align", "--teacher", "norm-awi-layer0"], "with --teacher-links it is not"),
        (["--teacher-links", "t.align", "--combine", "intersect"], "with --teacher-links it is not"),
    ],
)
def test_teacher_flags_that_cannot_apply_are_usage_errors(capsys, extra, message):
    # found by argparse, before any file or model is read: exit 2
    assert train("--model", ENFR, "--input", "p.txt", *extra) == 2
    assert message in capsys.readouterr().err


def test_teacher_links_of_another_corpus_are_refused_by_their_manifest(tmp_path, capsys):
    # links that a run wrote for another corpus of as many lines fit every line's range: the manifest beside them
    # (align-extract's) names the input they aligned
    import json

    (tmp_path / "p.txt").write_text("a b ||| c d\ne ||| f\n", encoding="utf-8")
    (tmp_path / "t.align").write_text("0-0 1-1\n0-0\n", encoding="utf-8")
    (tmp_path / "manifest.json").write_text(json.dumps({"signature": {"input": {"sha256": "ab" * 32, "lines": 2}}}))
    code = train("--model", ENFR, "--input", str(tmp_path / "p.txt"), "--teacher-links", str(tmp_path / "t.align"),
                 "--out", str(tmp_path / "a"))  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "aligned another input (sha256 abababababab" in err and "t.align" in err
    assert not (tmp_path / "a").exists()
