"""Norm-based source attribution for one encoder-decoder cross-attention layer (torch only).

Shapes: ``B`` batch, ``H`` heads, ``T`` target positions, ``S`` source positions, ``D`` model
width, ``d = D / H``. Score tensors are ``(B, T, S)`` (or ``(B, H, T, S)`` per head): target first,
as everywhere in this toolkit.

Cross-attention output at target position i (fairseq's MultiheadAttention):
``attn_i = sum_h sum_j alpha^h_ij f^h(x_j) + b_O`` with ``f^h(x) = (x W_V^h + b_V^h) W_O^h``.
Kobayashi et al. (2020) score source j by ``||alpha^h_ij f^h(x_j)||`` (``norm-head``) or
``||sum_h alpha^h_ij f^h(x_j)||`` (``norm``); ``b_V`` belongs to ``f`` as in the paper, ``b_O``
(the same for every source token) to no token.

The layer-level norm never materializes the ``(B, H, T, S, D)`` vectors: with the Gram matrix
``G_j[h, h'] = <f^h(x_j), f^h'(x_j)>`` (``(B, S, H, H)``), ``||sum_h a_h f^h||^2 = a^T G_j a``, so
the cost is ``O(T S H^2)`` on top of ``O(S D^2)`` for the Gram matrices, instead of ``O(T S H D)``.
The Gram matrices themselves come from the value projections ``v`` and a per-layer ``W_O^T W_O``
(``value_gram``), so not even the ``(B, H, S, D)`` vectors ``f`` are formed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

import torch
from torch import Tensor

if TYPE_CHECKING:
    from .feedforward import FeedForwardBlock


@dataclass(eq=False)
class CrossAttentionLayer:
    """Weights of one cross-attention block: value and output projections (torch Linear layout,
    ``weight`` is ``(out, in)``), head count, and the block's LayerNorm.

    ``normalize_before`` False is post-LN (fairseq's default: ``LN(y + attn)``); True is pre-LN
    (``y + attn(LN(y))``; the block output is not normalized).
    """

    v_weight: Tensor  # (D, D)
    v_bias: Tensor | None  # (D,)
    out_weight: Tensor  # (D, D)
    out_bias: Tensor | None  # (D,)
    num_heads: int
    ln_weight: Tensor | None = None  # (D,)
    ln_bias: Tensor | None = None  # (D,)
    ln_eps: float = 1e-5
    normalize_before: bool = False
    ff: FeedForwardBlock | None = None
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def gram_weight(self, folded: bool = False) -> Tensor:
        """``W^T W`` (D, D) for ``W = W_O`` (or ``ln_out_weight`` when ``folded``), cached per layer:
        ``<f^h(x), f^k(x)> = v^h (W^T W)[h, k] v^k`` needs no per-token output vector."""
        version = (self.out_weight._version, None if self.ln_weight is None else self.ln_weight._version)
        hit = self._cache.get(folded)
        if hit is None or hit[0] != version:  # in-place weight updates bump _version
            w = ln_out_weight(self) if folded else self.out_weight
            hit = self._cache[folded] = (version, (w.T @ w).detach())
        return hit[1]

    def gram_weights(self, folds: tuple[bool, ...]) -> Tensor:
        """The rows of ``gram_weight(f)`` grouped by head, side by side for each f of ``folds``:
        (H, D / H, len(folds) * D), cached."""
        parts = [self.gram_weight(f) for f in folds]
        key = ("stack", folds)
        hit = self._cache.get(key)
        if hit is None or any(a is not b for a, b in zip(hit[0], parts)):  # rebuilt when a part was
            H, D = self.num_heads, parts[0].shape[0]
            hit = self._cache[key] = (parts, torch.cat([p.view(H, D // H, D) for p in parts], dim=-1))
        return hit[1]

    @classmethod
    def from_modules(
        cls, attn: Any, ln: Any, normalize_before: bool, ff: FeedForwardBlock | None = None
    ) -> CrossAttentionLayer:
        """Read an attention module with ``v_proj``/``out_proj`` Linear layers and ``num_heads`` (fairseq,
        Hugging Face) and its LayerNorm; weights are kept in float32 (scores are computed in float32
        whatever the model's dtype), on the module's device."""
        heads = getattr(attn, "num_heads", None) or getattr(getattr(attn, "config", None), "num_attention_heads", None)
        if heads is None:
            raise ValueError(f"{type(attn).__name__} has no num_heads: cannot split its value vectors by head")
        return cls(
            _f32(attn.v_proj.weight),
            _f32(attn.v_proj.bias),
            _f32(attn.out_proj.weight),
            _f32(attn.out_proj.bias),
            int(heads),
            _f32(getattr(ln, "weight", None)),
            _f32(getattr(ln, "bias", None)),
            float(getattr(ln, "eps", 1e-5)),
            bool(normalize_before),
            ff,
        )

    @classmethod
    def from_fairseq(cls, layer: Any) -> CrossAttentionLayer:
        """Read a fairseq ``TransformerDecoderLayer`` (duck-typed: no fairseq import here)."""
        return cls.from_modules(
            layer.encoder_attn,
            layer.encoder_attn_layer_norm,
            layer.normalize_before,
            _feedforward().FeedForwardBlock.from_fairseq(layer),
        )


AttentionBlock = CrossAttentionLayer
"""The same weights serve self-attention blocks (ALTI+ rollouts)."""


@overload
def _f32(t: Tensor) -> Tensor: ...
@overload
def _f32(t: None) -> None: ...
def _f32(t: Tensor | None) -> Tensor | None:
    """A float32 view of a parameter, detached (no copy when it already is float32)."""
    if t is None:
        return None
    t = t.detach()
    return t if t.dtype == torch.float32 else t.float()


def value_vectors(x: Tensor, layer: CrossAttentionLayer, out_weight: Tensor | None = None) -> Tensor:
    """``f^h(x_j)`` for every head and source token: x (B, S, D) -> (B, H, S, D).

    The result is a view of a ``(B, S, H, D)`` tensor, the layout the Gram products want. The
    heads' output products run as one ``bmm`` over all (batch, source) rows, so no weight is
    copied per sentence. ``out_weight`` replaces ``W_O`` (see ``score_attn_res_ln``).
    """
    B, S, D = x.shape
    H = layer.num_heads
    w = layer.out_weight if out_weight is None else out_weight
    v = torch.nn.functional.linear(x, layer.v_weight, layer.v_bias)  # (B, S, D)
    v = v.reshape(B * S, H, D // H).transpose(0, 1)  # (H, B*S, d)
    w_o = w.view(w.shape[0], H, D // H).permute(1, 2, 0)  # (H, d, D_out)
    f = torch.bmm(v, w_o)  # (H, B*S, D_out)
    return f.transpose(0, 1).contiguous().view(B, S, H, -1).transpose(1, 2)


def values(x: Tensor, layer: CrossAttentionLayer) -> Tensor:
    """Value projections of all heads, ``x W_V + b_V``: (B, S, D) -> (B, S, D)."""
    return torch.nn.functional.linear(x, layer.v_weight, layer.v_bias)


def value_gram(x: Tensor, layer: CrossAttentionLayer, folded: bool = False, v: Tensor | None = None) -> Tensor:
    """Gram matrix of the head vectors per source token, ``G_j[h, k] = <f^h(x_j), f^k(x_j)>``:
    x (B, S, D) -> (B, S, H, H). ``folded`` uses the post-LN LayerNorm's centring and gain
    folded into ``W_O`` (for ``attn-res-ln``). ``v`` reuses ``values(x, layer)``. Cost
    ``O(S D^2)``; ``f`` is never formed.
    """
    return value_grams(x, layer, (folded,), v)[0]


# Source tokens per step of value_grams: its (H, chunk, D) intermediate then stays in the CPU cache
# (128 x 512 floats x 8 heads = 2 MB); 3x faster than one pass over all tokens at opus-mt size.
GRAM_CHUNK = 128


def value_grams(
    x: Tensor, layer: CrossAttentionLayer, folds: tuple[bool, ...] = (False, True), v: Tensor | None = None
) -> tuple[Tensor, ...]:
    """``value_gram`` for each entry of ``folds`` from one pass over the value vectors (post-LN
    ``norm`` and ``attn-res-ln`` need both): x (B, S, D) -> a (B, S, H, H) per entry."""
    B, S, D = x.shape
    H = layer.num_heads
    d = D // H
    n = B * S
    nf = len(folds)
    v = (values(x, layer) if v is None else v).reshape(n, D)  # (N, D)
    q = layer.gram_weights(tuple(folds))  # (H, d, nf * D)
    vt = v.view(n, H, d).transpose(0, 1)  # (H, N, d)
    out = v.new_empty(n, H, nf, H)
    for s in range(0, n, GRAM_CHUNK):
        e = min(n, s + GRAM_CHUNK)
        w = torch.bmm(vt[:, s:e], q)  # (H, c, nf D): w[h, n] = v^h_n (W^T W)[h, :]
        # g[h, n, f, k] = v^h (W^T W)[h, k] v^k; the chunk keeps the product tensor cache-sized
        g = torch.linalg.vecdot(w.view(H, e - s, nf, H, d), v[s:e].view(1, e - s, 1, H, d))
        out[s:e] = g.permute(1, 0, 2, 3)
    return tuple(out[:, :, i].reshape(B, S, H, H) for i in range(nf))


def value_norms(gram: Tensor) -> Tensor:
    """``||f^h(x_j)||`` per head and source token, from ``value_gram``: (B, S, H, H) -> (B, H, S)."""
    return torch.diagonal(gram, dim1=-2, dim2=-1).clamp_min(0).sqrt().transpose(1, 2)


def _quad_norm(alpha: Tensor, gram: Tensor) -> Tensor:
    """``sqrt(a^T G_j a)`` for a = alpha[:, :, i, j]: alpha (B, H, T, S), gram (B, S, H, H) -> (B, T, S)."""
    a = alpha.permute(0, 3, 2, 1)  # (B, S, T, H)
    sq = ((a @ gram) * a).sum(-1)  # (B, S, T): one (T, H) x (H, H) product per source token
    # Rounding can make a tiny square negative; a norm is never below 0.
    return sq.clamp_min(0).sqrt().transpose(1, 2)


def score_attn(alpha: Tensor) -> Tensor:
    """Attention weights averaged over heads (the baseline): (B, H, T, S) -> (B, T, S)."""
    return alpha.mean(dim=1)


def score_norm_head(alpha: Tensor, gram: Tensor) -> Tensor:
    """``||alpha^h_ij f^h(x_j)|| = alpha^h_ij ||f^h(x_j)||`` (alpha >= 0): alpha (B, H, T, S), gram
    (B, S, H, H) -> (B, H, T, S) (Kobayashi et al. 2020)."""
    return alpha * value_norms(gram).unsqueeze(2)


def score_norm(alpha: Tensor, gram: Tensor) -> Tensor:
    """``||sum_h alpha^h_ij f^h(x_j)||``: alpha (B, H, T, S), gram (B, S, H, H) -> (B, T, S) (Kobayashi et al. 2020)."""
    return _quad_norm(alpha, gram)


def _ln_linear(v: Tensor, weight: Tensor | None) -> Tensor:
    """The linear part of LayerNorm before the 1/std scaling: centre over D, times the gain."""
    v = v - v.mean(dim=-1, keepdim=True)
    return v * weight if weight is not None else v


def ln_out_weight(layer: CrossAttentionLayer) -> Tensor:
    """``W_O`` with the post-LN LayerNorm's centring and gain folded in: ``L(v W_O^T) = v (L W_O)^T``, (D, D)."""
    w = layer.out_weight - layer.out_weight.mean(dim=0, keepdim=True)
    return w * layer.ln_weight[:, None] if layer.ln_weight is not None else w


def ln_scale(z: Tensor, eps: float) -> Tensor:
    """LayerNorm's per-position scale ``sqrt(var(z) + eps)``: (..., D) -> (...)."""
    # two passes by hand: torch.var's single-threaded CPU kernel is 6x slower at (B, T, 512)
    c = z - z.mean(dim=-1, keepdim=True)
    return ((c * c).mean(dim=-1) + eps).sqrt()


@dataclass(frozen=True)
class BlockScores:
    """Attention-block attribution: ``source`` (B, T, S) norms of each source token's vector,
    ``residual`` (B, T) the norm of the target-side residual's vector, ``mixing`` (B, T) the
    source share ``||sum_j s_ij|| / (||sum_j s_ij|| + ||r_i||)``."""

    source: Tensor
    residual: Tensor
    mixing: Tensor


def score_attn_res_ln(
    alpha: Tensor, gram: Tensor, residual: Tensor, attn_out: Tensor, layer: CrossAttentionLayer
) -> BlockScores:
    """Attention block (attention + residual + LayerNorm) decomposed per token (Kobayashi et al. 2021).

    alpha (B, H, T, S), residual y (B, T, D), attn_out (B, T, D) the attention output with
    ``b_O`` (what is added to the residual). ``gram`` (B, S, H, H) must be
    ``value_gram(x, layer, folded=True)`` for post-LN layers (the LayerNorm's centring and gain
    folded into ``W_O``) and ``value_gram(x, layer)`` for pre-LN ones.

    Post-LN: ``LN(y_i + sum_j z_ij + b_O) = sum_j L(z_ij) / s_i + L(y_i) / s_i + L(b_O) / s_i + beta``
    with ``z_ij = sum_h alpha^h_ij f^h(x_j)``, ``L`` the centring and gain (linear), and ``s_i`` the
    LayerNorm scale of the real pre-LN sum, so the parts add up exactly to the block output. The
    bias parts ``L(b_O) / s_i + beta`` belong to no token and are left out of both scores.
    L is linear, so ``L(f^h(x)) = v^h (L W_O^h)``: the source norms come from the Gram matrix of
    value vectors made with the folded weight, as in ``norm``.

    Pre-LN: the block output ``y_i + sum_j z_ij + b_O`` is not normalized (the LayerNorm acts on
    the query, which moves alpha but no value vector), so the source vector is ``z_ij`` itself and
    the residual vector is ``y_i``.
    """
    if layer.normalize_before:
        src = _quad_norm(alpha, gram)
        mixed = attn_out - (layer.out_bias if layer.out_bias is not None else 0)
        res = residual.norm(dim=-1)
    else:
        scale = ln_scale(residual + attn_out, layer.ln_eps)  # (B, T)
        src = _quad_norm(alpha, gram) / scale.unsqueeze(-1)
        # sum_j z_ij = attn_out - b_O; L is linear so sum_j L(z_ij) = L(attn_out - b_O).
        # without b_O the attention output is sum_j z_ij already (a (D,) zero bias, never (B,))
        mixed = _ln_linear(attn_out - (layer.out_bias if layer.out_bias is not None else 0), layer.ln_weight)
        mixed = mixed / scale.unsqueeze(-1)
        res = (_ln_linear(residual, layer.ln_weight) / scale.unsqueeze(-1)).norm(dim=-1)
    mixed_norm = mixed.norm(dim=-1)
    denom = mixed_norm + res
    mixing = torch.where(denom > 0, mixed_norm / denom.clamp_min(1e-30), torch.zeros_like(denom))
    return BlockScores(src, res, mixing)


def decompose_block(
    alpha: Tensor, f: Tensor, residual: Tensor, attn_out: Tensor, layer: CrossAttentionLayer
) -> tuple[Tensor, Tensor, Tensor]:
    """The literal decomposition, for checks: per-source vectors (B, T, S, D), residual vector
    (B, T, D) and the bias vector (B, T, D) whose sum is the block output (post-LN: after the LN).

    Materializes ``(B, T, S, D)``: use on small inputs only.
    """
    z = torch.einsum("bhts,bhsd->btsd", alpha, f)
    b_o = layer.out_bias if layer.out_bias is not None else f.new_zeros(f.shape[-1])
    if layer.normalize_before:
        return z, residual, b_o.expand_as(residual)
    scale = ln_scale(residual + attn_out, layer.ln_eps)[..., None]
    src = _ln_linear(z, layer.ln_weight) / scale.unsqueeze(-1)
    res = _ln_linear(residual, layer.ln_weight) / scale
    beta = layer.ln_bias if layer.ln_bias is not None else 0
    bias = _ln_linear(b_o.expand_as(residual), layer.ln_weight) / scale + beta
    return src, res, bias


@dataclass(frozen=True)
class LayerInputs:
    """What one decoder layer's cross-attention saw: alpha (B, H, T, S) (0 on padded sources),
    encoder output x (B, S, D), residual y (B, T, D) and attention output (B, T, D); ``v`` (B, S, D)
    the value projections ``x W_V + b_V`` the model computed itself, when it ran in float32 (else
    None, and they are recomputed in float32 from x); ``query`` (B, T, D) what the attention read as
    queries (pre-LN: the residual stream LayerNorm'd), when recorded, in the model's dtype."""

    alpha: Tensor
    x: Tensor
    residual: Tensor
    attn_out: Tensor
    v: Tensor | None = None
    query: Tensor | None = None


def _feedforward() -> Any:
    """:mod:`.feedforward`, which builds on this module (imported when a fairseq layer is read)."""
    from . import feedforward

    return feedforward
