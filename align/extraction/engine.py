"""The model-agnostic engine: record every decoder layer with forward hooks, score every method
and layer from one teacher-forced pass, and turn scores into word links (torch only).

An :class:`~align.extraction.adapters.Adapter` says where the framework keeps each module; nothing here
imports fairseq or transformers. Recorded tensors are cast to float32 on the model's device, so
scores are float32 whatever the model's dtype.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import torch

from ..attribution.methods import METHODS, LayerContext, ModelContext, check_methods, layer_scores, needs
from ..attribution.norms import CrossAttentionLayer, LayerInputs
from ..links.decode import DECODERS
from ..links.rows import select_rows, token_scores_to_links
from ..spec.alignspec import AlignSpec, check_blends as spec_check_blends
from .adapters import Adapter, AttentionSite, Batch

# One float32 weight object per attention module, so cached W_O^T W_O serves every batch.
_BLOCKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _block_of(module, make) -> CrossAttentionLayer:
    blk = _BLOCKS.get(module)
    if blk is None:
        blk = _BLOCKS[module] = make()
    return blk


class Recorder:
    """Context manager recording what every decoder layer's cross-attention (and, when asked, every
    self-attention) sees in one forward pass."""

    def __init__(self, model, adapter: Adapter, self_attention: bool = False) -> None:
        self.model, self.adapter = model, adapter
        self.layers = adapter.decoder_layers(model)
        self.encoder = adapter.encoder_layers(model) if self_attention else []
        self.self_attention = self_attention
        self.records: dict[tuple[str, int], dict[str, Any]] = {}
        self._handles: list = []

    def __enter__(self) -> Recorder:
        sites: list[tuple[str, int, AttentionSite | None, bool]] = [
            ("cross", i, la.cross, False) for i, la in enumerate(self.layers)
        ]
        if self.self_attention:
            sites += [("decoder", i, la.self_attn, True) for i, la in enumerate(self.layers)]
            sites += [("encoder", i, s, True) for i, s in enumerate(self.encoder)]
        for part, i, site, is_self in sites:
            if site is None:
                raise ValueError(f"{part} layer {i} has no self-attention block to record")
            rec = self.records.setdefault((part, i), {})
            self._handles.append(site.attn.register_forward_pre_hook(self._pre(rec, is_self), with_kwargs=True))
            self._handles.append(site.attn.register_forward_hook(self._post(rec, is_self), with_kwargs=True))
            if site.normalize_before:
                self._handles.append(site.ln.register_forward_hook(self._ln(rec)))
            v_proj = getattr(site.attn, "v_proj", None)
            if part == "cross" and isinstance(v_proj, torch.nn.Module):
                # the values the model computes anyway: scoring need not project the source again
                self._handles.append(v_proj.register_forward_hook(self._v(rec)))
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def _pre(self, rec: dict, is_self: bool):
        def hook(module, args, kwargs):
            rec.pop("v", None)  # a value projection recorded from here on belongs to this call
            return self.adapter.prepare_call(args, kwargs, is_self)

        return hook

    def _post(self, rec: dict, is_self: bool):
        def hook(module, args, kwargs, output):
            rec["call"] = self.adapter.read_call(args, kwargs, output, is_self)

        return hook

    def _ln(self, rec: dict):
        def hook(module, args, output):
            rec["ln_in"] = self.adapter._t(args[0])

        return hook

    def _v(self, rec: dict):
        def hook(module, args, output):
            if isinstance(output, torch.Tensor):  # a wrapped Linear returning more than a tensor: recompute instead
                rec["v"] = self.adapter._t(output)

        return hook

    def _inputs(self, part: str, index: int) -> LayerInputs:
        rec = self.records.get((part, index), {})
        if "call" not in rec:
            raise RuntimeError(
                f"{part} attention of layer {index} recorded nothing: was the model run inside the recorder?"
            )
        c = rec["call"]
        residual = rec["ln_in"] if "ln_in" in rec else c.query
        v = rec.get("v")
        # only a float32 projection of exactly this call's source is reused (bf16/fp16 ones are recomputed
        # in float32, as every score is; a fast path that skipped v_proj leaves none or a stale one)
        if v is not None and (v.dtype != torch.float32 or v.shape != c.kv.shape):
            v = None
        return LayerInputs(c.weights.float(), c.kv.float(), residual.float(), c.out.float(), v, c.query)

    def layer_inputs(self, index: int) -> LayerInputs:
        """Recorded inputs of decoder layer ``index``'s cross-attention, batch-first, float32."""
        return self._inputs("cross", index)

    def layer(self, index: int) -> CrossAttentionLayer:
        """Float32 weights of decoder layer ``index``'s cross-attention block (cached per module)."""
        sites = self.layers[index]
        return _block_of(sites.cross.attn, sites.block)

    def self_block(self, part: str, index: int) -> tuple[LayerInputs, CrossAttentionLayer]:
        """Recorded inputs and weights of a self-attention block (``part`` encoder or decoder)."""
        site = self.layers[index].self_attn if part == "decoder" else self.encoder[index]
        if site is None:
            raise ValueError(f"{part} layer {index} has no self-attention block")
        blk = _block_of(site.attn, lambda: CrossAttentionLayer.from_modules(site.attn, site.ln, site.normalize_before))
        return self._inputs(part, index), blk


