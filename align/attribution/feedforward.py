"""The feed-forward block carried into the attribution (Kobayashi et al. 2023, "Analyzing Feed-Forward Blocks
in Transformers through the Lens of Attention Maps"; torch only): the FF block's activation linearised per
token by integrated gradients (``ff_gates``, ``ff_shares``), the whole layer decomposed (``decompose_layer``)
and scored (``score_attn_res_ln_ff``). Shapes as in :mod:`.norms`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from .norms import (
    BlockScores,
    CrossAttentionLayer,
    _f32,
    _ln_linear,
    decompose_block,
    ln_scale,
    value_vectors,
)


def _relu_gate(z: Tensor) -> Tensor:
    return (z > 0).to(z.dtype)


def _gelu_gate(z: Tensor) -> Tensor:
    return 0.5 * (1.0 + torch.erf(z * 0.5**0.5))  # GELU(z) = z Phi(z)


def _gelu_tanh(z: Tensor) -> Tensor:
    return torch.nn.functional.gelu(z, approximate="tanh")


def _gelu_tanh_gate(z: Tensor) -> Tensor:
    return 0.5 * (1.0 + torch.tanh((2 / torch.pi) ** 0.5 * (z + 0.044715 * z**3)))


ACTIVATIONS: dict[str, tuple[Callable[[Tensor], Tensor], Callable[[Tensor], Tensor]]] = {
    "relu": (torch.relu, _relu_gate),
    "gelu": (torch.nn.functional.gelu, _gelu_gate),
    "gelu_new": (_gelu_tanh, _gelu_tanh_gate),
    "gelu_accurate": (_gelu_tanh, _gelu_tanh_gate),
    "gelu_pytorch_tanh": (_gelu_tanh, _gelu_tanh_gate),
    "silu": (torch.nn.functional.silu, torch.sigmoid),  # SiLU(z) = z sigmoid(z)
    "swish": (torch.nn.functional.silu, torch.sigmoid),
}
"""FF activations by the names fairseq and Hugging Face configs use: ``(g, gate)`` with
``g(z) = z * gate(z)`` for every z. The gate is ``g(z) / z``, the integrated gradient of ``g`` from
the zero baseline per neuron (``ff_gates``); at ``z = 0`` it is the limit ``g'(0)`` (ReLU: 0, as
torch's ReLU gradient there)."""


def activation_name(fn: Any) -> str:
    """The ``ACTIVATIONS`` name of an activation module or function (fairseq stores functions,
    Hugging Face ``ACT2FN`` modules); ValueError listing the valid names otherwise."""
    if isinstance(fn, str):
        name = fn
    elif fn in (torch.relu, torch.nn.functional.relu) or isinstance(fn, torch.nn.ReLU):
        name = "relu"
    elif isinstance(fn, torch.nn.SiLU) or fn is torch.nn.functional.silu:
        name = "silu"
    elif isinstance(fn, torch.nn.GELU):
        name = "gelu" if fn.approximate == "none" else "gelu_new"
    else:
        name = getattr(fn, "__name__", type(fn).__name__)
        name = {
            "GELUActivation": "gelu",
            "NewGELUActivation": "gelu_new",
            "SiLUActivation": "silu",
            "PytorchGELUTanh": "gelu_new",
            "GELUTanh": "gelu_new",
        }.get(name, name)
    if name not in ACTIVATIONS:
        raise ValueError(f"unsupported FF activation {name!r}; valid: {', '.join(ACTIVATIONS)}")
    return name


