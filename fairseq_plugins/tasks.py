"""``--task translation_norm_align``: fairseq's translation task whose ``A-`` lines come from the
norm-based methods, forced (``--score-reference``) or free (beam search), plus a per-(method,
layer, shift, head) dump of word alignments in input order.
"""


import logging
import os
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
from fairseq.sequence_scorer import SequenceScorer
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask

from align.extract import dump_name
from align.formats import format_links, write_text_atomic
from align.norms import METHODS

from .capture import CrossAttentionRecorder
from .engine import AlignSpec, detect_scheme, links_for, n_layers_heads, score_pairs, scores_from_recorder, word_maps

logger = logging.getLogger(__name__)


@dataclass
class NormAlignConfig(TranslationConfig):
    alignment_method: str = field(default="norm", metadata={
        "help": f"score behind the A- lines, one of: {', '.join(METHODS)}"})
    alignment_layer: Optional[int] = field(default=None, metadata={
        "help": "decoder layer, 0-based as in fairseq (default: the last)"})
    alignment_heads: Optional[str] = field(default=None, metadata={
        "help": "comma-separated heads averaged by per-head methods (default: all)"})
    alignment_shift: str = field(default="awo", metadata={
        "help": "awo: read target word i at the step that predicts it; awi: where it is the input"})
    alignment_level: str = field(default="word", metadata={
        "help": "word (subwords merged: sum over source pieces, mean over target pieces), "
                "subword (token positions, as fairseq's own), or word-any (word pair linked if any pieces are)"})
    alignment_decoder: str = field(default="argmax", metadata={
        "help": "argmax (each target word to its best source word), argmax-src, intersect, itermax, ..."})
    alignment_specials: str = field(default="drop", metadata={
        "help": "drop: EOS is removed before decoding; null: a word whose best source is EOS stays unaligned"})
    alignment_subwords: str = field(default="auto", metadata={
        "help": "subword scheme of the dictionaries: sentencepiece, subword-nmt, or auto (read the dictionary)"})
    alignment_dump: Optional[str] = field(default=None, metadata={
        "help": "folder: write one Pharaoh file per (method, shift, layer[, head]) in input order"})
    alignment_dump_methods: str = field(default="attn,norm,attn-res-ln,attn-head,norm-head", metadata={
        "help": "methods written by --alignment-dump"})
    alignment_dump_shifts: str = field(default="awo,awi", metadata={"help": "shifts written by --alignment-dump"})


def _csv(s: Optional[str]) -> tuple[str, ...]:
    return tuple(x.strip() for x in s.split(",") if x.strip()) if s else ()


@register_task("translation_norm_align", dataclass=NormAlignConfig)
class TranslationNormAlignTask(TranslationTask):
    """Translation task with norm-aware alignments; see ``NormAlignConfig`` for the flags."""

    cfg: NormAlignConfig

    def get_batch_iterator(self, dataset, *args, **kwargs):
        # fairseq-fixed's batch_by_size drops the last batch unless its size is a multiple of
        # --required-batch-size-multiple; that multiple only serves training speed, so alignment
        # batches use 1, and every sentence is accounted for below.
        if len(args) >= 5:
            args = args[:4] + (1,) + args[5:]
        else:
            kwargs["required_batch_size_multiple"] = 1
        itr = super().get_batch_iterator(dataset, *args, **kwargs)
        self.aligned_dataset_size = len(dataset)
        n_batched = sum(len(b) for b in itr.frozen_batches)
        if n_batched != len(dataset) and kwargs.get("num_shards", 1) == 1:
            raise ValueError(f"batching kept {n_batched} of {len(dataset)} sentences (too long for the model's "
                             "max positions?); alignments must cover every input line: raise --max-source-positions "
                             "/ --max-target-positions or shorten the input")
        return itr

    def build_generator(self, models, args, seq_gen_cls=None, extra_gen_cls_kwargs=None, prefix_allowed_tokens_fn=None):
        inner = super().build_generator(models, args, seq_gen_cls=seq_gen_cls, extra_gen_cls_kwargs=extra_gen_cls_kwargs,
                                        prefix_allowed_tokens_fn=prefix_allowed_tokens_fn)
        if len(models) != 1:
            raise ValueError(f"norm-aware alignment reads one model's attention; got an ensemble of {len(models)}")
        return NormAlignGenerator(inner, self, models[0], nbest=getattr(args, "nbest", 1))

    def alignment_spec(self, model) -> "tuple[AlignSpec, Optional[AlignSpec]]":
        """The A-line spec and the dump spec (None without --alignment-dump), checked against the model."""
        n_layers, n_heads = n_layers_heads(model)
        scheme = self.cfg.alignment_subwords
        if scheme == "auto":
            scheme = detect_scheme(self.tgt_dict)
        level = self.cfg.alignment_level
        if scheme == "none" and level != "subword":
            raise ValueError("the dictionaries look like neither SentencePiece ('▁') nor subword-nmt ('@@'): "
                             "pass --alignment-subwords or --alignment-level subword")
        layer = self.cfg.alignment_layer if self.cfg.alignment_layer is not None else n_layers - 1
        heads = tuple(int(h) for h in _csv(self.cfg.alignment_heads)) or None
        common = dict(level=level, decoder=self.cfg.alignment_decoder, specials_policy=self.cfg.alignment_specials,
                      scheme=scheme if scheme != "none" else "sentencepiece",
                      specials=(self.tgt_dict[self.tgt_dict.eos()], self.tgt_dict[self.tgt_dict.bos()],
                                self.tgt_dict[self.tgt_dict.pad()]))
        main = AlignSpec(methods=(self.cfg.alignment_method,), layers=(layer,), shifts=(self.cfg.alignment_shift,),
                         heads=heads, **common).validate(n_layers, n_heads)
        dump = None
        if self.cfg.alignment_dump:
            dump = AlignSpec(methods=_csv(self.cfg.alignment_dump_methods), layers=tuple(range(n_layers)),
                             shifts=_csv(self.cfg.alignment_dump_shifts), **common).validate(n_layers, n_heads)
        return main, dump