def score_recorded(
    rec: Recorder,
    src_mask: torch.Tensor,
    tgt_mask: torch.Tensor,
    methods: Sequence[str],
    layers: Sequence[int],
    only: Collection[tuple[str, int]] | None = None,
    alignment_layer: Any = None,
) -> list[dict[tuple[str, int], np.ndarray]]:
    """Per-sentence scores of a recorded teacher-forced pass: ``{(method, layer): (steps, S)}`` (per
    head ``(H, steps, S)``); ``src_mask`` (B, S) and ``tgt_mask`` (B, T) mark real tokens on either
    padding side, and rows and columns of padding are cut off. ``only``: the (method, layer) cells
    wanted, when not every method at every layer (a blend's extra settings); ``alignment_layer``: the trained
    alignment layer the ``learned`` method reads (:mod:`align.attribution.learned`)."""
    check_methods(methods)
    out: list[dict] = [{} for _ in range(src_mask.shape[0])]
    cols = [torch.nonzero(m).squeeze(-1).numpy() for m in src_mask.cpu()]
    rows = [torch.nonzero(m).squeeze(-1).numpy() for m in tgt_mask.cpu()]
    wanted = set(layers)
    todo = sorted(wanted)
    if "previous-layers" in needs(methods):  # rollouts carry state from layer 0 upwards
        todo = list(range(max(todo) + 1))
    model_ctx = ModelContext(
        self_attention=rec.self_block if rec.self_attention else None,
        n_encoder_layers=len(rec.encoder),
        src_mask=src_mask,
        tgt_mask=tgt_mask,
        alignment_layer=alignment_layer,
    )
    for layer_idx in todo:
        ctx = LayerContext(rec.layer_inputs(layer_idx), rec.layer(layer_idx), layer_idx, src_mask, tgt_mask, model_ctx)
        # a layer computed only to carry a rollout runs the rollout methods alone
        here = [m for m in methods if only is None or (m, layer_idx) in only] if layer_idx in wanted else []
        names = [m for m in methods if m in here or "previous-layers" in METHODS[m].needs]
        if not names:
            continue
        scores = layer_scores(ctx.inputs, ctx.layer, names, src_mask, tgt_mask, ctx=ctx)
        for name in here:
            arr = scores[name].detach().cpu().numpy()
            for i in range(len(out)):
                out[i][(name, layer_idx)] = arr[i][..., rows[i][:, None], cols[i]]
    return out


LOGPROBS = ("logprobs", -1)
"""The key of a sentence's forced-decoding log-probabilities (one per label) in :func:`score_pairs`' dicts."""


