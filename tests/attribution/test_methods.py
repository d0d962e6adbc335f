"""The method registry (align.attribution.methods): names, needs, per-head flags, registering a new method,
shared intermediates computed once, and padded target rows."""

import re

import pytest

torch = pytest.importorskip("torch")

from test_norms import _inputs, _layer  # noqa: E402

import align.attribution.methods as methods_mod  # noqa: E402
from align.attribution.feedforward import FeedForwardBlock  # noqa: E402
from align.attribution.learned import AlignmentHead, HeadShape  # noqa: E402
from align.attribution.methods import (  # noqa: E402
    METHODS,
    NEEDS,
    LayerContext,
    Method,
    ModelContext,
    check_methods,
    describe,
    get_method,
    layer_scores,
    needs,
    register,
)
from align.attribution.norms import CrossAttentionLayer, LayerInputs, value_vectors  # noqa: E402
from align.extraction.engine import check_spec  # noqa: E402
from align.spec.alignspec import AlignSpec  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

B, H, T, S, D = 2, 4, 5, 6, 16


def _valid_list(msg: str) -> list[str]:
    return re.search(r"valid: (.*)$", msg).group(1).split(", ")


def _layer_with_ff(pre: bool) -> CrossAttentionLayer:
    """test_norms' random layer with an FF block whose LayerNorm placement matches the layer's."""
    layer = _layer(D=D, H=H, pre=pre)
    g = torch.Generator().manual_seed(11)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    layer.ff = FeedForwardBlock(
        r(32, D) / D**0.5, r(32) * 0.5, r(D, 32) / 32**0.5, r(D), "relu", 1 + 0.1 * r(D), r(D), 1e-5, pre
    )
    return layer


def _cross_inputs(layer: CrossAttentionLayer, pad_src: int | None = None) -> LayerInputs:
    alpha, x, y = _inputs(B=B, H=H, T=T, S=S, D=D, pad_src=pad_src)
    attn_out = torch.einsum("bhts,bhsd->btd", alpha, value_vectors(x, layer)) + layer.out_bias
    return LayerInputs(alpha, x, y, attn_out)


def _self_record(n: int, causal: bool, seed: int, pre: bool) -> tuple[LayerInputs, CrossAttentionLayer]:
    """A self-attention block over n positions with its recorded inputs (query = key = value input)."""
    blk = _layer(D=D, H=H, pre=pre, seed=seed)
    g = torch.Generator().manual_seed(seed + 100)
    logits = torch.randn(B, H, n, n, generator=g)
    if causal:
        logits = logits.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    alpha = logits.softmax(-1)
    res = torch.randn(B, n, D, generator=g)
    x = torch.nn.functional.layer_norm(res, (D,), blk.ln_weight, blk.ln_bias) if pre else res
    attn_out = torch.einsum("bhts,bhsd->btd", alpha, value_vectors(x, blk)) + blk.out_bias
    return LayerInputs(alpha, x, res, attn_out), blk


def _model_context(src_mask, tgt_mask, pre: bool) -> ModelContext:
    records = {
        ("encoder", 0): _self_record(S, False, 20, pre),
        ("encoder", 1): _self_record(S, False, 21, pre),
        ("decoder", 0): _self_record(T, True, 22, pre),
    }
    torch.manual_seed(23)
    head = AlignmentHead(HeadShape(0, D, H)).eval()  # the learned method's layer, random, reading layer 0
    return ModelContext(
        self_attention=lambda part, k: records[(part, k)],
        n_encoder_layers=2,
        src_mask=src_mask,
        tgt_mask=tgt_mask,
        alignment_layer=head,
    )


# ----------------------------------------------------------------------------------------------
# the registry
# ----------------------------------------------------------------------------------------------


def test_unknown_method_lists_the_valid_ones():
    for call in (
        lambda: get_method("grad"),
        lambda: check_methods(["norm", "grad"]),
        lambda: needs(["grad"]),
        lambda: layer_scores(_cross_inputs(_layer()), _layer(), ["grad"]),
        lambda: check_spec(AlignSpec(methods=("grad",)), 3, 4),
    ):
        with pytest.raises(ValueError, match="grad") as e:
            call()
        assert _valid_list(str(e.value)) == list(METHODS)


