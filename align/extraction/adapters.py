"""Where a framework keeps what the engine reads: thin, duck-typed adapters (no fairseq or
transformers import here).

An adapter names, for each decoder layer, the cross-attention module, its LayerNorm, the
self-attention module and its LayerNorm, the FF block and whether the layer is pre-LN or post-LN;
it knows how to ask the attention modules for per-head weights, how to read one call (query,
key/value input, output, weights; batch-first), and how to run a teacher-forced pass.

Supported: fairseq ``TransformerModel`` (post-LN and ``--decoder-normalize-before``), and Hugging
Face encoder-decoders with the BART layout: Marian / opus-mt and BART (post-LN), M2M100 / NLLB,
mBART and Pegasus (pre-LN), and FSMT (fairseq's layout, time-first).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..attribution.feedforward import FeedForwardBlock
from ..attribution.norms import CrossAttentionLayer


class UnsupportedModelError(ValueError):
    """The model is not an encoder-decoder Transformer this toolkit can read."""


@dataclass(frozen=True)
class AttentionSite:
    """One attention block: the attention module, its LayerNorm, and the LayerNorm's place."""

    attn: Any
    ln: Any
    normalize_before: bool


@dataclass(frozen=True)
class LayerSites:
    """One decoder layer: cross-attention, self-attention, and the FF block's parts."""

    cross: AttentionSite
    self_attn: AttentionSite | None
    fc1: Any
    fc2: Any
    activation: Any
    final_ln: Any

    def block(self) -> CrossAttentionLayer:
        """Float32 weights of the cross-attention block, with the FF block attached."""
        ff = None
        if self.fc1 is not None:
            ff = FeedForwardBlock.from_modules(
                self.fc1, self.fc2, self.activation, self.final_ln, self.cross.normalize_before
            )
        return CrossAttentionLayer.from_modules(self.cross.attn, self.cross.ln, self.cross.normalize_before, ff)


@dataclass(frozen=True)
class AttnCall:
    """What one attention call saw, batch-first: query (B, T, D), key/value input (B, S, D),
    output with the output bias (B, T, D), weights (B, H, T, S)."""

    query: Tensor
    kv: Tensor
    out: Tensor
    weights: Tensor


@dataclass(frozen=True)
class Batch:
    """A teacher-forced batch, right-padded: source ids (B, S) and mask, target labels (B, T) (the
    tokens each decoder step predicts, specials included) and mask."""

    src: Tensor
    src_mask: Tensor
    labels: Tensor
    tgt_mask: Tensor


class Adapter:
    """Base adapter; subclasses fill in the framework's names and calling conventions."""

    name = "base"
    time_first = False

    def decoder_layers(self, model) -> list[LayerSites]:
        raise NotImplementedError

    def encoder_layers(self, model) -> list[AttentionSite]:
        raise NotImplementedError

    def prepare_call(self, args: tuple, kwargs: dict, self_attention: bool) -> tuple[tuple, dict]:
        """Ask the attention module for per-head weights."""
        return args, kwargs

    def read_call(self, args: tuple, kwargs: dict, output, self_attention: bool) -> AttnCall:
        raise NotImplementedError

    def forward(self, model, batch: Batch, logprobs: bool = False) -> Tensor | None:
        """Run the teacher-forced pass (the recorder's hooks see it); with ``logprobs``, return (B, T) the
        log-probability the model gives each label (forced decoding; padding positions 0), else None."""
        raise NotImplementedError

    def _t(self, x: Tensor) -> Tensor:
        return x.transpose(0, 1) if self.time_first else x


