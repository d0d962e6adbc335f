"""An alignment layer's files (align.extraction.alignment_layer): stored and read back bit for bit, and refused in one
line when trained for other languages, another tokenizer or another model, or when its files do not agree."""

import json
import os
import shutil

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("fairseq")
pytest.importorskip("safetensors")
pytestmark = [pytest.mark.fairseq, pytest.mark.usefixtures("one_torch_thread")]

from align.attribution.learned import AlignmentHead, HeadShape  # noqa: E402
from align.extraction.alignment_layer import (  # noqa: E402
    CONFIG,
    WEIGHTS,
    AlignmentLayerError,
    attach,
    default_folder,
    load,
    model_fields,
    save,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENFR, FREN = (os.path.join(ROOT, "data", "models", m) for m in ("enfr", "fren"))


@pytest.fixture(scope="module")
def models():
    from fairseq_plugins.hub import NormAligner

    return NormAligner.from_checkpoint(ENFR), NormAligner.from_checkpoint(FREN)


@pytest.fixture
def stored(models, tmp_path):
    enfr, _ = models
    torch.manual_seed(0)
    head = AlignmentHead(HeadShape(1, 256, 4))
    folder = str(tmp_path / "layer")
    save(folder, head, {"model": model_fields(enfr), "corpus": {"pairs": 0}})
    return folder, head


def _edit(folder, change):
    path = os.path.join(folder, CONFIG)
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    change(cfg)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f)


def test_stored_once_and_read_back_bit_for_bit(models, stored):
    enfr, _ = models
    folder, head = stored
    assert sorted(os.listdir(folder)) == [CONFIG, WEIGHTS]
    got = load(folder, enfr)
    for k, v in head.state_dict().items():
        assert torch.equal(got.state_dict()[k], v), k
    assert got.layer == 1 and not any(p.requires_grad for p in got.parameters())
    with open(os.path.join(folder, CONFIG), encoding="utf-8") as f:
        cfg = json.load(f)
    assert cfg["model"]["languages"] == ["en", "fr"] and len(cfg["model"]["identity"]["sha256"]) == 64


def test_the_default_folder_is_beside_the_model(tmp_path):
    assert default_folder(ENFR) == os.path.join(ENFR, "alignment_layer")
    (tmp_path / "a.pt").write_bytes(b"")
    (tmp_path / "b.pt").write_bytes(b"")  # two checkpoints of one folder: two layers
    assert default_folder(str(tmp_path / "a.pt")) == str(tmp_path / "a.alignment_layer")
    with pytest.raises(AlignmentLayerError, match="Helsinki-NLP/opus-mt-en-fr is not a local folder or file"):
        default_folder("Helsinki-NLP/opus-mt-en-fr")


def test_another_direction_is_refused_by_its_languages(models, stored):
    _, fren = models
    with pytest.raises(AlignmentLayerError, match=r"trained for en->fr, but the model translates fr->en"):
        load(stored[0], fren)


def test_another_tokenizer_is_refused(models, stored):
    folder = stored[0]
    _edit(folder, lambda c: c["model"].update(tokenizer_sha256="0" * 64))
    with pytest.raises(AlignmentLayerError, match="another tokenizer"):
        load(folder, models[0])


def test_another_model_is_refused_by_its_sha256(models, stored):
    folder = stored[0]
    _edit(folder, lambda c: c["model"]["identity"].update(sha256="ab" * 32))
    with pytest.raises(AlignmentLayerError, match=r"trained for model abababababab, but this model is [0-9a-f]{12}"):
        load(folder, models[0])


def test_how_the_model_was_asked_for_does_not_matter(models, stored):
    # a Hub model named org/name (requested "main") or org/name@commit is one model: "requested" and "path" say how
    # it was asked for; the layer stored with one is read with the other
    folder = stored[0]
    _edit(folder, lambda c: c["model"]["identity"].update(requested="main", path="/elsewhere"))
    assert load(folder, models[0]) is not None


def test_weights_that_are_not_the_ones_named_are_refused(models, stored, tmp_path):
    folder = stored[0]
    other = str(tmp_path / "other")
    save(other, AlignmentHead(HeadShape(1, 256, 4)), {"model": model_fields(models[0])})
    shutil.copy(os.path.join(other, WEIGHTS), os.path.join(folder, WEIGHTS))
    with pytest.raises(AlignmentLayerError, match="sha256 differs"):
        load(folder, models[0])


def test_a_layer_the_model_lacks_is_refused(models, stored):
    folder = stored[0]
    _edit(folder, lambda c: c["shape"].update(layer=7))
    with pytest.raises(AlignmentLayerError, match="reads decoder layer 7, but the model has 3"):
        load(folder, models[0])


def test_a_folder_without_a_layer_says_how_to_make_one(models, tmp_path):
    with pytest.raises(AlignmentLayerError, match="align-train"):
        attach(models[0], ENFR, str(tmp_path))
    (tmp_path / CONFIG).write_text("{not json", encoding="utf-8")
    with pytest.raises(AlignmentLayerError, match="not readable as JSON"):
        attach(models[0], ENFR, str(tmp_path))