def test_every_method_declares_known_needs_and_a_description():
    expected = {
        "attn",
        "attn-head",
        "norm",
        "norm-head",
        "attn-res-ln",
        "attn-res-ln-ff",
        "alti",
        "alti-rollout",
        "value-zeroing",
        "learned",
    }
    assert expected <= set(METHODS)
    for name, m in METHODS.items():
        assert m.name == name
        assert m.needs and m.needs <= set(NEEDS), name
        # every method reads the cross-attention, but learned, which reads its own trained layer
        assert ("alpha" in m.needs) != ("alignment-layer" in m.needs), name
        assert m.description
    text = describe()
    assert len(text.splitlines()) == len(METHODS)
    for name in METHODS:
        assert re.search(rf"^{re.escape(name)} ", text, re.M), name


def test_unknown_need_is_refused():
    with pytest.raises(ValueError, match=r"unknown needs \['gradients'\]; valid: alpha, gram"):
        Method("grad", "gradients", frozenset({"alpha", "gradients"}), lambda c: {})


def test_per_head_flags():
    assert {n for n, m in METHODS.items() if m.per_head} == {"attn-head", "norm-head"}
    layer = _layer_with_ff(pre=False)
    # what needs no record beyond the layer's own (rollouts need self-attention; learned a trained layer)
    alone = [m for m in METHODS if not {"self-attention", "alignment-layer"} & METHODS[m].needs]
    out = layer_scores(_cross_inputs(layer), layer, alone)
    for name, m in METHODS.items():
        if name in out:
            assert out[name].shape == ((B, H, T, S) if m.per_head else (B, T, S)), name


def test_needs():
    assert needs([]) == frozenset()
    assert needs(["attn"]) == {"alpha"}
    assert needs(["attn", "attn-head"]) == {"alpha"}
    assert needs(["norm", "attn-res-ln"]) == {"alpha", "gram", "gram-folded"}
    assert needs(["attn-res-ln-ff"]) == {"alpha", "block", "ff"}
    assert needs(["value-zeroing"]) >= {"alpha", "ff"}
    roll = needs(["alti-rollout"])
    assert {"self-attention", "previous-layers"} <= roll
    # only the rollout asks the engine to record self-attention
    assert [n for n in METHODS if "self-attention" in METHODS[n].needs] == ["alti-rollout"]
    assert needs(list(METHODS)) == set().union(*(m.needs for m in METHODS.values()))


def test_register_a_new_method_and_use_it():
    layer = _layer_with_ff(pre=False)
    inputs = _cross_inputs(layer, pad_src=4)
    src_mask = torch.ones(B, S, dtype=torch.bool)
    src_mask[:, 4:] = False
    tgt_mask = torch.ones(B, T, dtype=torch.bool)
    tgt_mask[1, 3:] = False
    new = Method(
        "attn-max",
        "attention weights, max over heads",
        frozenset({"alpha"}),
        lambda c: {"attn-max": c.alpha.max(dim=1).values},
    )
    assert "attn-max" not in METHODS
    try:
        assert register(new) is new
        with pytest.raises(ValueError, match="registered already"):
            register(new)
        assert needs(["attn-max"]) == {"alpha"}
        assert "attn-max" in describe()
        out = layer_scores(inputs, layer, ["attn", "attn-max"], src_mask, tgt_mask)
        expected = inputs.alpha.max(dim=1).values * tgt_mask[..., None]
        torch.testing.assert_close(out["attn-max"], expected)
        assert (out["attn-max"][1, 3:] == 0).all()
        assert set(out) == {"attn", "attn-max"}
        check_spec(AlignSpec(methods=("attn-max",)), 3, 4)  # the engine's checks see it too
    finally:
        METHODS.pop("attn-max", None)
    assert "attn-max" not in METHODS
    with pytest.raises(ValueError, match="unknown method"):
        layer_scores(inputs, layer, ["attn-max"])


def test_builtin_names_cannot_be_registered_twice():
    with pytest.raises(ValueError, match="'norm' is registered already"):
        register(Method("norm", "again", frozenset({"alpha"}), lambda c: {}))
    assert METHODS["norm"].cite.startswith("Kobayashi")


# ----------------------------------------------------------------------------------------------
# shared intermediates are computed once per layer
# ----------------------------------------------------------------------------------------------


def _count(monkeypatch, name: str) -> list:
    calls = []
    real = getattr(methods_mod, name)

    def counted(*a, **kw):
        calls.append(kw.get("folds", a[2] if len(a) > 2 else None) if name == "value_grams" else 1)
        return real(*a, **kw)

    monkeypatch.setattr(methods_mod, name, counted)
    return calls


