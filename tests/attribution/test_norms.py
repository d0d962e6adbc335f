import pytest

torch = pytest.importorskip("torch")

from align.attribution.methods import METHODS, layer_scores  # noqa: E402
from align.attribution.norms import (  # noqa: E402
    CrossAttentionLayer,
    LayerInputs,
    decompose_block,
    ln_out_weight,
    score_attn_res_ln,
    score_norm,
    score_norm_head,
    value_gram,
    value_vectors,
)


def _layer(D=16, H=4, pre=False, seed=0, identity_out=False):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    out_w = torch.eye(D) if identity_out else r(D, D) / D**0.5
    return CrossAttentionLayer(
        r(D, D) / D**0.5, r(D), out_w, r(D), H, 1 + 0.1 * r(D), r(D), 1e-5, pre, None if pre else _ff(D=D)
    )


def _inputs(B=2, H=4, T=5, S=6, D=16, seed=1, pad_src=None):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(B, H, T, S, generator=g)
    if pad_src is not None:
        logits[..., pad_src:] = float("-inf")
    alpha = logits.softmax(-1)
    return alpha, torch.randn(B, S, D, generator=g), torch.randn(B, T, D, generator=g)


def _literal(alpha, x, layer):
    """The papers' definitions, materialized: every alpha^h_ij f^h(x_j) vector, in plain loops."""
    B, H, T, S = alpha.shape
    D = x.shape[-1]
    d = D // H
    per_head = torch.zeros(B, H, T, S)
    summed = torch.zeros(B, T, S)
    for b in range(B):
        for j in range(S):
            v = x[b, j] @ layer.v_weight.T + layer.v_bias
            fs = [v[h * d : (h + 1) * d] @ layer.out_weight[:, h * d : (h + 1) * d].T for h in range(H)]
            for i in range(T):
                vecs = [alpha[b, h, i, j] * fs[h] for h in range(H)]
                for h in range(H):
                    per_head[b, h, i, j] = vecs[h].norm()
                summed[b, i, j] = torch.stack(vecs).sum(0).norm()
    return per_head, summed


def _attn_out(alpha, f, layer):
    return torch.einsum("bhts,bhsd->btd", alpha, f) + layer.out_bias


