"""ALTI+, its rollouts and value zeroing (align.attribution.contrib): hand-computed examples, a plain-loop
reference of the authors' formula, real fairseq and Hugging Face layers, and batch invariance."""

import pytest

torch = pytest.importorskip("torch")

from test_norms import _fairseq_decoder_layer, _inputs, _layer  # noqa: E402

from align.attribution.contrib import (  # noqa: E402
    alti_block,
    alti_contributions,
    rollout_decoder_step,
    rollout_encoder,
    value_zeroing,
)
from align.attribution.feedforward import FeedForwardBlock  # noqa: E402
from align.attribution.norms import CrossAttentionLayer  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _identity_layer(D: int, pre: bool, ln_eps: float = 1e-5) -> CrossAttentionLayer:
    """One head, W_V = W_O = I, no biases, LayerNorm gain 1 and bias 0: f(x) = x."""
    return CrossAttentionLayer(
        torch.eye(D), torch.zeros(D), torch.eye(D), torch.zeros(D), 1, torch.ones(D), torch.zeros(D), ln_eps, pre
    )


# ----------------------------------------------------------------------------------------------
# (a) hand-computed examples
# ----------------------------------------------------------------------------------------------


def test_alti_contributions_by_hand():
    # row 0: y = [2, 1], ||y||_1 = 3
    #   v0 = [2, 0]: ||y - v0||_1 = 0 + 1 = 1 -> 3 - 1 = 2
    #   v1 = [0, 1]: ||y - v1||_1 = 2 + 0 = 2 -> 3 - 2 = 1      -> [2/3, 1/3]
    # row 1: y = [2, 1]
    #   v0 = [3, 1]: ||y - v0||_1 = 1 + 0 = 1 -> 2
    #   v1 = [-1, 0]: ||y - v1||_1 = 3 + 1 = 4 -> -1, clamped to 0 -> [1, 0]
    # row 2: y = [1, 0]
    #   v0 = [1, 1]: ||y - v0||_1 = 0 + 1 = 1 -> 0
    #   v1 = [0, -1]: ||y - v1||_1 = 1 + 1 = 2 -> -1 -> 0     -> all zero: the row stays 0 (no 0/0)
    vectors = torch.tensor(
        [[[[2.0, 0.0], [0.0, 1.0]], [[3.0, 1.0], [-1.0, 0.0]], [[1.0, 1.0], [0.0, -1.0]]]]
    )  # (B=1, T=3, S=2, D=2)
    output = torch.tensor([[[2.0, 1.0], [2.0, 1.0], [1.0, 0.0]]])  # (1, 3, 2)
    c = alti_contributions(vectors, output)
    torch.testing.assert_close(c, torch.tensor([[[2 / 3, 1 / 3], [1.0, 0.0], [0.0, 0.0]]]))
    assert not torch.isnan(c).any()


def test_alti_block_cross_pre_ln_by_hand():
    # one target position, two sources, D = 2, one head, identity projections, pre-LN (the block
    # output is not normalized, so T(x_j) = z_j and the residual vector is y itself):
    #   alpha = [0.75, 0.25], x0 = [4, 0], x1 = [0, 4]  ->  z0 = [3, 0], z1 = [0, 1]
    #   residual y = [1, 1]; block output = y + z0 + z1 = [4, 2], ||.||_1 = 6
    #   z0:  ||[4, 2] - [3, 0]||_1 = 1 + 2 = 3 -> 6 - 3 = 3
    #   z1:  ||[4, 2] - [0, 1]||_1 = 4 + 1 = 5 -> 6 - 5 = 1
    #   res: ||[4, 2] - [1, 1]||_1 = 3 + 1 = 4 -> 6 - 4 = 2     sum 6 -> [1/2, 1/6, 1/3]
    layer = _identity_layer(2, pre=True)
    alpha = torch.tensor([[[[0.75, 0.25]]]])  # (1, 1, 1, 2)
    x = torch.tensor([[[4.0, 0.0], [0.0, 4.0]]])
    residual = torch.tensor([[[1.0, 1.0]]])
    attn_out = torch.tensor([[[3.0, 1.0]]])  # z0 + z1 (+ b_O = 0)
    c = alti_block(alpha, x, residual, attn_out, layer)
    torch.testing.assert_close(c, torch.tensor([[[1 / 2, 1 / 6, 1 / 3]]]))


