"""align.gold.protocol: what a model's record says its training text held of the gold, and models that must agree."""

import argparse
import json

import pytest

from align.gold import protocol as pr


def test_read_training_text_from_a_folder_a_checkpoint_or_nothing(tmp_path):
    halves = {"seen_once": 219, "never_seen": 223}
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model_config.json").write_text(json.dumps({"training_text": {"test_halves": halves,
                                                                                      "test_repeat": None}}))  # fmt: skip
    assert pr.read_training_text(tmp_path / "model") == {"test_halves": halves}
    # a file of the model (its weights) reads the config beside it, as the folder does
    assert pr.read_training_text(tmp_path / "model" / "model.safetensors") == {"test_halves": halves}
    assert pr.read_training_text(tmp_path / "model" / "model.pt") == {"test_halves": halves}
    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    (tmp_path / "run" / "prepare.json").write_text(json.dumps({"test_repeat": 20, "test_halves": None}))
    assert pr.read_training_text(tmp_path / "run" / "checkpoints" / "checkpoint_best.pt") == {"test_repeat": 20}
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "model_config.json").write_text(json.dumps({"preprocessing": {"lowercase": True}}))
    assert pr.read_training_text(tmp_path / "old") == {}  # a model shipped before the record (up to 0.2.0)


def test_protocol_of_models_that_must_agree(tmp_path):
    def model(name, record):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model_config.json").write_text(json.dumps({"training_text": record} if record else {}))
        return tmp_path / name

    x20, old = model("x20", {"test_repeat": 20}), model("old", None)  # old: shipped before the record
    half, half2 = model("half", {"test_halves": {"seen_once": 1}}), model("half2", {"test_halves": {"seen_once": 1}})
    assert pr.protocol_of([x20, old]) == "x20" and pr.protocol_of([half, half2]) == "halves"
    assert pr.protocol_of([half, half2], "halves") == "halves"
    with pytest.raises(pr.ProtocolError, match=r"x20: --protocol halves needs models of the test-halves protocol"):
        pr.protocol_of([x20, old], "halves")
    with pytest.raises(pr.ProtocolError, match=r"--protocol x20, but the models are of the halves protocol"):
        pr.protocol_of([half], "x20")
    with pytest.raises(pr.ProtocolError, match=r"different test-sentence protocols .*x20: x20; .*half: halves"):
        pr.protocol_of([x20, half])  # a forward and a reverse model trained differently


def test_describe_halves_counts_what_the_training_text_held():
    record = {"seen_once": 219, "never_seen": 223, "odd_not_added_equal_to_an_even_one": 5}
    assert pr.describe_halves(record) == (
        "219 of the 224 odd-numbered test sentences once in the training text (5 equal to an even-numbered one left "
        "out: never wins), the 223 even-numbered never"
    )
    assert pr.describe_halves({"seen_once": 2, "never_seen": 1}) == (
        "2 of the 2 odd-numbered test sentences once in the training text, the 1 even-numbered never"
    )


def test_an_unreadable_record_names_its_file(tmp_path):
    (tmp_path / "model_config.json").write_text("{not json")
    with pytest.raises(pr.ProtocolError, match=r"model_config\.json: not readable JSON"):
        pr.read_training_text(tmp_path)


def test_one_protocol_argument_for_every_command():
    ap = argparse.ArgumentParser()
    pr.add_protocol_argument(ap, "Labels the report.")
    assert ap.parse_args([]).protocol == "auto"
    assert ap.parse_args(["--protocol", "halves"]).protocol == "halves"
    with pytest.raises(SystemExit):  # argparse's usage error (exit 2) names the valid choices
        ap.parse_args(["--protocol", "x1"])
    action = next(a for a in ap._actions if a.dest == "protocol")
    assert action.choices == ("auto", *pr.PROTOCOLS) and action.help.endswith("Labels the report.")