@pytest.mark.parametrize("pre", [False, True])
def test_gram_computed_once(monkeypatch, pre):
    layer = _layer_with_ff(pre=pre)
    inputs = _cross_inputs(layer)
    grams, vals = _count(monkeypatch, "value_grams"), _count(monkeypatch, "values")
    layer_scores(inputs, layer, ["norm", "norm-head"])
    assert grams == [(False,)] and len(vals) == 1
    grams.clear()
    vals.clear()
    # attn-res-ln folds the post-LN LayerNorm into W_O (a second Gram, made in the same pass as
    # norm's); pre-LN it shares norm's
    layer_scores(inputs, layer, ["norm", "norm-head", "attn-res-ln", "attn"])
    assert grams == ([(False,)] if pre else [(False, True)])
    assert len(vals) == 1  # the value projections serve both Gram matrices
    grams.clear()
    layer_scores(inputs, layer, ["attn", "attn-head", "alti"])
    assert grams == []  # nobody asked for a Gram matrix


def test_new_method_shares_the_context(monkeypatch):
    """A registered method that asks for ctx.gram() reuses the one norm computed."""
    layer = _layer_with_ff(pre=False)
    inputs = _cross_inputs(layer)
    grams = _count(monkeypatch, "value_grams")
    seen = []

    def compute(ctx):
        g = ctx.gram()
        seen.append(g)
        return {"norm-sq": torch.diagonal(g, dim1=-2, dim2=-1).sum(-1)[:, None, :].expand(B, T, S)}

    try:
        register(Method("norm-sq", "sum of squared head norms", frozenset({"alpha", "gram"}), compute))
        ctx = LayerContext(inputs, layer)
        layer_scores(inputs, layer, ["norm", "norm-sq", "norm-head"], ctx=ctx)
        assert grams == [(False,)]
        assert seen[0] is ctx.gram()
    finally:
        METHODS.pop("norm-sq", None)


def test_alti_computed_once(monkeypatch):
    layer = _layer_with_ff(pre=False)
    calls = _count(monkeypatch, "alti_block")
    ctx = LayerContext(_cross_inputs(layer), layer)
    out = layer_scores(ctx.inputs, layer, ["alti"], ctx=ctx)
    assert len(calls) == 1
    assert ctx.alti() is ctx.alti()
    assert len(calls) == 1
    c = ctx.alti()  # (B, T, S + 1), residual last
    torch.testing.assert_close(out["alti"], c[..., :-1])
    torch.testing.assert_close(out["alti:mixing"], 1 - c[..., -1])


# ----------------------------------------------------------------------------------------------
# padding
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pre", [False, True])
def test_padded_target_rows_score_zero_for_every_method(pre):
    layer = _layer_with_ff(pre=pre)
    inputs = _cross_inputs(layer, pad_src=4)
    src_mask = torch.ones(B, S, dtype=torch.bool)
    src_mask[1, 4:] = False
    tgt_mask = torch.ones(B, T, dtype=torch.bool)
    tgt_mask[1, 3:] = False
    out = layer_scores(
        inputs, layer, list(METHODS), src_mask, tgt_mask, index=0, model=_model_context(src_mask, tgt_mask, pre)
    )
    assert set(METHODS) <= set(out)
    for name, v in out.items():
        assert not torch.isnan(v).any(), name
        rows = v[1, :, 3:] if v.dim() == 4 else v[1, 3:]  # per head (B, H, T, S), (B, T, S), mixing (B, T)
        assert rows.numel() and (rows == 0).all(), name
        assert (v[0] != 0).any(), name  # the real rows are not all zero
    for name in METHODS:  # padded source columns of sentence 1 score 0 too
        v = out[name]
        assert (v[1, ..., 4:] == 0).all(), name


def test_context_masks_padded_sources():
    """Weights on padded sources (a framework that does not mask them) are zeroed by the context."""
    layer = _layer_with_ff(pre=False)
    inputs = _cross_inputs(layer)  # alpha > 0 everywhere
    src_mask = torch.ones(B, S, dtype=torch.bool)
    src_mask[1, 4:] = False
    ctx = LayerContext(inputs, layer, src_mask=src_mask)
    assert (inputs.alpha[1, ..., 4:] > 0).all() and (ctx.alpha[1, ..., 4:] == 0).all()
    torch.testing.assert_close(ctx.alpha[0], inputs.alpha[0])
    out = layer_scores(
        inputs,
        layer,
        ["attn", "attn-head", "norm", "norm-head", "attn-res-ln", "alti", "value-zeroing"],
        src_mask,
        ctx=ctx,
    )
    for name, v in out.items():
        if v.dim() >= 3:
            assert (v[1, ..., 4:] == 0).all(), name
