"""Helpers for tests on tiny random Hugging Face models built in code (no download)."""

import torch


def randomize(model, seed: int, std: float = 0.3) -> None:
    """Stronger random weights than Hugging Face's init (std 0.02), so attention is far from uniform
    and activations far from linear; LayerNorm gains near 1."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "embed_positions" in name:
                continue
            if "layer_norm" in name or "layernorm" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))
