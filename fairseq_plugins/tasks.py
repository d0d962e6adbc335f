"""``--task translation_norm_align``: fairseq's translation task whose ``A-`` lines come from the
norm-based methods, forced (``--score-reference``) or free (beam search), plus a per-(method,
layer, shift, head) dump of word alignments in input order.
"""

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import torch
from fairseq.sequence_scorer import SequenceScorer
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask

from align.attribution.methods import METHODS
from align.extraction.adapters import FairseqAdapter
from align.extraction.engine import Recorder, check_spec, links_for, n_layers_heads, score_pairs, score_recorded
from align.extraction.launch import shard_from_env
from align.extraction.outputs import OutputExistsError, check_destination, clean_stale
from align.io.formats import format_links
from align.io.inputs import LINE_BREAKS, InputError
from align.links.decode import DECODERS
from align.links.subwords import SPECIAL, WORD_MAPS, WordMapError, word_map
from align.spec.alignspec import LEVELS, SPECIALS, AlignSpec
from align.spec.setting import SHIFTS, Setting

from . import checkpoint
from .engine import detect_scheme, piece_words, specials_of

logger = logging.getLogger(__name__)


DECODER_OPTIONS = {"threshold": "threshold", "relative-threshold": "ratio"}
"""The decoders that take ``--alignment-threshold``, and the option it sets."""


def _option(default: Any, help: str) -> Any:
    """A task option: its default and its ``--help`` text (fairseq reads both from the dataclass field)."""
    return field(default=default, metadata={"help": help})


@dataclass
class NormAlignConfig(TranslationConfig):
    alignment_method: str = _option("norm", f"score behind the A- lines, one of: {', '.join(METHODS)}")
    alignment_layer: Optional[int] = _option(None, "decoder layer, 0-based as in fairseq (default: the last)")
    alignment_heads: Optional[str] = _option(
        None, "comma-separated heads averaged by a per-head method (attn-head, norm-head); default: all"
    )
    alignment_shift: str = _option(
        "awo", "awo: read target word i at the step that predicts it; awi: where it is the input"
    )
    alignment_level: str = _option(
        "word",
        "word (subwords merged: sum over source pieces, mean over target pieces), "
        "subword (token positions, as fairseq's own), or word-any (word pair linked if any pieces are)",
    )
    alignment_decoder: str = _option("argmax", f"one of: {', '.join(DECODERS)}")
    alignment_threshold: Optional[float] = _option(
        None,
        "cutoff of the threshold decoders: threshold keeps cells whose share of their row is >= it "
        "(default 0.1); relative-threshold keeps cells >= it times the row maximum (default 0.5)",
    )
    alignment_specials: str = _option(
        "drop", "drop: EOS is removed before decoding; null: a word whose best source is EOS stays unaligned"
    )
    alignment_subwords: str = _option(
        "auto", "subword scheme of the dictionaries: sentencepiece, subword-nmt, or auto (read the dictionary)"
    )
    alignment_text: Optional[str] = _option(
        None,
        "prefix of the segmented text given to fairseq-preprocess (PREFIX.SRC, PREFIX.TGT): word boundaries "
        "of pieces the dictionary lacks (<unk>) come from it; without it such a sentence is an error",
    )
    alignment_dump: Optional[str] = _option(
        None,
        "folder: write one Pharaoh file per (method, shift, layer[, head]) in input order; under "
        "--distributed-world-size N each rank writes DIR/shard-K-of-N/ (merge with align-merge DIR)",
    )
    alignment_dump_overwrite: bool = _option(
        False,
        "replace an existing --alignment-dump folder (whole, at the end); without it a used folder is an "
        "error before any work",
    )
    alignment_shard: Optional[str] = _option(
        None,
        "auto: when fairseq's --distributed-world-size is not given, the shard comes from the launcher "
        "(torchrun/accelerate RANK and WORLD_SIZE, or Slurm), and the last rank to finish merges the dump "
        "into DIR/merged/",
    )
    alignment_dump_methods: str = _option(
        "attn,norm,attn-res-ln,attn-head,norm-head", "methods written by --alignment-dump"
    )
    alignment_dump_shifts: str = _option("awo,awi", "shifts written by --alignment-dump")
    trust_checkpoint: bool = _option(False, checkpoint.TRUST_CHECKPOINT_HELP)


