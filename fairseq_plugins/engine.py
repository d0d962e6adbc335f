"""Teacher-forced scoring of (source, target) token batches with every method and layer at once.

Used by the ``translation_norm_align`` task (after fairseq's generator or scorer has produced the
target) and by the Python API. One encoder-decoder forward pass per batch; hooks record every
layer; scores come from :mod:`align.norms`; word links from :mod:`align.extract`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from align.extract import LEVELS, SHIFTS, SPECIALS, check_choices, select_rows, token_scores_to_links
from align.norms import METHODS, layer_scores
from align.subwords import SPECIAL, word_map

from .capture import CrossAttentionRecorder, decoder_layers


@dataclass(frozen=True)
class AlignSpec:
    """What to compute: methods (see ``align.norms.METHODS``), layers (0-based; None = all),
    shifts (awo/awi), heads to average for per-head methods in single-output use (None = all),
    level (word, subword, word-any), decoder name, and the subword scheme."""

    methods: tuple[str, ...] = ("norm",)
    layers: tuple[int, ...] | None = None
    shifts: tuple[str, ...] = ("awo",)
    heads: tuple[int, ...] | None = None
    per_head: bool = False
    level: str = "word"
    decoder: str = "argmax"
    scheme: str = "sentencepiece"
    src_reduce: str = "sum"
    tgt_reduce: str = "mean"
    specials: tuple[str, ...] = field(default=("</s>", "<s>", "<pad>"))
    specials_policy: str = "drop"

    def validate(self, n_layers: int, n_heads: int) -> "AlignSpec":
        """Check every name and index against the model; returns self or raises ValueError."""
        check_choices(self.methods, list(METHODS), "method")
        check_choices(self.shifts, SHIFTS, "shift")
        check_choices([self.level], LEVELS, "level")
        check_choices([self.specials_policy], SPECIALS, "specials policy")
        from align.decode import DECODERS
        check_choices([self.decoder], list(DECODERS), "decoder")
        for layer in self.layers or ():
            if not 0 <= layer < n_layers:
                raise ValueError(f"alignment layer {layer} does not exist; the decoder has layers 0..{n_layers - 1}")
        for h in self.heads or ():
            if not 0 <= h < n_heads:
                raise ValueError(f"head {h} does not exist; the cross-attention has heads 0..{n_heads - 1}")
        return self


def _collate(seqs: Sequence[torch.Tensor], pad: int, left: bool) -> torch.Tensor:
    n = max(len(s) for s in seqs)
    out = torch.full((len(seqs), n), pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        if left:
            out[i, n - len(s):] = s
        else:
            out[i, : len(s)] = s
    return out


@torch.no_grad()
def score_pairs(model, src: Sequence[torch.Tensor], tgt: Sequence[torch.Tensor], pad: int, eos: int,
                methods: Sequence[str], layers: Sequence[int]) -> list[dict[tuple[str, int], np.ndarray]]:
    """Scores of each pair: ``{(method, layer): (steps, S) or (H, steps, S)}`` per sentence.

    ``src`` token tensors end with EOS (as fairseq's source side does); ``tgt`` tensors end with
    EOS. Steps are ``len(tgt)`` decoder positions fed ``[EOS] + tgt[:-1]``. Padding is masked, so
    batch composition and padding side never change a score.
    """
    src_tokens = _collate(src, pad, left=True)
    src_lengths = torch.tensor([len(s) for s in src])
    prev = _collate([torch.cat([s.new_tensor([eos]), s[:-1]]) for s in tgt], pad, left=False)
    with CrossAttentionRecorder(model) as rec:
        model(src_tokens, src_lengths, prev)
    return scores_from_recorder(rec, src_tokens != pad, prev != pad, methods, layers)


def scores_from_recorder(rec: CrossAttentionRecorder, src_mask: torch.Tensor, tgt_mask: torch.Tensor,
                         methods: Sequence[str], layers: Sequence[int]) -> list[dict[tuple[str, int], np.ndarray]]:
    """Per-sentence scores of a recorded teacher-forced pass; ``src_mask`` (B, S) and ``tgt_mask``
    (B, T) mark real tokens (either padding side), rows and columns of padding are cut off."""
    out: list[dict] = [{} for _ in range(src_mask.shape[0])]
    cols = [torch.nonzero(m).squeeze(-1).numpy() for m in src_mask.cpu()]
    rows = [torch.nonzero(m).squeeze(-1).numpy() for m in tgt_mask.cpu()]
    for layer_idx in layers:
        inputs, _ = rec.layer_inputs(layer_idx)
        scores = layer_scores(inputs, rec.layer(layer_idx), list(methods), src_mask, tgt_mask)
        for name in methods:
            arr = scores[name].cpu().numpy()
            for i in range(len(out)):
                out[i][(name, layer_idx)] = arr[i][..., rows[i][:, None], cols[i]]
    return out


def word_maps(src_pieces: Sequence[str], tgt_pieces: Sequence[str], spec: AlignSpec) -> tuple[np.ndarray, np.ndarray]:
    """Word id per source and target token (EOS and other specials -> -1)."""
    if spec.level == "subword":
        mk = lambda toks: np.array([SPECIAL if t in spec.specials else 0 for t in toks])  # noqa: E731
        return mk(src_pieces), mk(tgt_pieces)
    return word_map(src_pieces, spec.scheme, spec.specials), word_map(tgt_pieces, spec.scheme, spec.specials)


def links_for(scores: dict, src_words: np.ndarray, tgt_words: np.ndarray, n_target: int, spec: AlignSpec,
              method: str, layer: int, shift: str, head: int | None = None) -> list[tuple[int, int]]:
    """Word (or subword) links of one sentence for one (method, layer, shift[, head])."""
    m = scores[(method, layer)]
    if m.ndim == 3:  # per head: one head, or the mean of the chosen heads
        m = m[head] if head is not None else m[list(spec.heads) if spec.heads else slice(None)].mean(0)
    rows = select_rows(m, n_target, shift)
    return token_scores_to_links(rows, src_words, tgt_words[:n_target], spec.level, spec.decoder,
                                 spec.src_reduce, spec.tgt_reduce, spec.specials_policy)


def detect_scheme(dictionary) -> str:
    """sentencepiece if many symbols start with '▁', subword-nmt if many end with '@@', else none."""
    symbols = dictionary.symbols[dictionary.nspecial:]
    sp = sum(s.startswith("\u2581") for s in symbols)
    bpe = sum(s.endswith("@@") for s in symbols)
    if max(sp, bpe) < 0.05 * max(len(symbols), 1):
        return "none"
    return "sentencepiece" if sp >= bpe else "subword-nmt"


def n_layers_heads(model) -> tuple[int, int]:
    """Decoder layer count and cross-attention head count."""
    layers = decoder_layers(model)
    return len(layers), layers[0].encoder_attn.num_heads
