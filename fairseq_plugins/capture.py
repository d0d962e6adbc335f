"""Record what every decoder layer's cross-attention sees, with forward hooks (no fairseq patch).

A forward pre-hook asks each ``encoder_attn`` for per-head weights (``need_head_weights``), which
fairseq's decoder accepts for any layer: it only reads the alignment layer's weights. A forward
hook then keeps the query, keys, padding mask, output and weights; for pre-LN layers a hook on
``encoder_attn_layer_norm`` keeps the residual (the LayerNorm's input).
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from align.norms import CrossAttentionLayer, LayerInputs


# One CrossAttentionLayer per decoder layer module, so its cached W_O^T W_O serves every batch.
_LAYERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class UnsupportedModelError(ValueError):
    """The model is not an encoder-decoder Transformer whose decoder layers have ``encoder_attn``."""


def decoder_layers(model) -> list:
    """The decoder layers of a fairseq encoder-decoder Transformer, or UnsupportedModelError."""
    layers = getattr(getattr(model, "decoder", None), "layers", None)
    if not layers or not all(hasattr(layer, "encoder_attn") and layer.encoder_attn is not None for layer in layers):
        raise UnsupportedModelError(
            f"{type(model).__name__} is not an encoder-decoder Transformer with cross-attention in every "
            "decoder layer (expected model.decoder.layers[i].encoder_attn, as in fairseq's TransformerModel)")
    return list(layers)


class CrossAttentionRecorder:
    """Context manager recording every decoder layer's cross-attention inputs and outputs."""

    def __init__(self, model) -> None:
        self.layers = decoder_layers(model)
        self.records: list[dict[str, Any]] = [{} for _ in self.layers]
        self._handles: list = []

    def __enter__(self) -> "CrossAttentionRecorder":
        for rec, layer in zip(self.records, self.layers):
            att = layer.encoder_attn
            self._handles.append(att.register_forward_pre_hook(_ask_for_head_weights, with_kwargs=True))
            self._handles.append(att.register_forward_hook(_make_attn_hook(rec), with_kwargs=True))
            if layer.normalize_before:
                self._handles.append(layer.encoder_attn_layer_norm.register_forward_hook(_make_ln_hook(rec)))
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def layer_inputs(self, index: int) -> tuple[LayerInputs, torch.Tensor]:
        """Recorded inputs of layer ``index`` in batch-first shapes, and the source padding mask (B, S)."""
        rec = self.records[index]
        if "weights" not in rec:
            raise RuntimeError(f"decoder layer {index} recorded nothing: was the model run inside the recorder?")
        alpha = rec["weights"].transpose(0, 1)  # (H, B, T, S) -> (B, H, T, S)
        x = rec["key"].transpose(0, 1)
        residual = (rec["ln_in"] if "ln_in" in rec else rec["query"]).transpose(0, 1)
        attn_out = rec["out"].transpose(0, 1)
        pad = rec["key_padding_mask"]
        src_mask = ~pad if pad is not None else torch.ones(alpha.shape[0], alpha.shape[-1], dtype=torch.bool)
        return LayerInputs(alpha.float(), x.float(), residual.float(), attn_out.float()), src_mask

    def layer(self, index: int) -> CrossAttentionLayer:
        """Weights of layer ``index``'s cross-attention block (one object per module, reused)."""
        module = self.layers[index]
        layer = _LAYERS.get(module)
        if layer is None:
            layer = _LAYERS[module] = CrossAttentionLayer.from_fairseq(module)
        return layer


def _ask_for_head_weights(module, args, kwargs):
    kwargs["need_weights"] = True
    kwargs["need_head_weights"] = True
    return args, kwargs


def _make_attn_hook(rec: dict):
    def hook(module, args, kwargs, output):
        names = ("query", "key", "value")
        for i, name in enumerate(names[: len(args)]):
            kwargs.setdefault(name, args[i])
        rec["query"], rec["key"] = kwargs["query"], kwargs["key"]
        rec["key_padding_mask"] = kwargs.get("key_padding_mask")
        rec["out"], rec["weights"] = output[0], output[1]
    return hook


def _make_ln_hook(rec: dict):
    def hook(module, args, output):
        rec["ln_in"] = args[0]
    return hook