@dataclass(eq=False)
class FeedForwardBlock:
    """The decoder layer's feed-forward block: post-LN ``LN(y + W2 act(W1 y + b1) + b2)``, pre-LN
    ``y + W2 act(W1 LN(y) + b1) + b2``.

    Weights in torch Linear layout: ``fc1_weight`` (F, D), ``fc2_weight`` (D, F); float32.
    """

    fc1_weight: Tensor
    fc1_bias: Tensor | None
    fc2_weight: Tensor
    fc2_bias: Tensor | None
    activation: str
    ln_weight: Tensor | None = None
    ln_bias: Tensor | None = None
    ln_eps: float = 1e-5
    normalize_before: bool = False

    def __post_init__(self) -> None:
        self.activation = activation_name(self.activation)

    @classmethod
    def from_modules(cls, fc1: Any, fc2: Any, activation: Any, ln: Any, normalize_before: bool) -> FeedForwardBlock:
        """Read fc1/fc2 Linear layers, an activation (name, function or module) and the block's LayerNorm."""
        return cls(
            _f32(fc1.weight),
            _f32(fc1.bias),
            _f32(fc2.weight),
            _f32(fc2.bias),
            activation_name(activation),
            _f32(getattr(ln, "weight", None)),
            _f32(getattr(ln, "bias", None)),
            float(getattr(ln, "eps", 1e-5)),
            bool(normalize_before),
        )

    @classmethod
    def from_fairseq(cls, layer: Any) -> FeedForwardBlock | None:
        """Read fc1, fc2, the activation and final_layer_norm of a fairseq decoder layer (None if absent)."""
        if not all(hasattr(layer, a) for a in ("fc1", "fc2", "final_layer_norm", "activation_fn")):
            return None
        return cls.from_modules(
            layer.fc1, layer.fc2, layer.activation_fn, layer.final_layer_norm, layer.normalize_before
        )

    def forward(self, y: Tensor) -> Tensor:
        """``W2 act(W1 y + b1) + b2``: (..., D) -> (..., D)."""
        h = torch.nn.functional.linear(y, self.fc1_weight, self.fc1_bias)
        return torch.nn.functional.linear(ACTIVATIONS[self.activation][0](h), self.fc2_weight, self.fc2_bias)

    def ln(self, z: Tensor) -> Tensor:
        """The block's LayerNorm: (..., D) -> (..., D)."""
        return torch.nn.functional.layer_norm(z, z.shape[-1:], self.ln_weight, self.ln_bias, self.ln_eps)

    def block(self, y: Tensor) -> Tensor:
        """The whole FF block with its residual and LayerNorm: (..., D) -> (..., D)."""
        if self.normalize_before:
            return y + self.forward(self.ln(y))
        return self.ln(y + self.forward(y))


def ff_gates(u: Tensor, ff: FeedForwardBlock) -> Tensor:
    """Integrated-gradient gates of the FF activation: u (B, T, D) the FF input -> (B, T, F).

    Kobayashi et al. (2023, arXiv 2302.00456, Sec. 4) apply integrated gradients to the activation
    ``g`` alone, over its input ``z = W1 u + b1 = sum_k W1 v_k + b1`` (``u = sum_k v_k`` the parts),
    from the zero baseline (their Eq. 12): part ``k`` receives ``W1 v_k * int_0^1 g'(a z) da``
    per neuron. ``g`` acts element-wise, so the integral is exact, ``(g(z) - g(0)) / z = g(z) / z``
    (``g(0) = 0`` for ReLU, GELU and SiLU): the gate of neuron f is ``g(z_f) / z_f``, no steps are
    taken, and ReLU's gate is exactly ``1[z > 0]``. ``b1`` is a part of its own.
    """
    z = torch.nn.functional.linear(u, ff.fc1_weight, ff.fc1_bias)
    return ACTIVATIONS[ff.activation][1](z)


def ff_shares(parts: Tensor, ff: FeedForwardBlock) -> tuple[Tensor, Tensor]:
    """``FF(u)`` attributed to the parts of its input ``u = parts.sum(-2)``: parts (..., K, D) ->
    shares (..., K, D), ``W2 (G * W1 v_k)`` each, and the bias share (..., D), ``W2 (G * b1) + b2``,
    with ``G = ff_gates(u)``; shares and bias add up to ``FF(u)`` exactly (Kobayashi et al. 2023)."""
    g = ff_gates(parts.sum(-2), ff)  # (..., F)
    shares = torch.nn.functional.linear(
        torch.nn.functional.linear(parts, ff.fc1_weight) * g.unsqueeze(-2), ff.fc2_weight
    )
    bias = (
        torch.nn.functional.linear(g * ff.fc1_bias, ff.fc2_weight)
        if ff.fc1_bias is not None
        else g.new_zeros(*g.shape[:-1], ff.fc2_weight.shape[0])
    )
    return shares, (bias + ff.fc2_bias if ff.fc2_bias is not None else bias)