def test_alti_block_cross_post_ln_by_hand():
    # D = 4, one head, identity projections, LayerNorm gain 1, bias 0 (post-LN):
    #   alpha = [0.75, 0.25], x0 = [4, 0, 0, 0], x1 = [0, 4, 0, 0] -> z0 = [3, 0, 0, 0], z1 = [0, 1, 0, 0]
    #   residual y = [0, 0, 0, -2]; pre-LN sum h = [3, 1, 0, -2], mean 0.5
    # Every vector is centred and divided by the same LayerNorm scale s, and there is no bias
    # (b_O = 0, beta = 0), so the normalised contributions do not depend on s: work with the centred
    # vectors (times s).
    #   s*out = h - 0.5 = [2.5, 0.5, -0.5, -2.5], ||.||_1 = 6
    #   L(z0) = [3,0,0,0] - 0.75 = [2.25, -0.75, -0.75, -0.75]:
    #     out - L(z0) = [0.25, 1.25, 0.25, -1.75] -> 3.5 -> 6 - 3.5 = 2.5
    #   L(z1) = [0,1,0,0] - 0.25 = [-0.25, 0.75, -0.25, -0.25]:
    #     out - L(z1) = [2.75, -0.25, -0.25, -2.25] -> 5.5 -> 6 - 5.5 = 0.5
    #   L(y)  = [0,0,0,-2] + 0.5 = [0.5, 0.5, 0.5, -1.5]:
    #     out - L(y)  = [2, 0, -1, -1] -> 4 -> 6 - 4 = 2
    #   sum 5 -> [0.5, 0.1, 0.4]
    # (the same numbers pre-LN give [1/2, 1/6, 1/3]: out = h, ||h||_1 = 6; 6 - 3 = 3, 6 - 5 = 1, 6 - 4 = 2)
    alpha = torch.tensor([[[[0.75, 0.25]]]])
    x = torch.tensor([[[4.0, 0.0, 0.0, 0.0], [0.0, 4.0, 0.0, 0.0]]])
    residual = torch.tensor([[[0.0, 0.0, 0.0, -2.0]]])
    attn_out = torch.tensor([[[3.0, 1.0, 0.0, 0.0]]])
    post = alti_block(alpha, x, residual, attn_out, _identity_layer(4, pre=False))
    torch.testing.assert_close(post, torch.tensor([[[0.5, 0.1, 0.4]]]))
    pre = alti_block(alpha, x, residual, attn_out, _identity_layer(4, pre=True))
    torch.testing.assert_close(pre, torch.tensor([[[1 / 2, 1 / 6, 1 / 3]]]))


def test_alti_block_self_attention_by_hand():
    # self-attention, T = S = 2, D = 2, identity projections, pre-LN; the residual joins the token itself
    #   x0 = [4, 0], x1 = [0, 4] (also the residuals)
    #   row 0: alpha [0.75, 0.25]: z00 = [3, 0], z01 = [0, 1]; out = x0 + z00 + z01 = [7, 1], ||.||_1 = 8
    #     token 0: z00 + x0 = [7, 0]: ||[0, 1]||_1 = 1 -> 7;  token 1: [0, 1]: ||[7, 0]||_1 = 7 -> 1  => [7/8, 1/8]
    #   row 1: alpha [0.5, 0.5]: z10 = [2, 0], z11 = [0, 2]; out = x1 + z10 + z11 = [2, 6], ||.||_1 = 8
    #     token 0: [2, 0]: ||[0, 6]||_1 = 6 -> 2;  token 1: z11 + x1 = [0, 6]: ||[2, 0]||_1 = 2 -> 6  => [1/4, 3/4]
    layer = _identity_layer(2, pre=True)
    alpha = torch.tensor([[[[0.75, 0.25], [0.5, 0.5]]]])
    x = torch.tensor([[[4.0, 0.0], [0.0, 4.0]]])
    attn_out = torch.tensor([[[3.0, 1.0], [2.0, 2.0]]])
    c = alti_block(alpha, x, x, attn_out, layer, self_attention=True)
    torch.testing.assert_close(c, torch.tensor([[[7 / 8, 1 / 8], [1 / 4, 3 / 4]]]))


