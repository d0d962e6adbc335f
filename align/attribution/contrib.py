"""ALTI+ and value zeroing for encoder-decoder attention blocks (torch only).

Shapes as in :mod:`align.attribution.norms`: ``B`` batch, ``H`` heads, ``T`` query positions, ``S`` key
positions, ``D`` model width; scores are ``(B, T, S)``, target first.

- ALTI (Ferrando, Gállego, Costa-jussà 2022) and ALTI+ (Ferrando, Gállego, Alastruey, Escolano,
  Costa-jussà, EMNLP 2022): decompose an attention block's output ``y_i`` into one vector per input
  token ``T_i(x_j)`` (as ``attn-res-ln`` does, residual included) and score
  ``c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1)``, normalised over j (the authors' ``l1`` /
  ``min_sum``, github mt-upc/transformer-contributions-nmt). The cross-attention block keeps the
  residual as its own last column; a self-attention block adds it to the token itself. ALTI+ rolls
  contributions out through the encoder's and the decoder's self-attention.
  One deliberate difference from the authors' code: the LayerNorm scale is the exact one
  (``sqrt(var + eps)``, biased variance, as LayerNorm computes it), not ``std(x + eps)``; so the
  decomposition adds up to the real block output.
- Value zeroing (Mohebbi, Zuidema, Chrupała, Alishahi, EACL 2023): zero source token j's value
  vectors in the cross-attention, finish the decoder layer, and score ``1 - cos(new, real)``. The
  attention output is linear in the values, so zeroing token j subtracts
  ``z_ij = sum_h alpha^h_ij f^h(x_j)`` from it; only the rest of the layer is rerun. Convention:
  the decoder layer's own output at every layer, the last one included; the decoder stack's final
  LayerNorm of pre-LN models (which inseq includes at the last layer, reading ``hidden_states``)
  belongs to the output projection and is not applied.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .norms import CrossAttentionLayer, decompose_block, value_vectors

# Rows of (T, S, D) vectors materialized at once: bounds memory on long sentences.
_CHUNK = 1 << 22


def _block_vectors(
    alpha: Tensor, x: Tensor, residual: Tensor, attn_out: Tensor, layer: CrossAttentionLayer
) -> tuple[Tensor, Tensor, Tensor]:
    """One sentence's block parts: source vectors (1, T, S, D), residual (1, T, D), real output (1, T, D)."""
    f = value_vectors(x, layer)
    src, res, bias = decompose_block(alpha, f, residual, attn_out, layer)
    return src, res, src.sum(2) + res + bias


def alti_contributions(vectors: Tensor, output: Tensor) -> Tensor:
    """``max(0, ||y_i||_1 - ||y_i - v_ij||_1)`` normalised over j: vectors (B, T, S, D), output
    (B, T, D) -> (B, T, S); a row of zeros stays zero (Ferrando et al. 2022, ``l1`` / ``min_sum``)."""
    c = (output.abs().sum(-1, keepdim=True) - (output.unsqueeze(2) - vectors).abs().sum(-1)).clamp_min(0)
    total = c.sum(-1, keepdim=True)
    return torch.where(total > 0, c / total.clamp_min(1e-30), torch.zeros_like(c))


def alti_block(
    alpha: Tensor,
    x: Tensor,
    residual: Tensor,
    attn_out: Tensor,
    layer: CrossAttentionLayer,
    self_attention: bool = False,
) -> Tensor:
    """ALTI contributions of one attention block, rows summing to 1.

    alpha (B, H, T, S) (0 on padded keys), x (B, S, D) the key/value input, residual (B, T, D),
    attn_out (B, T, D) with the output bias. Cross-attention: (B, T, S + 1), the sources then the
    residual; self-attention (S = T): (B, T, T), the residual added to the token itself.
    """
    rows = []
    for b in range(alpha.shape[0]):  # one sentence at a time: (T, S, D) vectors
        src, res, out = _block_vectors(alpha[b : b + 1], x[b : b + 1], residual[b : b + 1], attn_out[b : b + 1], layer)
        if self_attention:
            idx = torch.arange(src.shape[1], device=src.device)
            src = src.clone()
            src[:, idx, idx] += res
            vectors = src
        else:
            vectors = torch.cat([src, res.unsqueeze(2)], dim=2)
        rows.append(alti_contributions(vectors, out))
    return torch.cat(rows)


