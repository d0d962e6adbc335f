"""The attribution methods, one registry entry each (torch only).

Each ``Method`` declares what it needs (attention weights, the value Gram matrix, the block
decomposition, the FF block, self-attention records for rollouts) and whether it scores per head;
``LayerContext`` computes each shared intermediate once per layer, whichever methods ask for it.
A new method is one ``register(Method(...))`` plus its tests (inseq's pattern).

Score shapes: ``(B, T, S)``, or ``(B, H, T, S)`` for per-head methods; ``T`` decoder steps,
``S`` source tokens, target first. Padded target rows score 0; padded source columns are cut off
by the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from torch import Tensor

from ..spec.registry import add
from .contrib import alti_block, rollout_decoder_step, rollout_encoder, value_zeroing
from .feedforward import score_attn_res_ln_ff
from .learned import head_scores
from .norms import (
    CrossAttentionLayer,
    LayerInputs,
    score_attn,
    score_attn_res_ln,
    score_norm,
    score_norm_head,
    value_grams,
    values,
)

# What a method may need. The engine records self-attention only when a method needs it.
NEEDS = {
    "alpha": "per-head cross-attention weights",
    "gram": "Gram matrix of the head value vectors per source token (B, S, H, H)",
    "gram-folded": "the same with the post-LN LayerNorm folded into W_O",
    "block": "the cross-attention block decomposed into per-token vectors (B, T, S, D)",
    "ff": "the layer's feed-forward block",
    "self-attention": "encoder and decoder self-attention records (rollouts)",
    "previous-layers": "every earlier decoder layer, in order (rollouts)",
    "alignment-layer": "an alignment layer trained for this model (align-train), attached to the aligner",
}


_T = TypeVar("_T")


@dataclass
class ModelContext:
    """State shared by the layers of one batch: the recorder's self-attention blocks and rollouts."""

    self_attention: Callable[[str, int], tuple[LayerInputs, CrossAttentionLayer]] | None = None
    n_encoder_layers: int = 0
    src_mask: Tensor | None = None  # (B, S)
    tgt_mask: Tensor | None = None  # (B, T)
    state: dict[str, Any] = field(default_factory=dict)
    alignment_layer: Any = None  # an align.attribution.learned.AlignmentHead, for the learned method


class LayerContext:
    """One decoder layer's recorded inputs and weights, with every shared intermediate computed once."""

    def __init__(
        self,
        inputs: LayerInputs,
        layer: CrossAttentionLayer,
        index: int = 0,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        model: ModelContext | None = None,
    ) -> None:
        alpha = inputs.alpha
        if src_mask is not None:
            alpha = alpha * src_mask[:, None, None, :].to(alpha.dtype)
        self.alpha, self.inputs, self.layer, self.index = alpha, inputs, layer, index
        self.src_mask, self.tgt_mask = src_mask, tgt_mask
        self.model = model if model is not None else ModelContext(src_mask=src_mask, tgt_mask=tgt_mask)
        self._cache: dict[str, object] = {}
        self.wanted: frozenset[str] = frozenset()  # what the methods being computed need (set by layer_scores)

    def _get(self, key: str, make: Callable[[], _T]) -> _T:
        if key not in self._cache:
            self._cache[key] = make()
        return cast(_T, self._cache[key])

    def values(self) -> Tensor:
        """``x W_V + b_V`` (B, S, D)."""
        v = self.inputs.v
        return self._get("values", lambda: v if v is not None else values(self.inputs.x, self.layer))

    def gram(self, folded: bool = False) -> Tensor:
        """Value Gram matrix (B, S, H, H); ``folded`` with the post-LN LayerNorm in ``W_O``."""
        key = f"gram{folded}"
        if key not in self._cache and not self.layer.normalize_before and {"gram", "gram-folded"} <= self.wanted:
            # post-LN norm + attn-res-ln: both Gram matrices from one pass over the values
            self._cache["gramFalse"], self._cache["gramTrue"] = value_grams(
                self.inputs.x, self.layer, (False, True), v=self.values()
            )
        return self._get(key, lambda: value_grams(self.inputs.x, self.layer, (folded,), v=self.values())[0])

    def alti(self) -> Tensor:
        """ALTI contributions of the cross-attention block (B, T, S + 1), residual last."""
        i = self.inputs
        return self._get("alti", lambda: alti_block(self.alpha, i.x, i.residual, i.attn_out, self.layer))