class NormAlignGenerator:
    """Wraps fairseq's scorer or generator. With ``--score-reference`` the scorer's own forward pass
    is recorded; after free decoding, one teacher-forced pass over the hypotheses. Either way one
    recorded pass gives every method, layer, shift and head."""

    def __init__(self, inner, task: TranslationNormAlignTask, model, nbest: int = 1) -> None:
        self.inner, self.task, self.model, self.nbest = inner, task, model, max(1, nbest)
        self.spec, self.dump_spec = task.alignment_spec(model)
        self.dump: dict[str, dict[int, str]] = {}
        self.n_total = None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    @torch.no_grad()
    def generate(self, models, sample, **kwargs):
        d = self.task.src_dict
        pad, eos = d.pad(), d.eos()
        spec = self.spec
        methods = sorted(set(spec.methods) | set(self.dump_spec.methods if self.dump_spec else ()))
        layers = sorted(set(spec.layers) | set(self.dump_spec.layers if self.dump_spec else ()))
        self.model.eval()
        src_rows = sample["net_input"]["src_tokens"]
        if isinstance(self.inner, SequenceScorer):
            # --score-reference: the scorer's own teacher-forced pass is the one we need; record it.
            with CrossAttentionRecorder(self.model) as rec:
                hypos = self.inner.generate(models, sample, **kwargs)
            prev = sample["net_input"]["prev_output_tokens"]
            scores = scores_from_recorder(rec, src_rows != pad, prev != pad, methods, layers)
            pairs = [(i, 0, src_rows[i][src_rows[i] != pad].cpu(), hypos[i][0]["tokens"].cpu())
                     for i in range(len(hypos))]
        else:
            hypos = self.inner.generate(models, sample, **kwargs)
            pairs = []
            for i in range(len(hypos)):
                src = src_rows[i][src_rows[i] != pad].cpu()
                for k, hypo in enumerate(hypos[i][: self.nbest]):
                    pairs.append((i, k, src, hypo["tokens"].cpu()))
            scores = score_pairs(self.model, [p[2] for p in pairs], [p[3] for p in pairs], pad, eos, methods, layers)
        ids = sample["id"].tolist()
        for (i, k, src, tgt), sc in zip(pairs, scores):
            src_pieces = [d[t] for t in src.tolist()]
            tgt_pieces = [self.task.tgt_dict[t] for t in tgt.tolist()[:-1]]
            try:
                sw, tw = word_maps(src_pieces, tgt_pieces, spec)
            except ValueError as e:
                raise ValueError(f"sentence {ids[i]}: {e}") from None
            n_target = len(tgt_pieces)
            hypo = hypos[i][k]
            hypo["alignment"] = links_for(sc, sw, tw, n_target, spec, spec.methods[0], spec.layers[0], spec.shifts[0])
            if self.dump_spec is not None and k == 0:
                self._collect(ids[i], sc, sw, tw, n_target)
        if self.dump_spec is not None:
            self._maybe_write()
        return hypos

    def _collect(self, sid: int, sc: dict, sw: np.ndarray, tw: np.ndarray, n_target: int) -> None:
        spec = self.dump_spec
        for method in spec.methods:
            for layer in spec.layers:
                heads = range(sc[(method, layer)].shape[0]) if method.endswith("-head") else [None]
                for shift in spec.shifts:
                    for h in heads:
                        links = links_for(sc, sw, tw, n_target, spec, method, layer, shift, h)
                        self.dump.setdefault(dump_name(method, shift, layer, h), {})[sid] = format_links(links)

    def _maybe_write(self) -> None:
        if self.n_total is None:
            self.n_total = getattr(self.task, "aligned_dataset_size", None)
            if self.n_total is None:
                raise RuntimeError("--alignment-dump needs the task's batch iterator (fairseq-generate's)")
        first = next(iter(self.dump.values()), {})
        if len(first) < self.n_total:
            return
        folder = self.task.cfg.alignment_dump
        os.makedirs(folder, exist_ok=True)
        for name, lines in self.dump.items():
            if sorted(lines) != list(range(self.n_total)):
                raise ValueError(f"{name}: alignments for {len(lines)} sentence ids, expected 0..{self.n_total - 1}")
            write_text_atomic(os.path.join(folder, name), "".join(lines[k] + "\n" for k in range(self.n_total)))
        logger.info("wrote %d alignment files of %d sentences to %s", len(self.dump), self.n_total, folder)
        self.dump = {}