def test_value_zeroing_by_hand():
    # pre-LN, no FF block: the layer output is h = y + z0 + z1 itself
    #   alpha = [0.5, 0.5], x0 = [8, 0], x1 = [0, 12] -> z0 = [4, 0], z1 = [0, 6]; y = [0, -3]; h = [4, 3], ||h|| = 5
    #   zero x0: h - z0 = [0, 3]:  cos = 9 / (5 * 3) = 0.6           -> 1 - 0.6 = 0.4
    #   zero x1: h - z1 = [4, -3]: cos = (16 - 9) / (5 * 5) = 0.28   -> 0.72
    layer = _identity_layer(2, pre=True)
    alpha = torch.tensor([[[[0.5, 0.5]]]])
    x = torch.tensor([[[8.0, 0.0], [0.0, 12.0]]])
    residual = torch.tensor([[[0.0, -3.0]]])
    attn_out = torch.tensor([[[4.0, 6.0]]])
    vz = value_zeroing(alpha, x, residual, attn_out, layer)
    torch.testing.assert_close(vz, torch.tensor([[[0.4, 0.72]]]))
    # a padded third source (alpha 0) scores exactly 0
    alpha_p = torch.tensor([[[[0.5, 0.5, 0.0]]]])
    x_p = torch.tensor([[[8.0, 0.0], [0.0, 12.0], [5.0, 5.0]]])
    vz_p = value_zeroing(alpha_p, x_p, residual, attn_out, layer)
    torch.testing.assert_close(vz_p, torch.tensor([[[0.4, 0.72, 0.0]]]))