@dataclass(frozen=True)
class Method:
    """One attribution method: ``compute(ctx)`` returns ``{name: scores}`` and optional extras
    (``name:mixing`` (B, T))."""

    name: str
    description: str
    needs: frozenset[str]
    compute: Callable[[LayerContext], dict[str, Tensor]]
    per_head: bool = False
    cite: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"method {self.name}: unknown needs {sorted(unknown)}; valid: {', '.join(NEEDS)}")


METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add a method to the registry (names are unique)."""
    return add(METHODS, method.name, method, "method")


def get_method(name: str) -> Method:
    """The registered method ``name``; ValueError listing the valid names otherwise."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; valid: {', '.join(METHODS)}") from None


def check_methods(methods: Iterable[str]) -> None:
    """Raise ValueError naming the valid methods if any is unknown."""
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise ValueError(f"unknown method(s) {', '.join(bad)}; valid: {', '.join(METHODS)}")


def needs(methods: Iterable[str]) -> frozenset[str]:
    """Everything the given methods need, together."""
    out: set[str] = set()
    for m in methods:
        out |= get_method(m).needs
    return frozenset(out)


def _block(ctx: LayerContext) -> dict[str, Tensor]:
    i, layer = ctx.inputs, ctx.layer
    b = score_attn_res_ln(ctx.alpha, ctx.gram(folded=not layer.normalize_before), i.residual, i.attn_out, layer)
    return {"attn-res-ln": b.source, "attn-res-ln:mixing": b.mixing}


def _block_ff(ctx: LayerContext) -> dict[str, Tensor]:
    i = ctx.inputs
    b = score_attn_res_ln_ff(ctx.alpha, i.x, i.residual, i.attn_out, ctx.layer)
    return {"attn-res-ln-ff": b.source, "attn-res-ln-ff:mixing": b.mixing}


def _alti(ctx: LayerContext) -> dict[str, Tensor]:
    c = ctx.alti()
    return {"alti": c[..., :-1], "alti:mixing": 1.0 - c[..., -1]}


def _alti_rollout(ctx: LayerContext) -> dict[str, Tensor]:
    m = ctx.model
    if m.self_attention is None:
        raise ValueError("alti-rollout needs the self-attention records of the encoder and decoder")
    state = m.state.setdefault("alti-rollout", {})
    if ctx.index != state.get("next", 0):
        raise ValueError(
            f"alti-rollout must see decoder layers in order from 0; got layer {ctx.index} "
            f"after {state.get('next', 0) - 1}"
        )
    if "encoder" not in state:
        contribs = []
        for k in range(m.n_encoder_layers):
            inp, blk = m.self_attention("encoder", k)
            c = alti_block(
                inp.alpha * _key_mask(m.src_mask, inp.alpha),
                inp.x,
                inp.residual,
                inp.attn_out,
                blk,
                self_attention=True,
            )
            contribs.append(_rows(c, m.src_mask))
        state["encoder"] = rollout_encoder(contribs)
    inp, blk = m.self_attention("decoder", ctx.index)
    c_self = alti_block(
        inp.alpha * _key_mask(m.tgt_mask, inp.alpha), inp.x, inp.residual, inp.attn_out, blk, self_attention=True
    )
    cross = _rows(ctx.alti(), m.tgt_mask)
    state["prev"] = rollout_decoder_step(state.get("prev"), cross, _rows(c_self, m.tgt_mask), state["encoder"])
    state["next"] = ctx.index + 1
    return {"alti-rollout": state["prev"][..., : ctx.alpha.shape[-1]]}


def _learned(ctx: LayerContext) -> dict[str, Tensor]:
    head = ctx.model.alignment_layer
    if head is None:
        raise ValueError(
            "method learned needs an alignment layer trained for this model (align-train), and none is attached"
        )
    if ctx.index != head.layer:
        raise ValueError(
            f"method learned: the alignment layer reads decoder layer {head.layer}, where it was trained; "
            f"asked for layer {ctx.index}"
        )
    return {"learned": head_scores(head, ctx.inputs, ctx.layer, ctx.src_mask)}


def _key_mask(mask: Tensor | None, alpha: Tensor) -> Tensor | float:
    return 1.0 if mask is None else mask[:, None, None, :].to(alpha.dtype)


def _rows(c: Tensor, mask: Tensor | None) -> Tensor:
    """Zero the rows of padded query positions (their values are meaningless)."""
    return c if mask is None else c * mask[..., None].to(c.dtype)


def _norm(ctx: LayerContext) -> dict[str, Tensor]:
    return {"norm": score_norm(ctx.alpha, ctx.gram())}