def rollout_encoder(contributions: list[Tensor]) -> Tensor:
    """Encoder rollout of per-layer self-attention contributions (B, S, S), first layer first:
    ``E = C^{L-1} ... C^1 C^0`` (B, S, S) (Abnar and Zuidema 2020; ALTI, Ferrando et al. 2022)."""
    out = contributions[0]
    for c in contributions[1:]:
        out = c @ out
    return out


def rollout_decoder_step(prev: Tensor | None, cross: Tensor, self_dec: Tensor, encoder: Tensor) -> Tensor:
    """One decoder layer of the ALTI+ rollout: (B, T, S + T), source columns first.

    cross (B, T, S + 1) is the layer's cross-attention ALTI (residual last), self_dec (B, T, T) its
    self-attention ALTI, encoder (B, S, S) the encoder rollout. The target prefix reaches the layer
    through the residual: ``C_tgt = diag(cross[:, S]) self_dec``. With ``C_src = cross[:, :S]``:
    ``R^0 = [C_src E | C_tgt]``, ``R^l = norm([C_src E + C_tgt R^{l-1}_src | C_tgt R^{l-1}_tgt])``
    (Ferrando et al. 2022, ``get_contribution_rollout``).
    """
    S = encoder.shape[-1]
    c_tgt = self_dec * cross[..., S : S + 1]
    ed = cross[..., :S] @ encoder
    if prev is None:
        return torch.cat([ed, c_tgt], dim=-1)
    new = torch.cat([ed + c_tgt @ prev[..., :S], c_tgt @ prev[..., S:]], dim=-1)
    total = new.sum(-1, keepdim=True)
    return torch.where(total > 0, new / total.clamp_min(1e-30), torch.zeros_like(new))


def _finish_layer(h: Tensor, layer: CrossAttentionLayer) -> Tensor:
    """The decoder layer after its cross-attention, from the pre-LN sum ``h = residual + attention``:
    (..., D) -> (..., D)."""
    if not layer.normalize_before:
        h = torch.nn.functional.layer_norm(h, h.shape[-1:], layer.ln_weight, layer.ln_bias, layer.ln_eps)
    return layer.ff.block(h) if layer.ff is not None else h


def value_zeroing(alpha: Tensor, x: Tensor, residual: Tensor, attn_out: Tensor, layer: CrossAttentionLayer) -> Tensor:
    """``1 - cos(layer output with source j's values zeroed, real layer output)``: (B, T, S)
    (Mohebbi et al. 2023). alpha (B, H, T, S) (0 on padded sources), x (B, S, D), residual and
    attn_out (B, T, D). Padded sources score 0."""
    B, H, T, S = alpha.shape
    D = x.shape[-1]
    out = alpha.new_zeros(B, T, S)
    h = residual + attn_out  # (B, T, D)
    real = _finish_layer(h, layer)
    step = max(1, _CHUNK // max(1, T * D))
    for b in range(B):
        f = value_vectors(x[b : b + 1], layer)[0]  # (H, S, D)
        for j0 in range(0, S, step):
            z = torch.einsum("hts,hsd->tsd", alpha[b, :, :, j0 : j0 + step], f[:, j0 : j0 + step])
            new = _finish_layer(h[b].unsqueeze(1) - z, layer)  # (T, s, D)
            cos = torch.nn.functional.cosine_similarity(new, real[b].unsqueeze(1), dim=-1, eps=1e-12)
            out[b, :, j0 : j0 + step] = 1.0 - cos
    return out * (alpha.sum(1) > 0).to(out.dtype)  # padded sources: nothing was zeroed
