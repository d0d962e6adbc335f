"""An alignment layer a translation model teaches itself: one attention layer over a frozen model's states (torch).

After Shift-AET (Chen, Sun, Zhang, Zhou, Liu, EMNLP 2020, "Accurate word alignment induction from neural machine
translation"): a multi-head attention whose queries are one decoder layer's states and whose keys are the encoder
output, trained on the frozen model's own symmetrized alignments (never on gold links). Here the queries are the
states the chosen layer's cross-attention reads (its input after the self-attention block, LayerNorm'd as the model
does before attending), the keys the encoder output that cross-attention attends to; the layer's scores are the
mean over its heads of ``softmax_j(q_i . k_j / sqrt(d))``, a distribution over source tokens for each decoder step.

Initialised from the model's own query and key projections at that layer, it starts as exactly the ``attn`` method
there (attention weights, mean over heads); training moves it toward the teacher's links.

Shapes: ``B`` batch, ``T`` decoder steps, ``S`` source tokens, ``D`` model width, ``H`` heads; target first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from .norms import CrossAttentionLayer, LayerInputs


@dataclass(frozen=True)
class HeadShape:
    """What an alignment layer is: the decoder layer it reads, its width and heads, and the shift it was trained for
    (``awi``: target token k read at the step where it is the decoder's input, row k + 1)."""

    layer: int
    dim: int
    heads: int
    shift: str = "awi"

    def __post_init__(self) -> None:
        if self.dim % self.heads:
            raise ValueError(f"alignment layer: width {self.dim} is not divisible by {self.heads} heads")


class AlignmentHead(torch.nn.Module):
    """Query and key projections ``(D, D)`` with biases; :meth:`forward` gives (B, T, S) source distributions."""

    def __init__(self, shape: HeadShape) -> None:
        super().__init__()
        self.shape = shape
        self.weights_sha256: str | None = None  # the stored file's digest, once loaded from one
        self.q_proj = torch.nn.Linear(shape.dim, shape.dim)
        self.k_proj = torch.nn.Linear(shape.dim, shape.dim)

    @property
    def layer(self) -> int:
        """The decoder layer whose states it reads."""
        return self.shape.layer

    def init_from(self, attn: Any) -> AlignmentHead:
        """Copy a cross-attention module's ``q_proj``/``k_proj`` (fairseq, Hugging Face): the head then scores as
        the model's own attention at its layer, averaged over heads (when the model has ``shape.heads`` heads)."""
        with torch.no_grad():
            for mine, theirs in ((self.q_proj, attn.q_proj), (self.k_proj, attn.k_proj)):
                mine.weight.copy_(theirs.weight.detach().float())
                if theirs.bias is not None:
                    mine.bias.copy_(theirs.bias.detach().float())
                else:
                    mine.bias.zero_()
        return self

    def log_probs(self, query: Tensor, keys: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """``log(mean_h softmax_j(q_i^h . k_j^h / sqrt(d)))``: query (B, T, D), keys (B, S, D), src_mask (B, S) True on
        real tokens -> (B, T, S); padded sources get a log-probability near -1e9 (finite: the gradient of a mean over
        heads of -inf would be nan), a probability of 0."""
        B, T, D = query.shape
        S, H = keys.shape[1], self.shape.heads
        d = D // H
        q = self.q_proj(query).view(B, T, H, d).transpose(1, 2)  # (B, H, T, d)
        k = self.k_proj(keys).view(B, S, H, d).transpose(1, 2)  # (B, H, S, d)
        logits = (q @ k.transpose(-1, -2)) / math.sqrt(d)  # (B, H, T, S)
        if src_mask is not None:
            logits = logits.masked_fill(~src_mask[:, None, None, :].bool(), -1e9)
        per_head = torch.log_softmax(logits, dim=-1)
        # the mean of H distributions, in log space
        return torch.logsumexp(per_head, dim=1) - math.log(H)

    def forward(self, query: Tensor, keys: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """Mean over heads of the source distributions: (B, T, D), (B, S, D), (B, S) -> (B, T, S), rows sum to 1."""
        return self.log_probs(query, keys, src_mask).exp()


def query_states(inputs: LayerInputs, layer: CrossAttentionLayer) -> Tensor:
    """The states a decoder layer's cross-attention reads as queries (B, T, D): the recorded query, or the residual
    stream LayerNorm'd as a pre-LN layer does before attending (post-LN: the residual stream itself)."""
    if inputs.query is not None:  # recorded in the model's dtype: float32 here, as every score
        return inputs.query.float()
    if not layer.normalize_before:
        return inputs.residual
    return torch.nn.functional.layer_norm(
        inputs.residual, inputs.residual.shape[-1:], layer.ln_weight, layer.ln_bias, layer.ln_eps
    )


def head_scores(
    head: AlignmentHead, inputs: LayerInputs, layer: CrossAttentionLayer, src_mask: Tensor | None
) -> Tensor:
    """The alignment layer's scores at its decoder layer: (B, T, S) source distributions, no gradient."""
    p = next(head.parameters())
    with torch.no_grad():
        q, k = query_states(inputs, layer).to(p.device, p.dtype), inputs.x.to(p.device, p.dtype)
        mask = None if src_mask is None else src_mask.to(p.device)
        out: Tensor = head(q, k, mask).float()
        return out
