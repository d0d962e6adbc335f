"""The contributing guide's path for a new attribution method (docs/guides/contributing.md), end to end:
a toy method registered at test time and run by the real Python API on a tiny random Hugging Face model
built here (no download, a few seconds).

The toy scores the diagonal, source token t for decoder step t, whatever the model computed; with one
piece per word and the AWO rows (row i is the step that predicts target token i) its links are i-i."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from hf_tiny import tiny_marian  # noqa: E402

from align.attribution.methods import METHODS, LayerContext, Method, check_methods, register  # noqa: E402
from hf_plugins.hub import HFAligner  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def score_diagonal(ctx: LayerContext) -> dict[str, torch.Tensor]:
    """1 where source token == decoder step: (B, T, S), target first, like every method's scores. A toy: it
    reads positions in the padded batch, which Marian pads on the right; a real method reads the tensors."""
    B, H, T, S = ctx.alpha.shape  # the per-head cross-attention weights, which the method declares it needs
    eye = torch.eye(T, S, dtype=ctx.alpha.dtype, device=ctx.alpha.device)
    return {"toy-diagonal": eye.expand(B, T, S)}


TOY = Method(
    name="toy-diagonal",
    description="1 on the diagonal: source token t for decoder step t",
    needs=frozenset({"alpha"}),
    compute=score_diagonal,
    cite="the contributing guide's example",
)


@pytest.fixture
def toy():
    """The toy in the registry for one test, as ``register`` puts it there; gone afterwards, whatever happens."""
    assert TOY.name not in METHODS
    try:
        yield register(TOY)
    finally:
        METHODS.pop(TOY.name, None)


@pytest.fixture(scope="module")
def aligner(tmp_path_factory):
    """A 2-layer Marian model with random weights and the shipped En-Fr SentencePiece vocabulary."""
    model, tok = tiny_marian(str(tmp_path_factory.mktemp("tok")), d_model=16, heads=2, ffn=32, seed=1)
    return HFAligner(model, tok)


SOURCES = ["the house is small .", "the house is small ."]
TARGETS = ["la maison est petite .", "la maison ."]  # one piece a word in the En-Fr vocabulary


def test_a_registered_method_runs_end_to_end(toy, aligner):
    check_methods([TOY.name])  # the name is valid everywhere the registry is asked
    out = aligner.align(SOURCES, TARGETS, methods=[TOY.name, "attn"], layers=[0, 1], shifts=["awo"])
    assert set(out) == {(m, la, "awo") for m in (TOY.name, "attn") for la in (0, 1)}
    for layer in (0, 1):
        assert out[TOY.name, layer, "awo"] == [[(i, i) for i in range(5)], [(0, 0), (1, 1), (2, 2)]]


def test_the_toy_is_gone_after_its_test(aligner):
    assert TOY.name not in METHODS
    with pytest.raises(ValueError, match=r"unknown method.*toy-diagonal; valid: attn, "):
        aligner.align(SOURCES, TARGETS, methods=[TOY.name], shifts=["awo"])