def _csv(s: Optional[str]) -> tuple[str, ...]:
    return tuple(x.strip() for x in s.split(",") if x.strip()) if s else ()


class PluginUsageError(ValueError):
    """A bad --alignment-* flag: fairseq-generate stops before any work, exit status 2."""


def _choice(flag: str, value: str, valid) -> None:
    if value not in valid:
        raise PluginUsageError(f"--{flag} {value!r} is unknown; valid: {', '.join(valid)}")


def validate_config(cfg: NormAlignConfig) -> tuple[int, ...] | None:
    """Check every --alignment-* flag before any work, naming the flag; returns the parsed heads."""
    _choice("alignment-method", cfg.alignment_method, list(METHODS))
    _choice("alignment-shift", cfg.alignment_shift, SHIFTS)
    _choice("alignment-level", cfg.alignment_level, LEVELS)
    _choice("alignment-decoder", cfg.alignment_decoder, list(DECODERS))
    _choice("alignment-specials", cfg.alignment_specials, SPECIALS)
    _choice("alignment-subwords", cfg.alignment_subwords, ["auto", *WORD_MAPS])
    for m in _csv(cfg.alignment_dump_methods):
        _choice("alignment-dump-methods", m, list(METHODS))
    # a trained alignment layer is attached by align-extract (it checks the layer against the model); the plugin
    # has no flag for one
    for flag, ms in (
        ("alignment-method", [cfg.alignment_method]),
        ("alignment-dump-methods", _csv(cfg.alignment_dump_methods)),
    ):
        if any("alignment-layer" in METHODS[m].needs for m in ms):
            raise PluginUsageError(
                f"--{flag}: learned needs a trained alignment layer, which the plugin does not load; "
                "use align-extract --methods learned"
            )
    for sh in _csv(cfg.alignment_dump_shifts):
        _choice("alignment-dump-shifts", sh, SHIFTS)
    if cfg.alignment_threshold is not None and cfg.alignment_decoder not in DECODER_OPTIONS:
        raise PluginUsageError(
            f"--alignment-threshold applies to the decoders {', '.join(DECODER_OPTIONS)}; "
            f"--alignment-decoder is {cfg.alignment_decoder}"
        )
    heads = None
    if cfg.alignment_heads:
        try:
            heads = tuple(int(h) for h in _csv(cfg.alignment_heads))
        except ValueError:
            raise PluginUsageError(
                f"--alignment-heads {cfg.alignment_heads!r}: expected comma-separated head numbers such as 0,2"
            ) from None
        if not METHODS[cfg.alignment_method].per_head:
            per_head = [m for m in METHODS if METHODS[m].per_head]
            raise PluginUsageError(
                f"--alignment-heads applies to per-head methods ({', '.join(per_head)}); "
                f"--alignment-method {cfg.alignment_method} sums over all heads"
            )
    if cfg.alignment_shard not in (None, "auto"):
        raise PluginUsageError(
            f"--alignment-shard {cfg.alignment_shard!r}: expected auto (fairseq's own "
            "--distributed-world-size N --distributed-rank K give a shard by hand)"
        )
    if cfg.alignment_shard and not cfg.alignment_dump:
        raise PluginUsageError("--alignment-shard auto needs --alignment-dump DIR")
    if cfg.alignment_dump:
        try:
            if os.path.exists(cfg.alignment_dump) and not os.path.isdir(cfg.alignment_dump):
                raise OutputExistsError(f"{cfg.alignment_dump}: exists and is not a folder")
            os.makedirs(os.path.dirname(os.path.abspath(cfg.alignment_dump)), exist_ok=True)
        except OSError as e:
            raise PluginUsageError(f"--alignment-dump {cfg.alignment_dump}: cannot be created ({e.strerror})") from None
        except OutputExistsError as e:
            raise PluginUsageError(f"--alignment-dump {e}; expected a folder") from None
    return heads