def _norm_head(ctx: LayerContext) -> dict[str, Tensor]:
    return {"norm-head": score_norm_head(ctx.alpha, ctx.gram())}


def _value_zeroing(ctx: LayerContext) -> dict[str, Tensor]:
    i = ctx.inputs
    return {"value-zeroing": value_zeroing(ctx.alpha, i.x, i.residual, i.attn_out, ctx.layer)}


_K20, _K21, _K23 = (
    "Kobayashi et al. 2020, Attention is Not Only a Weight",
    "Kobayashi et al. 2021, Incorporating Residual and Normalization Layers",
    "Kobayashi et al. 2023, Analyzing Feed-Forward Blocks",
)
register(
    Method("attn", "attention weights, mean over heads", frozenset({"alpha"}), lambda c: {"attn": score_attn(c.alpha)})
)
register(
    Method(
        "attn-head", "attention weights per head", frozenset({"alpha"}), lambda c: {"attn-head": c.alpha}, per_head=True
    )
)
register(Method("norm", "||sum_h alpha f^h(x)||", frozenset({"alpha", "gram"}), _norm, cite=_K20))
register(
    Method("norm-head", "||alpha f^h(x)|| per head", frozenset({"alpha", "gram"}), _norm_head, per_head=True, cite=_K20)
)
register(
    Method(
        "attn-res-ln",
        "attention + residual + LayerNorm block, source vectors' norms",
        frozenset({"alpha", "gram-folded"}),
        _block,
        cite=_K21,
    )
)
register(
    Method(
        "attn-res-ln-ff",
        "the whole decoder layer: attention block, then FF block by integrated gradients, residual and LayerNorm",
        frozenset({"alpha", "block", "ff"}),
        _block_ff,
        cite=_K23,
    )
)
register(
    Method(
        "alti",
        "ALTI+ cross-attention contributions: max(0, ||y||_1 - ||y - T(x_j)||_1), normalised",
        frozenset({"alpha", "block"}),
        _alti,
        cite="Ferrando, Gállego, Alastruey, Escolano, Costa-jussà, EMNLP 2022",
    )
)
register(
    Method(
        "alti-rollout",
        "full ALTI+: cross-attention contributions rolled out through the encoder's and the decoder's self-attention",
        frozenset({"alpha", "block", "self-attention", "previous-layers"}),
        _alti_rollout,
        cite="Ferrando, Gállego, Alastruey, Escolano, Costa-jussà, EMNLP 2022",
    )
)
register(
    Method(
        "value-zeroing",
        "1 - cos(layer output with source j's values zeroed, real output)",
        frozenset({"alpha", "block", "ff"}),
        _value_zeroing,
        cite="Mohebbi, Zuidema, Chrupała, Alishahi, EACL 2023",
    )
)
register(
    Method(
        "learned",
        "an alignment layer trained on the model's own both-direction alignments (align-train; no gold), "
        "one decoder layer's states attending to the encoder output",
        frozenset({"alignment-layer"}),
        _learned,
        cite="after Shift-AET: Chen, Sun, Zhang, Zhou, Liu, EMNLP 2020",
    )
)


def layer_scores(
    inputs: LayerInputs,
    layer: CrossAttentionLayer,
    methods: Collection[str],
    src_mask: Tensor | None = None,
    tgt_mask: Tensor | None = None,
    index: int = 0,
    model: ModelContext | None = None,
    ctx: LayerContext | None = None,
) -> dict[str, Tensor]:
    """Every requested method for one layer: name -> (B, T, S), or (B, H, T, S) per head.

    ``src_mask`` (B, S) and ``tgt_mask`` (B, T) are True on real tokens; padded target rows score 0.
    Block methods also yield ``NAME:mixing`` (B, T).
    """
    check_methods(methods)
    ctx = ctx or LayerContext(inputs, layer, index, src_mask, tgt_mask, model)
    ctx.wanted = needs(methods)
    out: dict[str, Tensor] = {}
    for m in methods:
        out.update(METHODS[m].compute(ctx))
    if tgt_mask is not None:
        for k, v in out.items():
            real = tgt_mask.to(v.dtype)
            out[k] = v * (real[:, None, :, None] if v.dim() == 4 else real[..., None] if v.dim() == 3 else real)
    return out


def describe() -> str:
    """One line per method: name, per-head flag, needs, source."""
    return "\n".join(
        f"{m.name:<15} {'per head ' if m.per_head else ''}{m.description}" + (f" ({m.cite})" if m.cite else "")
        for m in METHODS.values()
    )