class FairseqAdapter(Adapter):
    """fairseq ``TransformerModel``: time-first tensors, weights (H, B, T, S) with ``need_head_weights``."""

    name = "fairseq"
    time_first = True

    def __init__(self, pad: int, eos: int) -> None:
        self.pad, self.eos = pad, eos

    def decoder_layers(self, model) -> list[LayerSites]:
        layers = getattr(getattr(model, "decoder", None), "layers", None)
        if not layers or not all(getattr(la, "encoder_attn", None) is not None for la in layers):
            raise UnsupportedModelError(
                f"{type(model).__name__} is not an encoder-decoder Transformer with cross-attention in every "
                "decoder layer (expected model.decoder.layers[i].encoder_attn, as in fairseq's TransformerModel)"
            )
        return [
            LayerSites(
                AttentionSite(la.encoder_attn, la.encoder_attn_layer_norm, bool(la.normalize_before)),
                AttentionSite(la.self_attn, la.self_attn_layer_norm, bool(la.normalize_before)),
                getattr(la, "fc1", None),
                getattr(la, "fc2", None),
                getattr(la, "activation_fn", None),
                getattr(la, "final_layer_norm", None),
            )
            for la in layers
        ]

    def encoder_layers(self, model) -> list[AttentionSite]:
        return [
            AttentionSite(la.self_attn, la.self_attn_layer_norm, bool(la.normalize_before))
            for la in model.encoder.layers
        ]

    def prepare_call(self, args, kwargs, self_attention):
        kwargs["need_weights"] = True
        kwargs["need_head_weights"] = True
        if self_attention and kwargs.get("incremental_state") is None:
            # fairseq's fast path (F.multi_head_attention_forward) returns head-averaged weights;
            # static_kv only matters with an incremental state, and makes it take the Python path.
            kwargs["static_kv"] = True
        return args, kwargs

    def read_call(self, args, kwargs, output, self_attention):
        names = ("query", "key", "value")
        got = {n: a for n, a in zip(names, args)}
        got.update({n: kwargs[n] for n in names if n in kwargs})
        weights = output[1]
        if weights is None or weights.dim() != 4:
            raise RuntimeError("fairseq attention returned no per-head weights")
        return AttnCall(self._t(got["query"]), self._t(got["key"]), self._t(output[0]), weights.transpose(0, 1))

    def forward(self, model, batch: Batch, logprobs: bool = False) -> Tensor | None:
        labels = batch.labels.masked_fill(~batch.tgt_mask, self.pad)
        prev = torch.cat([labels.new_full((labels.shape[0], 1), self.eos), labels[:, :-1]], dim=1)
        prev = prev.masked_fill(~batch.tgt_mask, self.pad)
        src = batch.src.masked_fill(~batch.src_mask, self.pad)
        # the decoder's features only: the projection onto the vocabulary (a third of a small decoder's work) is
        # made below, and only when log-probabilities are asked for, as the Hugging Face adapter does
        feats, extra = model(src, batch.src_mask.sum(1), prev, features_only=True)
        if not logprobs:
            return None
        if getattr(model.decoder, "adaptive_softmax", None) is not None:  # its own normalization
            out = (model.decoder.output_layer(feats), extra)
            return label_logprobs(model.get_normalized_probs(out, log_probs=True), labels, batch.tgt_mask)
        # the real target positions only (B x T -> N rows): the projection and the logsumexp over the vocabulary
        # are the cost of a sentence score, and a padded position's would be thrown away
        mask = batch.tgt_mask
        logits, real = model.decoder.output_layer(feats[mask]), labels[mask]  # (N, V), (N,)
        got = label_logprobs(logits, real, torch.ones_like(real, dtype=torch.bool), normalized=False)
        return got.new_zeros(labels.shape).masked_scatter(mask, got)


# Hugging Face model types by LayerNorm placement (the BART layer layout: self_attn,
# encoder_attn, *_layer_norm, fc1, fc2, final_layer_norm).
HF_POST_LN = ("marian", "bart", "fsmt")
HF_PRE_LN = ("m2m_100", "mbart", "pegasus")