def read_segmented_text(path: str, lowercased: bool) -> list[str]:
    """The lines of the segmented text given to fairseq-preprocess, split on ``\n`` only. A bare carriage
    return or Unicode line separator inside a line is an error with file:line: fairseq-preprocess reads
    text with universal newlines and split the line there, so the binarized data and the text no longer
    match line for line. Uppercase letters for a model trained on lowercased text are an error too."""
    from align.io.lines import read_lines

    lines = read_lines(path)
    for n, line in enumerate(lines, 1):
        for ch, what in LINE_BREAKS.items():
            if ch in line:
                raise InputError(
                    path,
                    n,
                    f"{what} inside the line: fairseq-preprocess split the line there, so "
                    "the binarized sentences after it no longer match this text; expected one sentence "
                    "per line: remove it, then binarize again",
                )
        if lowercased and line != line.lower():
            raise InputError(
                path,
                n,
                "uppercase letters, but the model was trained on lowercased text (its "
                "model_config.json says preprocessing.lowercase): lowercase the text before "
                "SentencePiece and fairseq-preprocess, or use align-extract, which does it",
            )
    return lines


@register_task("translation_norm_align", dataclass=NormAlignConfig)
class TranslationNormAlignTask(TranslationTask):
    """Translation task with norm-aware alignments; see ``NormAlignConfig`` for the flags."""

    cfg: NormAlignConfig

    def __init__(self, cfg: NormAlignConfig, src_dict, tgt_dict) -> None:
        self.heads = validate_config(cfg)  # before any data or model is read
        checkpoint.set_trust_checkpoint(cfg.trust_checkpoint)  # fairseq loads the model after the task
        super().__init__(cfg, src_dict, tgt_dict)
        self._text: dict[str, list[str]] = {}

    def get_batch_iterator(self, dataset, *args, **kwargs):
        # fairseq-fixed's batch_by_size drops the last batch unless its size is a multiple of
        # --required-batch-size-multiple; that multiple only serves training speed, so alignment
        # batches use 1, and every sentence is accounted for below.
        if len(args) >= 5:
            args = args[:4] + (1,) + args[5:]
        else:
            kwargs["required_batch_size_multiple"] = 1
        if self.cfg.alignment_shard == "auto" and kwargs.get("num_shards", 1) == 1:
            try:  # fairseq's own distributed flags were not given: the launcher's environment says
                sh = shard_from_env()
            except ValueError as e:
                raise PluginUsageError(f"--alignment-shard auto: {e}") from None
            kwargs["num_shards"], kwargs["shard_id"] = sh.count, sh.index
        shards, shard = kwargs.get("num_shards", 1), kwargs.get("shard_id", 0)
        # under a launcher, one process too writes its shard and merges: the dump always ends in DIR/merged/
        self.sharded = shards > 1 or self.cfg.alignment_shard == "auto"
        self.subset = next((k for k, v in self.datasets.items() if v is dataset), "test")
        if self.cfg.alignment_dump:  # before the first batch: a used or bad folder loses no decoding
            folder = self.cfg.alignment_dump
            dest = os.path.join(folder, f"shard-{shard}-of-{shards}") if self.sharded else folder
            try:
                check_destination(
                    dest,
                    self.cfg.alignment_dump_overwrite,
                    "shard folder" if self.sharded else "--alignment-dump folder",
                    inputs=(*str(self.cfg.data).split(os.pathsep), self.cfg.alignment_text or ""),
                )
            except OutputExistsError as e:
                raise PluginUsageError(str(e)) from None
            clean_stale(dest)
        itr = super().get_batch_iterator(dataset, *args, **kwargs)
        self.aligned_dataset_size = len(dataset)
        batches = list(itr.frozen_batches)
        n_batched = sum(len(b) for b in batches)
        if n_batched != len(dataset):
            raise ValueError(
                f"batching kept {n_batched} of {len(dataset)} sentences (too long for the model's "
                "max positions?); alignments must cover every input line: raise --max-source-positions "
                "/ --max-target-positions or shorten the input"
            )
        # ShardedIterator gives rank K the batches K, K + N, ...: the sentence ids this rank must write
        self.shard = (shard, shards)
        self.expected_ids = sorted(int(i) for b in batches[shard::shards] for i in b)
        return itr

    def build_generator(self, models, args, seq_gen_cls=None, extra_gen_cls_kwargs=None, prefix_allowed_tokens_fn=None):
        inner = super().build_generator(
            models,
            args,
            seq_gen_cls=seq_gen_cls,
            extra_gen_cls_kwargs=extra_gen_cls_kwargs,
            prefix_allowed_tokens_fn=prefix_allowed_tokens_fn,
        )
        if len(models) != 1:
            raise ValueError(f"norm-aware alignment reads one model's attention; got an ensemble of {len(models)}")
        return NormAlignGenerator(inner, self, models[0], nbest=getattr(args, "nbest", 1))

    def adapter(self) -> FairseqAdapter:
        return FairseqAdapter(self.src_dict.pad(), self.src_dict.eos())

    def alignment_spec(self, model) -> "tuple[AlignSpec, Optional[AlignSpec]]":
        """The A-line spec and the dump spec (None without --alignment-dump), checked against the model."""
        n_layers, n_heads = n_layers_heads(model, self.adapter())
        scheme = self.cfg.alignment_subwords
        if scheme == "auto":
            scheme = detect_scheme(self.tgt_dict)
        level = self.cfg.alignment_level
        if scheme == "none" and level != "subword":
            raise ValueError(
                "the dictionaries look like neither SentencePiece ('▁') nor subword-nmt ('@@'): "
                "pass --alignment-subwords or --alignment-level subword"
            )
        self.scheme = scheme if scheme != "none" else "sentencepiece"
        layer = self.cfg.alignment_layer if self.cfg.alignment_layer is not None else n_layers - 1
        options: tuple[tuple[str, float], ...] = ()
        if self.cfg.alignment_threshold is not None:
            options = ((DECODER_OPTIONS[self.cfg.alignment_decoder], float(self.cfg.alignment_threshold)),)
        common = dict(
            level=level,
            decoder=self.cfg.alignment_decoder,
            specials_policy=self.cfg.alignment_specials,
            decoder_options=options,
        )
        try:
            main = check_spec(
                AlignSpec(
                    methods=(self.cfg.alignment_method,),
                    layers=(layer,),
                    shifts=(self.cfg.alignment_shift,),
                    heads=self.heads,
                    **common,
                ),
                n_layers,
                n_heads,
            )
        except ValueError as e:
            raise ValueError(f"--alignment-layer/--alignment-heads: {e}") from None
        dump = None
        if self.cfg.alignment_dump:
            dump = check_spec(
                AlignSpec(
                    methods=_csv(self.cfg.alignment_dump_methods),
                    layers=tuple(range(n_layers)),
                    shifts=_csv(self.cfg.alignment_dump_shifts),
                    **common,
                ),
                n_layers,
                n_heads,
            )
        return main, dump

    def text_pieces(self, side: str, sid: int) -> Optional[list[str]]:
        """The pieces of sentence ``sid`` on ``side`` ('src'/'tgt') from --alignment-text, or None."""
        if not self.cfg.alignment_text or side not in ("src", "tgt"):
            return None
        lang = self.cfg.source_lang if side == "src" else self.cfg.target_lang
        if side not in self._text:
            self._text[side] = read_segmented_text(f"{self.cfg.alignment_text}.{lang}", self.lowercased_model())
        lines = self._text[side]
        if sid >= len(lines):
            raise ValueError(f"{self.cfg.alignment_text}.{lang} has {len(lines)} lines; sentence {sid} has none")
        return lines[sid].split()

    def run_signature(self, spec: AlignSpec, sentences: int) -> dict:
        """What makes this dump (align.spec.signature): the model's files, the binarized data, the settings."""
        from align import __version__
        from align.spec.signature import Signature, files_digest, spec_settings

        path = checkpoint.last_loaded()
        model = {"sha256": files_digest(checkpoint.model_files(path))} if path else {}
        data = [
            os.path.join(d, n)
            for d in str(self.cfg.data).split(os.pathsep)
            if os.path.isdir(d)
            for n in sorted(os.listdir(d))
            if n.startswith(f"{self.subset}.") or n.startswith("dict.")
        ]
        settings = spec_settings(spec, heads=False)
        settings.update(subwords=self.scheme, alignment_text=bool(self.cfg.alignment_text))
        return Signature(
            model=model,
            input={"sha256": files_digest(data), "sentences": sentences, "subset": self.subset},
            settings=settings,
            version=__version__,
        ).as_dict()

    def lowercased_model(self) -> bool:
        """Whether the model being run records lowercased training text (its model_config.json)."""
        path = checkpoint.last_loaded()
        return bool(path and checkpoint.read_preprocessing(path).get("lowercase"))

    def word_ids(self, tokens: list[int], dictionary, side: str, sid: int, level: str) -> np.ndarray:
        """Word id per token of one side (the trailing EOS included, -1); <unk> pieces from --alignment-text."""
        pieces = [dictionary[t] for t in tokens]
        specials = specials_of(dictionary)
        what = f"sentence {sid} ({'source' if side == 'src' else 'target'})"
        if level == "subword":
            return np.array([SPECIAL if p in specials else 0 for p in pieces])
        unk = dictionary.unk_word
        if unk in pieces:
            text = self.text_pieces(side, sid)
            if text is not None:
                real = [p for p in pieces if p not in specials]
                if len(text) != len(real) or any(a != b and a != unk for a, b in zip(real, text)):
                    raise WordMapError(
                        f"{what}: --alignment-text line {sid + 1} has pieces {' '.join(text)} but the "
                        f"binarized sentence has {' '.join(real)}"
                    )
                k = iter(text)
                pieces = [p if p in specials else next(k) for p in pieces]
                return word_map(pieces, self.scheme, specials)
        return piece_words(pieces, self.scheme, specials, unk, what)


