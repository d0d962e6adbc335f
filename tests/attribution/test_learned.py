"""The alignment layer's math (align.attribution.learned): initialised from a model's own query and key projections
it scores exactly as the ``attn`` method at its layer; rows are distributions; padding never changes a score and
never makes a gradient nan."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from align.attribution.learned import AlignmentHead, HeadShape, query_states  # noqa: E402
from align.attribution.norms import CrossAttentionLayer, LayerInputs  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _head(seed: int = 0, dim: int = 8, heads: int = 2) -> AlignmentHead:
    torch.manual_seed(seed)
    return AlignmentHead(HeadShape(layer=0, dim=dim, heads=heads))


def test_rows_are_distributions_and_padding_gets_nothing():
    head = _head()
    q, k = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    p = head(q, k, mask)
    assert p.shape == (2, 3, 5)
    np.testing.assert_allclose(p.sum(-1).detach().numpy(), 1.0, atol=1e-6)
    assert float(p[1, :, 3:].abs().max().detach()) == 0.0


def test_a_padded_batch_scores_as_each_sentence_alone():
    head = _head(1)
    q, k = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    mask = torch.tensor([[True] * 5, [True, True, False, False, False]])
    both = head(q, k, mask)
    alone = head(q[1:], k[1:, :2], None)
    np.testing.assert_allclose(both[1, :, :2].detach().numpy(), alone[0].detach().numpy(), atol=1e-6)


def test_the_gradient_through_padding_is_finite():
    head = _head(2)
    q, k = torch.randn(2, 3, 8), torch.randn(2, 4, 8)
    mask = torch.tensor([[True] * 4, [True, False, False, False]])
    target = torch.zeros(2, 3, 4)
    target[..., 0] = 1.0
    loss = -(head.log_probs(q, k, mask) * target).sum()
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in head.parameters())


def test_the_mean_over_heads_by_hand():
    # 1 head of width 2, identity projections: logits q.k / sqrt(2); q = (1, 0), keys (1, 0) and (0, 0):
    # softmax(1/sqrt2, 0) = (0.6700, 0.3300)
    head = AlignmentHead(HeadShape(0, 2, 1))
    with torch.no_grad():
        for lin in (head.q_proj, head.k_proj):
            lin.weight.copy_(torch.eye(2))
            lin.bias.zero_()
    p = head(torch.tensor([[[1.0, 0.0]]]), torch.tensor([[[1.0, 0.0], [0.0, 0.0]]]))
    e = np.exp(1 / np.sqrt(2))
    np.testing.assert_allclose(p[0, 0].detach().numpy(), [e / (e + 1), 1 / (e + 1)], atol=1e-6)


def test_pre_ln_queries_are_the_residual_stream_layer_normed():
    D = 6
    g = torch.Generator().manual_seed(3)
    y = torch.randn(1, 2, D, generator=g)
    w, b = torch.rand(D, generator=g) + 0.5, torch.randn(D, generator=g)
    layer = CrossAttentionLayer(torch.eye(D), None, torch.eye(D), None, 2, w, b, 1e-5, normalize_before=True)
    inputs = LayerInputs(torch.zeros(1, 2, 2, 3), torch.zeros(1, 3, D), y, torch.zeros(1, 2, D))
    want = torch.nn.functional.layer_norm(y, (D,), w, b, 1e-5)
    np.testing.assert_allclose(query_states(inputs, layer).numpy(), want.numpy(), atol=1e-6)
    post = CrossAttentionLayer(torch.eye(D), None, torch.eye(D), None, 2, w, b, 1e-5, normalize_before=False)
    assert query_states(inputs, post) is y


def test_initialised_from_the_model_it_is_the_attention_at_its_layer(tmp_path):
    """A tiny random Marian model: the head copied from decoder layer 1's cross-attention scores as ``attn`` there."""
    pytest.importorskip("transformers")
    pytest.importorskip("sentencepiece")
    from hf_tiny import tiny_marian

    from hf_plugins.hub import HFAligner

    model, tok = tiny_marian(str(tmp_path), d_model=16, heads=2, ffn=32, seed=1)
    al = HFAligner(model, tok)
    sites = al.adapter.decoder_layers(al.model)
    head = AlignmentHead(HeadShape(1, 16, 2)).init_from(sites[1].cross.attn).eval().requires_grad_(False)
    head.weights_sha256 = "test"
    al.alignment_layer = head
    spec_attn, spec_learned = al.spec(["attn"], [1]), al.spec(["learned"], [1])
    pairs = [("the house is small .", "la maison est petite ."), ("the house .", "la maison .")]
    items = [(f"s{k}", s.split(), t.split()) for k, (s, t) in enumerate(pairs)]
    want = [sc[("attn", 1)] for *_, sc in al.score_items(items, spec_attn, batch_size=2)]
    got = [sc[("learned", 1)] for *_, sc in al.score_items(items, spec_learned, batch_size=2)]
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, atol=1e-5)
