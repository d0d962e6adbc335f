"""Python API: load a fairseq checkpoint with its SentencePiece model and align raw sentence pairs
in memory, without binarizing data.

>>> aligner = NormAligner.from_checkpoint("data/models/enfr/model.pt")          # doctest: +SKIP
>>> out = aligner.align(["the house ."], ["la maison ."], methods=["norm"], shifts=["awi"])  # doctest: +SKIP
>>> out[("norm", 2, "awi")][0]                                                  # doctest: +SKIP
[(0, 0), (1, 1), (2, 2)]
"""

from __future__ import annotations

import os
from typing import Iterable, Sequence

import numpy as np
import torch

from align.extract import select_rows
from align.formats import split_tokens
from align.subwords import aggregate_scores, check_word_map, word_map

from .engine import AlignSpec, detect_scheme, links_for, n_layers_heads, score_pairs

os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")

Key = tuple[str, int, str]


class NormAligner:
    """A loaded translation model that aligns (source, target) sentence pairs with every method."""

    def __init__(self, model, src_dict, tgt_dict, spm=None, scheme: str = "auto") -> None:
        self.model, self.src_dict, self.tgt_dict = model.eval(), src_dict, tgt_dict
        if scheme == "auto":
            scheme = detect_scheme(tgt_dict)
            if scheme == "none":
                raise ValueError("the dictionary looks like neither SentencePiece ('▁') nor subword-nmt ('@@'): "
                                 "pass scheme='sentencepiece' or 'subword-nmt'")
        self.spm, self.scheme = spm, scheme
        self.n_layers, self.n_heads = n_layers_heads(model)

    @classmethod
    def from_checkpoint(cls, checkpoint: str, data_dir: str | None = None, spm_model: str | None = None,
                        source_lang: str | None = None, target_lang: str | None = None,
                        scheme: str = "auto") -> "NormAligner":
        """Load ``checkpoint``; dictionaries from ``data_dir`` (default: the checkpoint's folder) and
        SentencePiece from ``spm_model`` (default: ``spm.model`` beside the checkpoint, if any)."""
        from fairseq import checkpoint_utils

        folder = os.path.dirname(os.path.abspath(checkpoint))
        data_dir = data_dir or folder
        overrides = {"data": data_dir}
        if source_lang:
            overrides["source_lang"] = source_lang
        if target_lang:
            overrides["target_lang"] = target_lang
        models, _cfg, task = checkpoint_utils.load_model_ensemble_and_task([checkpoint], arg_overrides=overrides)
        spm = None
        spm_model = spm_model or (os.path.join(folder, "spm.model") if os.path.exists(os.path.join(folder, "spm.model")) else None)
        if spm_model:
            import sentencepiece

            spm = sentencepiece.SentencePieceProcessor(model_file=spm_model)
        return cls(models[0].float(), task.source_dictionary, task.target_dictionary, spm, scheme)

    def _encode(self, sentence: str | Sequence[str], dictionary, what: str, index: int) -> tuple[torch.Tensor, list[str]]:
        tokens = split_tokens(sentence) if isinstance(sentence, str) else list(sentence)
        if self.spm is None:  # already subword-segmented text: the words follow from the markers
            pieces = tokens
            word_map(pieces, self.scheme)
        else:
            pieces = self.spm.encode(" ".join(tokens), out_type=str)
            check_word_map(pieces, word_map(pieces, self.scheme), tokens, sentence=f"{what} sentence {index}")
        ids = [dictionary.index(p) for p in pieces] + [dictionary.eos()]
        return torch.tensor(ids, dtype=torch.long), pieces

    def align(self, sources: Sequence[str | Sequence[str]], targets: Sequence[str | Sequence[str]],
              methods: Iterable[str] = ("norm",), layers: Iterable[int] | None = None,
              shifts: Iterable[str] = ("awi",), level: str = "word", decoder: str = "argmax",
              batch_size: int = 32, progress: bool | None = None) -> dict[Key, list[list[tuple[int, int]]]]:
        """Word links per sentence for every (method, layer, shift); per-head methods average all heads.

        Sentences are tokenized text (split on ASCII spaces) or word lists (subword-segmented when
        the aligner has no SentencePiece model); links are 0-based
        ``(src_word, tgt_word)``. Output order is input order whatever the batching.
        """
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} source sentences but {len(targets)} target sentences")
        layers = tuple(range(self.n_layers)) if layers is None else tuple(layers)
        spec = AlignSpec(methods=tuple(methods), layers=layers, shifts=tuple(shifts), level=level, decoder=decoder,
                         scheme=self.scheme, specials=(self.tgt_dict[self.tgt_dict.eos()],)).validate(self.n_layers, self.n_heads)
        enc = [(self._encode(s, self.src_dict, "source", i), self._encode(t, self.tgt_dict, "target", i))
               for i, (s, t) in enumerate(zip(sources, targets))]
        out: dict[Key, list] = {(m, la, sh): [None] * len(enc) for m in spec.methods for la in layers for sh in spec.shifts}
        order = sorted(range(len(enc)), key=lambda i: (len(enc[i][0][0]), len(enc[i][1][0])))
        batches = [order[k:k + batch_size] for k in range(0, len(order), batch_size)]
        if progress or (progress is None and len(batches) > 10):
            from tqdm import tqdm

            batches = tqdm(batches, desc="aligning", unit="batch")
        for batch in batches:
            scores = score_pairs(self.model, [enc[i][0][0] for i in batch], [enc[i][1][0] for i in batch],
                                 self.src_dict.pad(), self.src_dict.eos(), spec.methods, layers)
            for i, sc in zip(batch, scores):
                (_, sp), (_, tp) = enc[i]
                sw = word_map(list(sp) + [self.src_dict[self.src_dict.eos()]], self.scheme, (self.src_dict[self.src_dict.eos()],))
                tw = word_map(tp, self.scheme)
                for key in out:
                    out[key][i] = links_for(sc, sw, tw, len(tp), spec, *key)
        return out

    def score_matrix(self, source: str | Sequence[str], target: str | Sequence[str], method: str = "norm",
                     layer: int | None = None, shift: str = "awi") -> np.ndarray:
        """Word-level scores (tgt_words, src_words) of one pair, for plotting (per-head: mean of heads)."""
        layer = self.n_layers - 1 if layer is None else layer
        (src, sp), (tgt, tp) = self._encode(source, self.src_dict, "source", 0), self._encode(target, self.tgt_dict, "target", 0)
        sc = score_pairs(self.model, [src], [tgt], self.src_dict.pad(), self.src_dict.eos(), [method], [layer])[0]
        m = sc[(method, layer)]
        m = m.mean(0) if m.ndim == 3 else m
        rows = select_rows(m, len(tp), shift)
        return aggregate_scores(rows, word_map(list(sp) + ["</s>"], self.scheme, ("</s>",)), word_map(tp, self.scheme))