class HFAdapter(Adapter):
    """Hugging Face encoder-decoders with the BART layer layout, batch-first, eager attention."""

    name = "hf"

    def __init__(self, model) -> None:
        cfg = model.config
        self.model_type = getattr(cfg, "model_type", type(model).__name__)
        if self.model_type not in HF_POST_LN + HF_PRE_LN:
            raise UnsupportedModelError(
                f"Hugging Face model type {self.model_type!r} is not supported (T5-style relative-attention models "
                f"have no encoder_attn/out_proj layout); supported: {', '.join(HF_POST_LN + HF_PRE_LN)}"
            )
        self.pre_ln = self.model_type in HF_PRE_LN
        self.activation = getattr(cfg, "activation_function", "relu")
        self.pad = cfg.pad_token_id
        self.start = cfg.decoder_start_token_id
        self.time_first = self.model_type == "fsmt"

    @staticmethod
    def _base(model):
        return getattr(model, "model", model)

    def decoder_layers(self, model) -> list[LayerSites]:
        layers = self._base(model).decoder.layers
        return [
            LayerSites(
                AttentionSite(la.encoder_attn, la.encoder_attn_layer_norm, self.pre_ln),
                AttentionSite(la.self_attn, la.self_attn_layer_norm, self.pre_ln),
                la.fc1,
                la.fc2,
                self.activation,
                la.final_layer_norm,
            )
            for la in layers
        ]

    def encoder_layers(self, model) -> list[AttentionSite]:
        return [
            AttentionSite(la.self_attn, la.self_attn_layer_norm, self.pre_ln) for la in self._base(model).encoder.layers
        ]

    def prepare_call(self, args, kwargs, self_attention):
        if self.model_type == "fsmt":
            kwargs["output_attentions"] = True
        return args, kwargs

    def read_call(self, args, kwargs, output, self_attention):
        if self.model_type == "fsmt":
            query = kwargs["query"] if "query" in kwargs else args[0]
            kv = query if self_attention else (kwargs["key"] if "key" in kwargs else args[1])
        else:  # Marian passes hidden_states positionally, the others by keyword
            query = args[0] if args else kwargs["hidden_states"]
            kv = query if self_attention else kwargs.get("key_value_states", args[1] if len(args) > 1 else None)
        weights = output[1]
        if weights is None:
            raise RuntimeError(
                "the attention returned no weights: the model must use eager attention "
                "(model.set_attn_implementation('eager'))"
            )
        return AttnCall(self._t(query), self._t(kv), self._t(output[0]), weights)

    def decoder_inputs(self, model, labels: Tensor) -> Tensor:
        """Decoder inputs for teacher forcing, by the model's own rule (mBART wraps the language code)."""
        if self.model_type == "fsmt":  # fairseq's: EOS, then the labels shifted right
            return torch.cat(
                [labels[:, -1:].new_full((labels.shape[0], 1), model.config.eos_token_id), labels[:, :-1]], dim=1
            )
        prepare = getattr(model, "prepare_decoder_input_ids_from_labels", None)
        if prepare is not None:
            return prepare(labels=labels)
        out = labels.new_full(labels.shape, self.pad)
        out[:, 1:] = labels[:, :-1]
        out[:, 0] = self.start
        return out

    def forward(self, model, batch: Batch, logprobs: bool = False) -> Tensor | None:
        labels = batch.labels.masked_fill(~batch.tgt_mask, self.pad)
        dec = self.decoder_inputs(model, labels)
        dec = dec.masked_fill(~batch.tgt_mask, self.pad)
        src = batch.src.masked_fill(~batch.src_mask, self.pad)
        kwargs = dict(input_ids=src, attention_mask=batch.src_mask.long(), decoder_input_ids=dec, use_cache=False)
        if not logprobs:  # the base model: no projection onto the vocabulary (NLLB's has 256k rows)
            self._base(model)(**kwargs)
            return None
        if getattr(model, "get_output_embeddings", lambda: None)() is None:
            raise UnsupportedModelError(
                f"{type(model).__name__} has no language-model head: log-probabilities (sentence scores) need the "
                "model for generation (AutoModelForSeq2SeqLM), not the bare encoder-decoder"
            )
        return label_logprobs(model(**kwargs).logits, labels, batch.tgt_mask, normalized=False)


def label_logprobs(scores: Tensor, labels: Tensor, mask: Tensor, normalized: bool = True) -> Tensor:
    """(B, T, V) log-probabilities (or logits, ``normalized=False``), (B, T) labels and mask -> (B, T) each
    label's log-probability (0 off the mask). From logits: the label's logit minus the logsumexp over the
    vocabulary (the log-probabilities of the other tokens are never kept)."""
    scores = scores.float()
    got = scores.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    if not normalized:
        got = got - torch.logsumexp(scores, dim=-1)
    return got.masked_fill(~mask, 0.0)


def prepare_hf_model(model) -> None:
    """Switch a Hugging Face model to eager attention (sdpa and flash return no weights)."""
    impl = getattr(model.config, "_attn_implementation", None)
    if impl not in (None, "eager"):
        setter: Callable | None = getattr(model, "set_attn_implementation", None)
        if setter is None:
            raise UnsupportedModelError(
                f"the model uses {impl!r} attention, which returns no weights, and cannot switch to eager attention"
            )
        setter("eager")


def adapter_for(model, pad: int | None = None, eos: int | None = None) -> Adapter:
    """The adapter of a loaded model: Hugging Face (has ``config.model_type``) or fairseq."""
    if hasattr(getattr(model, "config", None), "model_type"):
        return HFAdapter(model)
    if pad is None or eos is None:
        raise UnsupportedModelError("a fairseq model needs its dictionary's pad and eos ids")
    return FairseqAdapter(pad, eos)