@dataclass(frozen=True)
class LayerDecomposition:
    """Whole decoder layer (cross-attention block + FF block) per token: ``source`` (B, T, S, D),
    ``residual`` (B, T, D), ``bias`` (B, T, D); they add up to the layer output."""

    source: Tensor
    residual: Tensor
    bias: Tensor


def decompose_layer(
    alpha: Tensor, x: Tensor, residual: Tensor, attn_out: Tensor, layer: CrossAttentionLayer
) -> LayerDecomposition:
    """Carry the attention block's per-token vectors through the FF block (Kobayashi et al. 2023).

    After the attention block, ``y_i = sum_j p_ij + r_i + c_i`` (source, residual and bias parts,
    ``decompose_block``). ``FF(u) = W2 g(W1 u + b1) + b2`` is attributed to the parts of its input
    ``u`` by integrated gradients over the activation (``ff_gates``, the paper's Eq. 12): part
    ``v`` receives ``A(v) = W2 (G_i * W1 v)`` with ``G_i = g(z_i) / z_i``; ``W2 (G_i * b1) + b2``
    joins the bias. The parts add up to ``FF(u)`` exactly.
    Post-LN: ``LN(y + FF(y)) = sum_k L(v_k + A(v_k)) / s_i + ...`` as in ``decompose_block``.
    Pre-LN: the FF input is ``u = LN(y) = sum_k L(v_k) / s_i + beta`` (beta joins the bias), and the
    output ``y + FF(u) = sum_k (v_k + A(L(v_k) / s_i)) + ...`` is not normalized.
    Shapes: source (B, T, S, D), residual and bias (B, T, D). Materializes (B, T, S, D) and
    (T, S, F) per sentence: alignment-sized inputs.
    """
    ff = layer.ff
    if ff is None:
        raise ValueError("the layer has no feed-forward block to decompose")
    f = value_vectors(x, layer)
    src, res, bias = decompose_block(alpha, f, residual, attn_out, layer)  # parts of the block output y
    y = src.sum(2) + res + bias
    ln_weight = ff.ln_weight

    def lin(v: Tensor) -> Tensor:
        return _ln_linear(v, ln_weight)

    beta = ff.ln_bias if ff.ln_bias is not None else 0
    if ff.normalize_before:
        s2 = ln_scale(y, ff.ln_eps)[..., None]
        u_src, u_res, u_bias = lin(src) / s2.unsqueeze(-1), lin(res) / s2, lin(bias) / s2 + beta
    else:
        u_src, u_res, u_bias = src, res, bias
    S = src.shape[2]
    parts = torch.cat([u_src, u_res.unsqueeze(2), u_bias.unsqueeze(2)], dim=2)  # (B, T, S + 2, D)
    # one sentence at a time keeps the (T, S, F) intermediate bounded
    shares, ff_bias = (torch.cat(x) for x in zip(*(ff_shares(parts[b : b + 1], ff) for b in range(parts.shape[0]))))
    src_out, res_out, bias_out = shares[:, :, :S], shares[:, :, S], shares[:, :, S + 1] + ff_bias
    if ff.normalize_before:
        return LayerDecomposition(src + src_out, res + res_out, bias + bias_out)
    s3 = ln_scale(y + ff.forward(y), ff.ln_eps)[..., None]  # LN3 scale of the real FF-block sum
    return LayerDecomposition(
        lin(src + src_out) / s3.unsqueeze(-1), lin(res + res_out) / s3, lin(bias + bias_out) / s3 + beta
    )


def score_attn_res_ln_ff(
    alpha: Tensor, x: Tensor, residual: Tensor, attn_out: Tensor, layer: CrossAttentionLayer
) -> BlockScores:
    """Whole-layer attribution (attention, residual, LN, FF by integrated gradients over its
    activation, residual, LN): source (B, T, S), residual (B, T) and mixing (B, T) as in
    ``score_attn_res_ln`` (Kobayashi et al. 2023)."""
    d = decompose_layer(alpha, x, residual, attn_out, layer)
    src = d.source.norm(dim=-1)
    res = d.residual.norm(dim=-1)
    mixed = d.source.sum(2).norm(dim=-1)
    denom = mixed + res
    mixing = torch.where(denom > 0, mixed / denom.clamp_min(1e-30), torch.zeros_like(denom))
    return BlockScores(src, res, mixing)