def test_value_zeroing_post_ln_ff_by_hand():
    # post-LN, FF block with zero weights and biases: FF(u) = 0, so the layer output is
    # LN2(LN1(h)) and 1 - cos only sees the centred vectors (LayerNorm gains 1, biases 0, and a
    # LayerNorm of a LayerNorm output is the same vector up to eps).
    #   D = 4, alpha = [1, 0] (one head), x0 = [2, 0, 0, 0]: z0 = [2, 0, 0, 0], z1 = 0
    #   y = [0, 2, 0, 0]; h = [2, 2, 0, 0], centred [1, 1, -1, -1]
    #   zero x0: h - z0 = [0, 2, 0, 0], centred [-0.5, 1.5, -0.5, -0.5];
    #     cos = (-0.5 + 1.5 + 0.5 + 0.5) / (2 * sqrt(3)) = 2 / (2 sqrt 3) = 1/sqrt(3) -> 1 - 0.57735 = 0.42265
    #   zero x1: nothing changes (alpha 0)                                          -> 0
    D = 4
    ff = FeedForwardBlock(
        torch.zeros(8, D),
        torch.zeros(8),
        torch.zeros(D, 8),
        torch.zeros(D),
        "relu",
        torch.ones(D),
        torch.zeros(D),
        1e-5,
        False,
    )
    layer = CrossAttentionLayer(
        torch.eye(D), torch.zeros(D), torch.eye(D), torch.zeros(D), 1, torch.ones(D), torch.zeros(D), 1e-5, False, ff
    )
    alpha = torch.tensor([[[[1.0, 0.0]]]])
    x = torch.tensor([[[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0]]])
    residual = torch.tensor([[[0.0, 2.0, 0.0, 0.0]]])
    attn_out = torch.tensor([[[2.0, 0.0, 0.0, 0.0]]])
    vz = value_zeroing(alpha, x, residual, attn_out, layer)
    torch.testing.assert_close(vz, torch.tensor([[[1 - 3**-0.5, 0.0]]]), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------------------------
# (b) alti_block against a plain-loop transcription of the authors' formula
# ----------------------------------------------------------------------------------------------


def _loop_z(alpha, x, layer):
    """z_ij = sum_h alpha^h_ij f^h(x_j), f^h(x) = (x W_V^h + b_V^h) W_O^h, every vector in loops: (B, T, S, D)."""
    B, H, T, S = alpha.shape
    D = x.shape[-1]
    d = D // H
    z = torch.zeros(B, T, S, D)
    for b in range(B):
        for i in range(T):
            for j in range(S):
                for h in range(H):
                    v = x[b, j] @ layer.v_weight[h * d : (h + 1) * d].T + layer.v_bias[h * d : (h + 1) * d]
                    z[b, i, j] += alpha[b, h, i, j] * (v @ layer.out_weight[:, h * d : (h + 1) * d].T)
    return z


def _alti_reference(alpha, x, residual, layer, self_attention):
    """Ferrando et al.'s ALTI for one block, one vector at a time (transformer_wrapper.py,
    ``l1`` contributions, ``min_sum`` normalisation), with the exact LayerNorm scale."""
    B, H, T, S = alpha.shape
    D = x.shape[-1]
    z = _loop_z(alpha, x, layer)
    attn_out = z.sum(2) + layer.out_bias
    out = torch.zeros(B, T, S if self_attention else S + 1)
    for b in range(B):
        for i in range(T):
            h = residual[b, i] + attn_out[b, i]  # pre-LayerNorm sum
            if layer.normalize_before:  # pre-LN: the raw vectors; the block output is h
                vecs = [z[b, i, j] for j in range(S)]
                res = residual[b, i]
                y = h
            else:  # post-LN: LayerNorm-centred, gain-scaled, divided by the LayerNorm scale
                s = torch.sqrt(((h - h.mean()) ** 2).mean() + layer.ln_eps)
                lin = lambda v: (v - v.mean()) * layer.ln_weight  # noqa: E731
                vecs = [lin(z[b, i, j]) / s for j in range(S)]
                res = lin(residual[b, i]) / s
                y = torch.nn.functional.layer_norm(h, (D,), layer.ln_weight, layer.ln_bias, layer.ln_eps)  # real output
            if self_attention:
                vecs[i] = vecs[i] + res
            else:
                vecs.append(res)
            c = [max(0.0, float(y.abs().sum() - (y - v).abs().sum())) for v in vecs]
            total = sum(c)
            for j, cj in enumerate(c):
                out[b, i, j] = cj / total if total > 0 else 0.0
    return out, attn_out


@pytest.mark.parametrize("pre", [False, True])
@pytest.mark.parametrize("self_attention", [False, True])
def test_alti_block_equals_plain_loops(pre, self_attention):
    layer = _layer(D=16, H=4, pre=pre, seed=2)
    B, T = 2, 4
    S = T if self_attention else 6
    alpha, x, residual = _inputs(B=B, H=4, T=T, S=S, D=16, seed=3)
    if self_attention:  # key/value = the query input (post-LN) or its LayerNorm (pre-LN)
        x = residual if not pre else torch.nn.functional.layer_norm(residual, (16,), layer.ln_weight, layer.ln_bias)
    alpha = alpha.clone()
    alpha[1, :, :, -1] = 0  # a padded key in sentence 1
    ref, attn_out = _alti_reference(alpha, x, residual, layer, self_attention)
    got = alti_block(alpha, x, residual, attn_out, layer, self_attention=self_attention)
    assert got.shape == ref.shape
    torch.testing.assert_close(got, ref, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got.sum(-1), torch.ones(B, T), rtol=1e-5, atol=1e-5)
    if not self_attention:
        assert (got[1, :, S - 1] == 0).all()  # the padded source contributes nothing


# ----------------------------------------------------------------------------------------------
# (c) value zeroing = zeroing the values and rerunning the real layer
# ----------------------------------------------------------------------------------------------


@pytest.mark.fairseq
@pytest.mark.parametrize("pre,act", [(False, "relu"), (True, "relu"), (False, "gelu"), (True, "gelu")])
def test_value_zeroing_equals_rerunning_fairseq_layer(pre, act):
    pytest.importorskip("fairseq")
    dec = _fairseq_decoder_layer(pre=pre, act=act)
    T, S, B = 4, 5, 2
    g = torch.Generator().manual_seed(7)
    x_dec, enc = torch.randn(T, B, 32, generator=g), torch.randn(S, B, 32, generator=g)
    pad = torch.zeros(B, S, dtype=torch.bool)
    pad[1, 3:] = True
    cap = {}
    hooks = [
        dec.encoder_attn.register_forward_hook(
            lambda m, a, kw, out: cap.update(q=kw["query"], out=out[0], w=out[1]), with_kwargs=True
        ),
        dec.encoder_attn_layer_norm.register_forward_pre_hook(lambda m, a: cap.update(ln_in=a[0])),
    ]
    with torch.no_grad():
        real, _, _ = dec(x_dec, enc, pad, need_attn=True, need_head_weights=True)
    for h in hooks:
        h.remove()
    layer = CrossAttentionLayer.from_fairseq(dec)
    alpha = cap["w"].transpose(0, 1)  # (H, B, T, S) -> (B, H, T, S)
    residual = (cap["ln_in"] if pre else cap["q"]).transpose(0, 1)
    vz = value_zeroing(alpha, enc.transpose(0, 1), residual, cap["out"].transpose(0, 1), layer)
    for j in range(S):

        def zero_j(m, a, out, j=j):  # v_proj output is time-first (S, B, D)
            out = out.clone()
            out[j] = 0
            return out

        h = dec.encoder_attn.v_proj.register_forward_hook(zero_j)
        with torch.no_grad():
            new, _, _ = dec(x_dec, enc, pad)
        h.remove()
        expected = 1 - torch.nn.functional.cosine_similarity(new, real, dim=-1)  # (T, B)
        torch.testing.assert_close(vz[:, :, j], expected.T, rtol=1e-4, atol=1e-5)
    assert (vz[1, :, 3:] == 0).all()
    assert (vz[0] > 0).all()  # every real source moves every output a little


from hf_tiny import randomize as _randomize  # noqa: E402

_HF_COMMON = dict(
    d_model=16,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    encoder_ffn_dim=32,
    decoder_ffn_dim=32,
    dropout=0.0,
    attention_dropout=0.0,
    activation_dropout=0.0,
    max_position_embeddings=64,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
)


def _tiny_m2m100(act="relu"):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.M2M100Config(
        vocab_size=40, activation_function=act, decoder_start_token_id=2, attn_implementation="eager", **_HF_COMMON
    )
    torch.manual_seed(0)
    model = transformers.M2M100ForConditionalGeneration(cfg).eval()
    _randomize(model, 1)
    return model


def _tiny_marian(act="swish"):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.MarianConfig(
        vocab_size=40,
        decoder_vocab_size=40,
        activation_function=act,
        decoder_start_token_id=1,
        attn_implementation="eager",
        **_HF_COMMON,
    )
    torch.manual_seed(0)
    model = transformers.MarianMTModel(cfg).eval()
    _randomize(model, 2)
    return model


_SRC = [[5, 9, 13, 7, 21, 2], [30, 11, 2]]  # right-padded together: lengths 6 and 3
_LAB = [[8, 17, 25, 6, 2], [19, 33, 12, 14, 27, 9, 2]]  # lengths 5 and 7


def test_value_zeroing_equals_rerunning_hf_m2m100_layer():
    """Pre-LN Hugging Face layer (M2M100): zero source j's value vectors in one decoder layer's
    cross-attention, and compare that layer's real output with and without."""
    from align.extraction.adapters import Batch, HFAdapter
    from align.extraction.engine import Recorder, collate

    model = _tiny_m2m100()
    adapter = HFAdapter(model)
    assert adapter.pre_ln
    src, src_mask = collate(_SRC, 1)
    lab, tgt_mask = collate(_LAB, 1)
    batch = Batch(src, src_mask, lab, tgt_mask)
    S = src.shape[1]
    for k, dec_layer in enumerate(model.model.decoder.layers):
        outs = []
        hook = dec_layer.register_forward_hook(
            lambda m, a, out, outs=outs: outs.append(out[0] if isinstance(out, tuple) else out)
        )
        with torch.no_grad(), Recorder(model, adapter) as rec:
            adapter.forward(model, batch)
        inp, blk = rec.layer_inputs(k), rec.layer(k)
        alpha = inp.alpha * src_mask[:, None, None, :]
        vz = value_zeroing(alpha, inp.x, inp.residual, inp.attn_out, blk)
        for j in range(S):

            def zero_j(m, a, out, j=j):  # batch-first (B, S, D)
                out = out.clone()
                out[:, j] = 0
                return out

            h = dec_layer.encoder_attn.v_proj.register_forward_hook(zero_j)
            with torch.no_grad():
                adapter.forward(model, batch)
            h.remove()
            real, new = outs[0], outs[-1]
            expected = 1 - torch.nn.functional.cosine_similarity(new, real, dim=-1)  # (B, T)
            torch.testing.assert_close(vz[:, :, j] * tgt_mask, expected * tgt_mask, rtol=1e-4, atol=1e-5)
            if k == len(model.model.decoder.layers) - 1:
                # Convention: the layer's own output, the last layer's too. inseq compares
                # hidden_states, where Hugging Face applies the decoder's final LayerNorm to the last
                # layer: a different score (not invariant to centring and gains), which we do not give.
                ln = model.model.decoder.layer_norm
                with_ln = 1 - torch.nn.functional.cosine_similarity(ln(new), ln(real), dim=-1)
                gap = ((vz[:, :, j] - with_ln) * tgt_mask).abs().max()
                assert gap > 1e-3, gap
        hook.remove()
        assert (vz[1, :, 3:] == 0).all()


# ----------------------------------------------------------------------------------------------
# (d) rollouts
# ----------------------------------------------------------------------------------------------


def test_rollout_encoder_by_hand():
    # C0 = [[1, 0], [0.5, 0.5]], C1 = [[0.5, 0.5], [0, 1]]
    # E = C1 C0 = [[0.5*1 + 0.5*0.5, 0.5*0 + 0.5*0.5], [0*1 + 1*0.5, 0*0 + 1*0.5]] = [[0.75, 0.25], [0.5, 0.5]]
    c0 = torch.tensor([[[1.0, 0.0], [0.5, 0.5]]])
    c1 = torch.tensor([[[0.5, 0.5], [0.0, 1.0]]])
    torch.testing.assert_close(rollout_encoder([c0, c1]), torch.tensor([[[0.75, 0.25], [0.5, 0.5]]]))
    torch.testing.assert_close(rollout_encoder([c0]), c0)  # one layer: itself


def test_rollout_decoder_by_hand():
    E = torch.tensor([[[0.75, 0.25], [0.5, 0.5]]])  # encoder rollout of the test above
    # layer 0: cross (T=2, S+1=3), residual last; decoder self-attention (causal)
    cross0 = torch.tensor([[[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]]])
    self0 = torch.tensor([[[1.0, 0.0], [0.5, 0.5]]])
    # C_tgt = diag(cross[:, 2]) self = [[0.25, 0], [0.25, 0.25]]
    # C_src E: [0.5, 0.25] E = [0.375 + 0.125, 0.125 + 0.125] = [0.5, 0.25]
    #          [0.25, 0.25] E = [0.1875 + 0.125, 0.0625 + 0.125] = [0.3125, 0.1875]
    # R0 = [[0.5, 0.25 | 0.25, 0], [0.3125, 0.1875 | 0.25, 0.25]] (rows sum to 1)
    r0 = rollout_decoder_step(None, cross0, self0, E)
    torch.testing.assert_close(r0, torch.tensor([[[0.5, 0.25, 0.25, 0.0], [0.3125, 0.1875, 0.25, 0.25]]]))
    # layer 1: cross1 = [[0.25, 0.25, 0.5], [0.5, 0, 0.5]], self1 = self0
    # C_tgt1 = [[0.5, 0], [0.25, 0.25]]; C_src1 E = [[0.3125, 0.1875], [0.375, 0.125]]
    # C_tgt1 R0_src = [[0.5*[0.5, 0.25]], [0.25*[0.5, 0.25] + 0.25*[0.3125, 0.1875]]]
    #               = [[0.25, 0.125], [0.203125, 0.109375]]
    # C_tgt1 R0_tgt = [[0.5*[0.25, 0]], [0.25*[0.25, 0] + 0.25*[0.25, 0.25]]] = [[0.125, 0], [0.125, 0.0625]]
    # R1 = [[0.5625, 0.3125, 0.125, 0], [0.578125, 0.234375, 0.125, 0.0625]] (sums 1: the normalisation is a no-op)
    cross1 = torch.tensor([[[0.25, 0.25, 0.5], [0.5, 0.0, 0.5]]])
    r1 = rollout_decoder_step(r0, cross1, self0, E)
    torch.testing.assert_close(r1, torch.tensor([[[0.5625, 0.3125, 0.125, 0.0], [0.578125, 0.234375, 0.125, 0.0625]]]))


def _authors_rollout(cross, self_dec, enc):
    """The authors' ``rollout`` (transformer_wrapper.get_contribution_rollout) for one sentence, in
    loops: cross (L, T, S+1), self_dec (L, T, T), enc (S, S) -> (L, T, S+T)."""
    L, T, S1 = cross.shape
    S = S1 - 1
    out = []
    for layer in range(L):
        c_roll = torch.zeros(T, S + T)
        for i in range(T):
            for j in range(S):
                c_roll[i, j] = sum(cross[layer, i, k] * enc[k, j] for k in range(S))
            for k in range(T):
                c_roll[i, S + k] = self_dec[layer, i, k] * cross[layer, i, S]
        if layer == 0:
            out.append(c_roll)
            continue
        prev = out[-1]
        new = torch.zeros(T, S + T)
        for i in range(T):
            for col in range(S + T):
                acc = sum(c_roll[i, S + k] * prev[k, col] for k in range(T))
                new[i, col] = acc + (c_roll[i, col] if col < S else 0.0)
            new[i] /= new[i].sum()
        out.append(new)
    return torch.stack(out)


def test_rollout_equals_authors_loops_and_rows_sum_to_one():
    g = torch.Generator().manual_seed(4)
    B, L, S, T = 2, 3, 5, 4
    stoch = lambda *s: torch.rand(*s, generator=g).softmax(-1)  # noqa: E731  (rows sum to 1)
    causal = torch.tril(torch.ones(T, T))
    enc_layers = [stoch(B, S, S) for _ in range(L)]
    E = rollout_encoder(enc_layers)
    torch.testing.assert_close(E.sum(-1), torch.ones(B, S))
    cross = stoch(B, L, T, S + 1)
    selfd = torch.rand(B, L, T, T, generator=g) * causal
    selfd = selfd / selfd.sum(-1, keepdim=True)
    prev = None
    steps = []
    for layer in range(L):
        prev = rollout_decoder_step(prev, cross[:, layer], selfd[:, layer], E)
        steps.append(prev)
        torch.testing.assert_close(prev.sum(-1), torch.ones(B, T))
        assert (prev[..., S:] * (1 - causal) == 0).all()  # no target token reaches an earlier one
    got = torch.stack(steps, 1)  # (B, L, T, S+T)
    for b in range(B):
        torch.testing.assert_close(got[b], _authors_rollout(cross[b], selfd[b], E[b]))


def test_rollout_zero_row_stays_zero():
    # a padded target row (all contributions 0) stays 0 after normalising, never NaN
    E = torch.eye(2)[None]
    cross = torch.tensor([[[0.5, 0.25, 0.25], [0.0, 0.0, 0.0]]])
    selfd = torch.tensor([[[1.0, 0.0], [0.0, 0.0]]])
    r0 = rollout_decoder_step(None, cross, selfd, E)
    r1 = rollout_decoder_step(r0, cross, selfd, E)
    assert not torch.isnan(r1).any()
    assert (r1[0, 1] == 0).all()
    torch.testing.assert_close(r1[0, 0].sum(), torch.tensor(1.0))


# ----------------------------------------------------------------------------------------------
# (e) batch invariance through the engine
# ----------------------------------------------------------------------------------------------

_BATCH_METHODS = ["alti", "alti-rollout", "value-zeroing"]


@pytest.mark.parametrize("make", [_tiny_marian, _tiny_m2m100], ids=["marian-post-ln", "m2m100-pre-ln"])
def test_scores_independent_of_batch_and_padding(make):
    from align.extraction.adapters import HFAdapter
    from align.extraction.engine import score_pairs

    model = make()
    adapter = HFAdapter(model)
    together = score_pairs(model, adapter, _SRC, _LAB, 1, _BATCH_METHODS, [0, 1])
    for i in range(2):
        alone = score_pairs(model, adapter, [_SRC[i]], [_LAB[i]], 1, _BATCH_METHODS, [0, 1])[0]
        for key, v in alone.items():
            assert v.shape == (len(_LAB[i]), len(_SRC[i])), key
            assert together[i][key].shape == v.shape, key
            torch.testing.assert_close(
                torch.from_numpy(together[i][key]),
                torch.from_numpy(v),
                rtol=1e-4,
                atol=1e-5,
                msg=lambda m, k=key, i=i: f"sentence {i} {k}: {m}",
            )
    # alti and the rollout: rows are shares (alti's row leaves out the residual column)
    for i in range(2):
        roll = together[i][("alti-rollout", 1)]
        assert (roll >= 0).all() and (roll.sum(-1) <= 1 + 1e-5).all()
        alti = together[i][("alti", 0)]
        assert (alti >= 0).all() and (alti.sum(-1) <= 1 + 1e-5).all()


def test_rollout_of_one_layer_equals_rollout_of_all():
    """Asking for layer 1 alone still carries the rollout through layer 0."""
    from align.extraction.adapters import HFAdapter
    from align.extraction.engine import score_pairs

    model = _tiny_marian()
    adapter = HFAdapter(model)
    both = score_pairs(model, adapter, _SRC, _LAB, 1, ["alti-rollout", "alti"], [0, 1])
    top = score_pairs(model, adapter, _SRC, _LAB, 1, ["alti-rollout"], [1])
    for i in range(2):
        assert set(top[i]) == {("alti-rollout", 1)}
        torch.testing.assert_close(
            torch.from_numpy(top[i][("alti-rollout", 1)]), torch.from_numpy(both[i][("alti-rollout", 1)])
        )


@pytest.mark.fairseq
def test_shipped_model_links_independent_of_batch_size():
    pytest.importorskip("fairseq")
    import os

    from fairseq_plugins.hub import NormAligner

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    aligner = NormAligner.from_checkpoint(os.path.join(root, "data/models/enfr"))
    with open(os.path.join(root, "align/gold/sets/enfr_hansards/enfr.src-tgt"), encoding="utf-8") as f:
        pairs = [line.lower().split(" ||| ") for line in f.read().splitlines()[:8]]
    src, tgt = [p[0].strip() for p in pairs], [p[1].strip() for p in pairs]
    one = aligner.align(src, tgt, methods=_BATCH_METHODS, shifts=["awo", "awi"], batch_size=1)
    eight = aligner.align(src, tgt, methods=_BATCH_METHODS, shifts=["awo", "awi"], batch_size=8)
    assert one.keys() == eight.keys()
    for key in one:
        assert one[key] == eight[key], key