@pytest.mark.parametrize("H", [1, 4])
def test_fast_equals_literal(H):
    layer = _layer(H=H)
    alpha, x, _ = _inputs(H=H)
    gram = value_gram(x, layer)
    per_head, summed = _literal(alpha, x, layer)
    torch.testing.assert_close(score_norm_head(alpha, gram), per_head, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(score_norm(alpha, gram), summed, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("folded", [False, True])
def test_value_gram_equals_gram_of_vectors(folded):
    layer = _layer()
    _, x, _ = _inputs()
    f = value_vectors(x, layer, ln_out_weight(layer) if folded else None)  # (B, H, S, D)
    # the folded weight gives exactly the LayerNorm's centring and gain applied to f
    if folded:
        raw = value_vectors(x, layer)
        torch.testing.assert_close(f, (raw - raw.mean(-1, keepdim=True)) * layer.ln_weight, rtol=1e-4, atol=1e-5)
    expected = torch.einsum("bhsd,bksd->bshk", f, f)
    torch.testing.assert_close(value_gram(x, layer, folded), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("chunk", [1, 5, 12, 13, 128])
def test_value_grams_in_chunks_equal_one_gram_each(monkeypatch, chunk):
    """One pass for several Gram matrices, in token chunks that do and do not divide B * S = 12,
    gives what a plain gram of the materialized vectors gives for each."""
    import align.attribution.norms as norms_mod

    monkeypatch.setattr(norms_mod, "GRAM_CHUNK", chunk)
    layer = _layer()
    _, x, _ = _inputs()
    got = norms_mod.value_grams(x, layer, (False, True, False))
    for g, folded in zip(got, (False, True, False)):
        f = value_vectors(x, layer, ln_out_weight(layer) if folded else None)
        torch.testing.assert_close(g, torch.einsum("bhsd,bksd->bshk", f, f), rtol=1e-4, atol=1e-5)


def test_ln_scale_equals_layer_norm_scale():
    from align.attribution.norms import ln_scale

    z = torch.randn(3, 4, 16) * 5 + 2
    # LayerNorm(z) without gain = (z - mean) / ln_scale(z)
    ln = torch.nn.functional.layer_norm(z, (16,), eps=1e-5)
    torch.testing.assert_close((z - z.mean(-1, keepdim=True)) / ln_scale(z, 1e-5)[..., None], ln, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pre", [False, True])
def test_block_decomposition_adds_up(pre):
    layer = _layer(pre=pre)
    alpha, x, y = _inputs()
    f = value_vectors(x, layer)
    attn_out = _attn_out(alpha, f, layer)
    src, res, bias = decompose_block(alpha, f, y, attn_out, layer)
    total = src.sum(2) + res + bias
    if pre:
        expected = y + attn_out
    else:
        expected = torch.nn.functional.layer_norm(y + attn_out, (16,), layer.ln_weight, layer.ln_bias, layer.ln_eps)
        # before the LayerNorm, too: the raw vectors add up to the pre-LN sum
        z = torch.einsum("bhts,bhsd->btsd", alpha, f)
        torch.testing.assert_close(z.sum(2) + y + layer.out_bias, y + attn_out, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(total, expected, rtol=1e-4, atol=1e-5)
    block = score_attn_res_ln(alpha, value_gram(x, layer, folded=not pre), y, attn_out, layer)
    torch.testing.assert_close(block.source, src.norm(dim=-1), rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(block.residual, res.norm(dim=-1), rtol=1e-5, atol=1e-6)
    mixed = src.sum(2).norm(dim=-1)
    torch.testing.assert_close(block.mixing, mixed / (mixed + res.norm(dim=-1)), rtol=1e-4, atol=1e-6)
    assert ((block.mixing >= 0) & (block.mixing <= 1)).all()


def test_identity_output_equal_value_norms_gives_attention():
    # W_V = 0, b_V = a unit vector inside each head's slice, W_O = I: f^h(x_j) = that unit vector
    # for every j, so norm-head = alpha exactly; the heads' vectors are orthogonal, so
    # norm = sqrt(sum_h alpha_h^2).
    D, H = 8, 2
    b_v = torch.zeros(D)
    b_v[0] = 1.0  # head 0's slice is dims 0..3
    b_v[4] = 1.0  # head 1's slice is dims 4..7
    layer = CrossAttentionLayer(torch.zeros(D, D), b_v, torch.eye(D), torch.zeros(D), H)
    alpha, x, _ = _inputs(H=H, D=D)
    gram = value_gram(x, layer)
    torch.testing.assert_close(score_norm_head(alpha, gram), alpha)
    torch.testing.assert_close(score_norm(alpha, gram), alpha.pow(2).sum(1).sqrt())


def test_padding_scores_exactly_zero():
    layer = _layer()
    alpha, x, y = _inputs(pad_src=4)
    f = value_vectors(x, layer)
    attn_out = _attn_out(alpha, f, layer)
    src_mask = torch.ones(2, 6, dtype=torch.bool)
    src_mask[:, 4:] = False
    tgt_mask = torch.ones(2, 5, dtype=torch.bool)
    tgt_mask[1, 3:] = False
    # every method that needs no self-attention records (alti-rollout has its own tests) nor a trained alignment
    # layer (learned: tests/attribution/test_learned.py)
    methods = [m for m in METHODS if not {"self-attention", "alignment-layer"} & METHODS[m].needs]
    out = layer_scores(LayerInputs(alpha, x, y, attn_out), layer, methods, src_mask, tgt_mask)
    for name, v in out.items():
        if v.dim() >= 3:
            assert (v[..., 4:] == 0).all(), name
        assert (v[1, ..., 3:, :] == 0).all() if v.dim() == 3 else True
    assert (out["attn-res-ln:mixing"][1, 3:] == 0).all()


def test_unknown_method():
    with pytest.raises(ValueError, match="valid: attn, attn-head, norm"):
        layer_scores(LayerInputs(*_inputs()[:2], *_inputs()[2:], _inputs()[2]), _layer(), ["grad"])


def _fairseq_decoder_layer(pre: bool = False, act: str = "relu"):
    """A small real fairseq TransformerDecoderLayer (d=32, 4 heads, FF 64), eval mode, seeded."""
    from argparse import Namespace

    from fairseq.models.transformer import base_architecture
    from fairseq.modules import TransformerDecoderLayer

    args = Namespace(
        decoder_embed_dim=32,
        decoder_attention_heads=4,
        decoder_ffn_embed_dim=64,
        encoder_embed_dim=32,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        decoder_normalize_before=pre,
        activation_fn=act,
    )
    base_architecture(args)
    torch.manual_seed(0)
    return TransformerDecoderLayer(args).eval()


def test_real_fairseq_layer():
    """On a real fairseq TransformerDecoderLayer: our alpha, f and block vectors reproduce its output."""
    pytest.importorskip("fairseq")
    for pre in (False, True):
        dec = _fairseq_decoder_layer(pre=pre)
        T, S, B = 5, 7, 2
        x_dec = torch.randn(T, B, 32)
        enc = torch.randn(S, B, 32)
        pad = torch.zeros(B, S, dtype=torch.bool)
        pad[1, 5:] = True
        captured = {}
        dec.encoder_attn.register_forward_hook(
            lambda m, a, kw, out, captured=captured: captured.update(q=kw["query"], out=out[0], w=out[1]),
            with_kwargs=True,
        )
        dec.encoder_attn_layer_norm.register_forward_hook(
            lambda m, a, out, captured=captured: captured.setdefault("ln", []).append((a[0], out))
        )
        dec(x_dec, enc, pad, need_attn=True, need_head_weights=True)
        layer = CrossAttentionLayer.from_fairseq(dec)
        alpha = captured["w"].transpose(0, 1)  # (H, B, T, S) -> (B, H, T, S)
        x = enc.transpose(0, 1)
        f = value_vectors(x, layer)
        attn_out = captured["out"].transpose(0, 1)
        torch.testing.assert_close(_attn_out(alpha, f, layer), attn_out, rtol=1e-4, atol=1e-5)
        ln_in, ln_out = captured["ln"][0]
        residual = ln_in.transpose(0, 1) if pre else ln_in.transpose(0, 1) - attn_out
        src, res, bias = decompose_block(alpha, f, residual, attn_out, layer)
        if pre:
            assert alpha[1, :, :, 5:].abs().max() == 0
        else:
            torch.testing.assert_close(src.sum(2) + res + bias, ln_out.transpose(0, 1), rtol=1e-4, atol=1e-5)


def _ff(D=16, F=32, act="relu", seed=5):
    from align.attribution.feedforward import FeedForwardBlock

    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    return FeedForwardBlock(r(F, D) / D**0.5, r(F) * 0.5, r(D, F) / F**0.5, r(D), act, 1 + 0.1 * r(D), r(D))


def _hand_ff(act):
    # D = 2, F = 3: W1 = [[1, 0], [0, 1], [1, 1]], b1 = [0, -3, -1], W2 = [[1, 0, 1], [0, 1, 0]], b2 = [0.5, -0.5]
    from align.attribution.feedforward import FeedForwardBlock

    return FeedForwardBlock(
        torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
        torch.tensor([0.0, -3.0, -1.0]),
        torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]),
        torch.tensor([0.5, -0.5]),
        act,
    )


def test_ff_shares_relu_by_hand():
    # Two parts v1 = [1, 0], v2 = [1, 2]: u = [2, 2], W1 u = [2, 2, 4], z = W1 u + b1 = [2, -1, 3].
    # IG over the activation from 0 (Kobayashi et al. 2023, Eq. 12): gate g(z)/z = 1[z > 0] = [1, 0, 1].
    #   v1: W1 v1 = [1, 0, 1] -> gated [1, 0, 1] -> W2 -> [1 + 1, 0] = [2, 0]
    #   v2: W1 v2 = [1, 2, 3] -> gated [1, 0, 3] -> W2 -> [1 + 3, 0] = [4, 0]
    #   b1:        [0, -3, -1] -> gated [0, 0, -1] -> W2 -> [-1, 0]; + b2 -> bias [-0.5, -0.5]
    # FF(u) = W2 relu(z) + b2 = W2 [2, 0, 3] + b2 = [5.5, -0.5] = [2, 0] + [4, 0] + [-0.5, -0.5].
    # (The old path a*u with b1 fixed gave neuron 2 the gate 0.75: 4a - 1 > 0 only for a > 1/4.)
    from align.attribution.feedforward import ff_gates, ff_shares

    ff = _hand_ff("relu")
    parts = torch.tensor([[[1.0, 0.0], [1.0, 2.0]]])  # (N=1, K=2, D=2)
    torch.testing.assert_close(ff_gates(parts.sum(1), ff), torch.tensor([[1.0, 0.0, 1.0]]))
    shares, bias = ff_shares(parts, ff)
    torch.testing.assert_close(shares, torch.tensor([[[2.0, 0.0], [4.0, 0.0]]]))
    torch.testing.assert_close(bias, torch.tensor([[-0.5, -0.5]]))
    torch.testing.assert_close(shares.sum(1) + bias, ff.forward(parts.sum(1)))


def test_ff_shares_gelu_by_hand():
    # The same block with GELU: gate g(z)/z = Phi(z); z = [2, -1, 3]:
    #   Phi(2) = 0.9772499, Phi(-1) = 0.1586553, Phi(3) = 0.9986501
    #   v1: [1, 0, 1] * gates = [0.9772499, 0, 0.9986501]         -> W2 -> [1.9759000, 0]
    #   v2: [1, 2, 3] * gates = [0.9772499, 0.3173105, 2.9959503] -> W2 -> [3.9732002, 0.3173105]
    #   b1: [0, -3, -1] * gates = [0, -0.4759658, -0.9986501]     -> W2 -> [-0.9986501, -0.4759658]
    #       + b2 = [-0.4986501, -0.9759658]
    # Sum [5.4504501, -0.6586553] = W2 gelu(z) + b2 = W2 [1.9544998, -0.1586553, 2.9959503] + b2.
    from align.attribution.feedforward import ff_shares

    ff = _hand_ff("gelu")
    parts = torch.tensor([[[1.0, 0.0], [1.0, 2.0]]])
    shares, bias = ff_shares(parts, ff)
    torch.testing.assert_close(shares, torch.tensor([[[1.9759000, 0.0], [3.9732002, 0.3173105]]]))
    torch.testing.assert_close(bias, torch.tensor([[-0.4986501, -0.9759658]]))
    torch.testing.assert_close(shares.sum(1) + bias, torch.tensor([[5.4504501, -0.6586553]]))
    torch.testing.assert_close(shares.sum(1) + bias, ff.forward(parts.sum(1)))


@pytest.mark.parametrize("act", ["relu", "gelu", "gelu_new", "silu"])
def test_ff_gates_are_the_exact_path_integral(act):
    # Plain reference: integrated gradients of g over z from 0, by autograd at 4000 midpoints,
    # times z, equals g(z) (completeness) and the gate times z; z == 0 gives g'(0).
    from align.attribution.feedforward import ACTIVATIONS, ff_gates

    ff = _ff(act=act)
    u = torch.randn(1, 1, 16)
    z = torch.nn.functional.linear(u, ff.fc1_weight, ff.fc1_bias)[0, 0]
    g, _ = ACTIVATIONS[act]
    n = 4000
    a = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    path = (a[:, None] * z.double()[None]).requires_grad_(True)
    g(path).sum().backward()
    integral = path.grad.mean(0).float()
    torch.testing.assert_close(ff_gates(u, ff)[0, 0], integral, rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(ff_gates(u, ff)[0, 0] * z, g(z), rtol=1e-6, atol=1e-6)
    zero = ACTIVATIONS[act][1](torch.zeros(1))
    assert zero.item() == {"relu": 0.0, "gelu": 0.5, "gelu_new": 0.5, "silu": 0.5}[act]


@pytest.mark.parametrize("act,pre", [("relu", False), ("gelu", False), ("relu", True), ("gelu", True)])
def test_whole_layer_decomposition_adds_up_to_fairseq_layer(act, pre):
    # pre-LN (--decoder-normalize-before): y + FF(LN(y)) after y = residual + attention, not normalized
    pytest.importorskip("fairseq")
    from align.attribution.feedforward import decompose_layer, score_attn_res_ln_ff
    from align.attribution.methods import layer_scores

    dec = _fairseq_decoder_layer(pre=pre, act=act)
    T, S, B = 5, 7, 2
    x_dec, enc = torch.randn(T, B, 32), torch.randn(S, B, 32)
    pad = torch.zeros(B, S, dtype=torch.bool)
    pad[1, 5:] = True
    cap = {}
    dec.encoder_attn.register_forward_hook(
        lambda m, a, kw, out: cap.update(q=kw["query"], out=out[0], w=out[1]), with_kwargs=True
    )
    # pre-LN: the residual is the LayerNorm's input, not the attention's (normalized) query
    dec.encoder_attn_layer_norm.register_forward_hook(lambda m, a, out: cap.update(ln_in=a[0]))
    out, _, _ = dec(x_dec, enc, pad, need_attn=True, need_head_weights=True)
    layer = CrossAttentionLayer.from_fairseq(dec)
    assert layer.ff is not None and layer.ff.activation == act
    alpha, x = cap["w"].transpose(0, 1), enc.transpose(0, 1)
    y, attn_out = cap["ln_in" if pre else "q"].transpose(0, 1), cap["out"].transpose(0, 1)
    assert layer.normalize_before == pre and layer.ff.normalize_before == pre
    d = decompose_layer(alpha, x, y, attn_out, layer)
    # exact for every activation (integrated gradients over the element-wise activation): to 1e-5
    torch.testing.assert_close(d.source.sum(2) + d.residual + d.bias, out.transpose(0, 1), rtol=0, atol=1e-5)
    assert d.source[1, :, 5:].abs().max() == 0  # padded sources get nothing
    s = score_attn_res_ln_ff(alpha, x, y, attn_out, layer)
    torch.testing.assert_close(s.source, d.source.norm(dim=-1), rtol=1e-3, atol=1e-5)
    scores = layer_scores(LayerInputs(alpha, x, y, attn_out), layer, ["attn-res-ln-ff"])
    assert scores["attn-res-ln-ff"].shape == (B, T, S)