def collate(seqs: Sequence[Sequence[int]], pad: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids (B, L) and the mask of real tokens (B, L)."""
    n = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), n), pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    mask = torch.zeros((len(seqs), n), dtype=torch.bool)
    for i, s in enumerate(seqs):
        mask[i, : len(s)] = True
    return ids.to(device), mask.to(device)


@torch.no_grad()
def score_pairs(
    model,
    adapter: Adapter,
    src: Sequence[Sequence[int]],
    labels: Sequence[Sequence[int]],
    pad: int,
    methods: Sequence[str],
    layers: Sequence[int],
    only: Collection[tuple[str, int]] | None = None,
    logprobs: bool = False,
    alignment_layer: Any = None,
) -> list[dict[tuple[str, int], np.ndarray]]:
    """Scores of each (source ids, target labels) pair from one teacher-forced pass:
    ``{(method, layer): (len(labels), len(src))}`` per sentence, per head ``(H, ...)``; ``only``: the
    (method, layer) cells wanted, when not every method at every layer; with ``logprobs`` also
    ``{LOGPROBS: (len(labels),)}``, the log-probability of each label under forced decoding, from the same pass;
    ``alignment_layer``: the trained alignment layer of the ``learned`` method, when attached.

    ``labels`` are the tokens each decoder step predicts (EOS and language codes included); the
    adapter builds the decoder inputs. Batch composition never changes a score: padding is masked.
    """
    device = next(model.parameters()).device
    src_ids, src_mask = collate(src, pad, device)
    lab, tgt_mask = collate(labels, pad, device)
    with Recorder(model, adapter, self_attention="self-attention" in needs(methods)) as rec:
        lp = adapter.forward(model, Batch(src_ids, src_mask, lab, tgt_mask), logprobs=logprobs)
    out = score_recorded(rec, src_mask, tgt_mask, methods, layers, only, alignment_layer)
    if lp is not None:
        lp_np, masks = lp.detach().cpu().numpy(), tgt_mask.cpu().numpy()
        for i, d in enumerate(out):
            d[LOGPROBS] = lp_np[i][masks[i]].astype(np.float64)
    return out


def check_spec(spec: AlignSpec, n_layers: int, n_heads: int) -> AlignSpec:
    """``spec`` checked against the method and decoder registries and a model of ``n_layers`` decoder layers
    and ``n_heads`` cross-attention heads; returns it or raises ValueError naming what is wrong."""
    return spec.validate(n_layers, n_heads, METHODS, DECODERS)


def check_blends(blends: Sequence[str], level: str = "word", specials: str = "drop") -> None:
    """Every check of blend names that needs no model (:mod:`align.links.blend`): settings, methods, shifts,
    the same blend twice (in any order), level and specials; ValueError naming the blend."""
    spec_check_blends(blends, METHODS, level, specials)


def level_maps(src_words: np.ndarray, tgt_words: np.ndarray, level: str) -> tuple[np.ndarray, np.ndarray]:
    """At subword level every real token is its own unit (specials stay -1)."""
    if level != "subword":
        return src_words, tgt_words
    return np.where(src_words < 0, -1, 0), np.where(tgt_words < 0, -1, 0)


def links_for(
    scores: dict,
    src_words: np.ndarray,
    tgt_words: np.ndarray,
    spec: AlignSpec,
    method: str,
    layer: int,
    shift: str,
    head: int | None = None,
) -> list[tuple[int, int]]:
    """Word (or subword) links of one sentence for one (method, layer, shift[, head]).

    ``tgt_words`` maps the labels before the final one (which is always a special, EOS or a
    language code) to words; ``src_words`` maps every source token.
    """
    m = scores[(method, layer)]
    if m.ndim == 3:  # per head: one head, or the mean of the chosen heads
        m = m[head] if head is not None else m[list(spec.heads) if spec.heads else slice(None)].mean(0)
    rows = select_rows(m, len(tgt_words), shift)
    sw, tw = level_maps(src_words, tgt_words, spec.level)
    return token_scores_to_links(rows, sw, tw, spec)


def n_layers_heads(model, adapter: Adapter) -> tuple[int, int]:
    """Decoder layer count and cross-attention head count."""
    layers = adapter.decoder_layers(model)
    return len(layers), int(layers[0].cross.attn.num_heads)