class NormAlignGenerator:
    """Wraps fairseq's scorer or generator. With ``--score-reference`` the scorer's own forward pass
    is recorded; after free decoding, one teacher-forced pass over the hypotheses. Either way one
    recorded pass gives every method, layer, shift and head."""

    def __init__(self, inner, task: TranslationNormAlignTask, model, nbest: int = 1) -> None:
        self.inner, self.task, self.model, self.nbest = inner, task, model, max(1, nbest)
        self.spec, self.dump_spec = task.alignment_spec(model)
        self.adapter = task.adapter()
        self.dump: dict[str, dict[int, str]] = {}
        self.written = False

    def __getattr__(self, name):
        return getattr(self.inner, name)

    @torch.no_grad()
    def generate(self, models, sample, **kwargs):
        d = self.task.src_dict
        pad = d.pad()
        spec = self.spec
        methods = sorted(set(spec.methods) | set(self.dump_spec.methods if self.dump_spec else ()))
        layers = sorted(set(spec.layers) | set(self.dump_spec.layers if self.dump_spec else ()))
        self.model.eval()
        src_rows = sample["net_input"]["src_tokens"]
        if isinstance(self.inner, SequenceScorer):
            # --score-reference: the scorer's own teacher-forced pass is the one we need; record it.
            from align.attribution.methods import needs

            with Recorder(self.model, self.adapter, self_attention="self-attention" in needs(methods)) as rec:
                hypos = self.inner.generate(models, sample, **kwargs)
            prev = sample["net_input"]["prev_output_tokens"]
            scores = score_recorded(rec, src_rows != pad, prev != pad, methods, layers)
            pairs = [
                (i, 0, src_rows[i][src_rows[i] != pad].cpu(), hypos[i][0]["tokens"].cpu()) for i in range(len(hypos))
            ]
        else:
            hypos = self.inner.generate(models, sample, **kwargs)
            pairs = []
            for i in range(len(hypos)):
                src = src_rows[i][src_rows[i] != pad].cpu()
                for k, hypo in enumerate(hypos[i][: self.nbest]):
                    pairs.append((i, k, src, hypo["tokens"].cpu()))
            scores = score_pairs(
                self.model,
                self.adapter,
                [p[2].tolist() for p in pairs],
                [p[3].tolist() for p in pairs],
                pad,
                methods,
                layers,
            )
        ids = sample["id"].tolist()
        for (i, k, src, tgt), sc in zip(pairs, scores):
            sw = self.task.word_ids(src.tolist(), d, "src", ids[i], spec.level)
            # free decoding has no reference text: the hypothesis' own pieces are its words
            tw = self.task.word_ids(
                tgt.tolist()[:-1],
                self.task.tgt_dict,
                "tgt" if k == 0 and isinstance(self.inner, SequenceScorer) else "hyp",
                ids[i],
                spec.level,
            )
            hypo = hypos[i][k]
            hypo["alignment"] = links_for(sc, sw, tw, spec, spec.methods[0], spec.layers[0], spec.shifts[0])
            if self.dump_spec is not None and k == 0:
                self._collect(ids[i], sc, sw, tw)
        if self.dump_spec is not None:
            self._maybe_write()
        return hypos

    def _collect(self, sid: int, sc: dict, sw: np.ndarray, tw: np.ndarray) -> None:
        spec = self.dump_spec
        for method in spec.methods:
            for layer in spec.layers:
                heads = range(sc[(method, layer)].shape[0]) if METHODS[method].per_head else [None]
                for shift in spec.shifts:
                    for h in heads:
                        links = links_for(sc, sw, tw, spec, method, layer, shift, h)
                        self.dump.setdefault(Setting(method, shift, layer, h).file, {})[sid] = format_links(links)

    def _maybe_write(self) -> None:
        expected = getattr(self.task, "expected_ids", None)
        if expected is None:
            raise RuntimeError("--alignment-dump needs the task's batch iterator (fairseq-generate's)")
        first = next(iter(self.dump.values()), {})
        if len(first) < len(expected) or self.written:
            return
        folder = self.task.cfg.alignment_dump
        shard, shards = self.task.shard
        n_total = self.task.aligned_dataset_size
        sig = self.task.run_signature(self.dump_spec, n_total)
        if getattr(self.task, "sharded", shards > 1):
            from align.extraction.shards import drop_stale_merged, merge_when_complete, write_shard

            write_shard(
                folder,
                shard,
                shards,
                n_total,
                {name: [(k, lines[k]) for k in expected] for name, lines in self.dump.items()},
                sig,
                overwrite=self.task.cfg.alignment_dump_overwrite,
            )
            drop_stale_merged(folder, sig)  # merged/ of an earlier run never stays beside new shards
            if self.task.cfg.alignment_shard == "auto":
                merged, why = merge_when_complete(folder, sig)
                if why:
                    raise ValueError(f"shard {shard}/{shards} written, but not merged: {why}")
                if merged:
                    logger.info("all %d shards are done: merged into %s", shards, merged)
        else:
            from align.extraction.writer import OutputFolder

            with OutputFolder(folder, self.task.cfg.alignment_dump_overwrite) as out:
                out.open(sorted(self.dump))
                for name, lines in self.dump.items():
                    if sorted(lines) != list(range(n_total)):
                        raise ValueError(f"{name}: alignments for {len(lines)} sentence ids, expected 0..{n_total - 1}")
                    for k in range(n_total):
                        out.write(name, k, lines[k])
                out.finish(n_total, sig)
        logger.info("wrote %d alignment files of %d sentences to %s", len(self.dump), len(expected), folder)
        self.dump = {}
        self.written = True
