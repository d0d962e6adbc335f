"""Python API for fairseq models: load a checkpoint with its SentencePiece model and align raw
sentence pairs in memory, without binarizing data (the engine is :class:`align.extraction.aligner.Aligner`).

```pycon
>>> aligner = NormAligner.from_checkpoint("data/models/enfr")
>>> out = aligner.align(["mr. speaker , i thank the minister ."],
...                     ["monsieur le président , je remercie le ministre ."], methods=["norm"], layers=[0])
>>> out[("norm", 0, "awi")][0]  # (source word, target word), 0-based
[(0, 0), (0, 1), (0, 2), (2, 3), (3, 4), (4, 5), (6, 6), (6, 7), (7, 8)]

```
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import torch

from align.extraction.adapters import FairseqAdapter
from align.extraction.aligner import Aligner, Encoded, as_words, check_words
from align.links.subwords import SPECIAL, WordMapError

from .engine import detect_scheme, encode_pieces


class NormAligner(Aligner):
    """A loaded fairseq translation model that aligns (source, target) sentence pairs with every method."""

    def __init__(
        self, model, src_dict, tgt_dict, spm=None, scheme: str = "auto", task=None, preprocessing: dict | None = None
    ) -> None:
        if scheme == "auto":
            scheme = detect_scheme(tgt_dict)
            if scheme == "none":
                raise ValueError(
                    "the dictionary looks like neither SentencePiece ('▁') nor subword-nmt ('@@'): "
                    "pass scheme='sentencepiece' or 'subword-nmt'"
                )
        self.src_dict, self.tgt_dict, self.spm, self.scheme, self.task = src_dict, tgt_dict, spm, scheme, task
        super().__init__(model, FairseqAdapter(src_dict.pad(), src_dict.eos()), src_dict.pad())
        limits = model.max_positions() if hasattr(model, "max_positions") else (None, None)
        src_max, tgt_max = (int(x) if x is not None else None for x in limits)
        self.max_positions = (src_max, tgt_max)
        self.lowercase = bool((preprocessing or {}).get("lowercase", False))
        self.model_path: str | None = None

    @classmethod
    def from_checkpoint(
        cls,
        checkpoint: str,
        data_dir: str | None = None,
        spm_model: str | None = None,
        source_lang: str | None = None,
        target_lang: str | None = None,
        scheme: str = "auto",
        device: str | None = None,
        dtype: torch.dtype | None = None,
        trust: bool = False,
    ) -> NormAligner:
        """Load ``checkpoint`` (a ``.pt`` file, loaded without running code from it unless ``trust``, or a
        safetensors model folder); dictionaries from ``data_dir`` (default: beside the checkpoint) and
        SentencePiece from ``spm_model`` (default: ``spm.model`` beside it, if any). ``device`` and
        ``dtype`` place the model (scores are float32 on that device either way)."""
        from .checkpoint import load_model_and_task, read_preprocessing

        folder = checkpoint if os.path.isdir(checkpoint) else os.path.dirname(os.path.abspath(checkpoint))
        overrides = {}
        if source_lang:
            overrides["source_lang"] = source_lang
        if target_lang:
            overrides["target_lang"] = target_lang
        model, _cfg, task = load_model_and_task(
            checkpoint, data_dir=data_dir or folder, overrides=overrides, trust=trust
        )
        spm = None
        default_spm = os.path.join(folder, "spm.model")
        spm_model = spm_model or (default_spm if os.path.exists(default_spm) else None)
        if spm_model:
            import sentencepiece

            spm = sentencepiece.SentencePieceProcessor(model_file=spm_model)
        model = model.to(device=device or "cpu", dtype=dtype or torch.float32)
        aligner = cls(
            model, task.source_dictionary, task.target_dictionary, spm, scheme, task, read_preprocessing(checkpoint)
        )
        aligner.model_path = checkpoint
        return aligner

    def languages(self) -> tuple[str | None, str | None]:
        """The task's ``source_lang`` and ``target_lang`` (None where the checkpoint names none)."""
        cfg = getattr(self.task, "cfg", None)
        return getattr(cfg, "source_lang", None), getattr(cfg, "target_lang", None)

    def identity(self) -> dict:
        """A sha256 over the model's weights, config, dictionaries and SentencePiece model."""
        from align.spec.signature import files_digest

        return {"path": self.model_path, "sha256": files_digest(self.model_files())} if self.model_path else {}

    def model_files(self) -> list[str]:
        """The files that make this model's output: weights, config, dictionaries, SentencePiece."""
        from .checkpoint import model_files

        return model_files(self.model_path) if self.model_path else []

    def _pieces(self, words: list[str]) -> list[str]:
        if self.spm is None:  # already subword-segmented text: the words follow from the markers
            return list(words)
        return self.spm.encode(" ".join(words), out_type=str)

    def _encode(self, words: list[str], dictionary, what: str) -> tuple[list[int], np.ndarray, list[str]]:
        pieces = self._pieces(words)
        ids, wids = encode_pieces(pieces, dictionary, self.scheme)  # word ids from the real pieces
        return ids, wids, pieces

    def encode_source(self, words: list[str], what: str) -> Encoded:
        ids, wids, pieces = self._encode(words, self.src_dict, what)
        enc = Encoded(ids, wids)
        if self.spm is not None:
            self._check(enc, words, pieces, what)
        return enc

    def encode_target(self, words: list[str], what: str) -> Encoded:
        ids, wids, pieces = self._encode(words, self.tgt_dict, what)
        enc = Encoded(ids, wids[:-1])  # labels end with EOS; words of the labels before it
        if self.spm is not None:
            self._check(enc, words, pieces, what)
        return enc

    def _check(self, enc: Encoded, words: list[str], pieces: list[str], what: str) -> None:
        """check_words, naming the words SentencePiece leaves no piece for (its word ids come from the
        pieces' markers, so a vanished word shifts the ids, and only tokenizing each word shows which)."""
        empty = [w for w, word in enumerate(words) if not [p for p in self._pieces([word]) if p != "\u2581"]]
        if empty and len(np.unique(enc.words[enc.words != SPECIAL])) != len(words):
            raise WordMapError(
                f"{what}: SentencePiece leaves no piece for word "
                + ", ".join(f"{w + 1} {words[w]!r}" for w in empty)
                + f"\n  tokens: {' '.join(pieces)}\n  words:  {' '.join(words)}"
            )
        check_words(enc, words, pieces, what)

    def translate(
        self, sources: Sequence, batch_size: int = 16, beam: int = 5, max_len_b: int = 200, **generate
    ) -> list[list[str]]:
        """Beam search with fairseq's SequenceGenerator; each output as words (pieces joined by their markers)."""
        from fairseq.sequence_generator import SequenceGenerator

        gen = SequenceGenerator([self.model], self.tgt_dict, beam_size=beam, max_len_b=max_len_b, **generate)
        device = next(self.model.parameters()).device
        out: list[list[str]] = []
        for b in range(0, len(sources), batch_size):
            encs = [
                self.encode_source(self.preprocess(as_words(s)), f"sentence {b + k + 1}: source")
                for k, s in enumerate(sources[b : b + batch_size])
            ]
            n = max(len(e.ids) for e in encs)
            src = torch.full((len(encs), n), self.pad, dtype=torch.long)
            for k, e in enumerate(encs):  # fairseq's generator expects left-padded sources
                src[k, n - len(e.ids) :] = torch.tensor(e.ids)
            sample = {
                "net_input": {
                    "src_tokens": src.to(device),
                    "src_lengths": torch.tensor([len(e.ids) for e in encs], device=device),
                }
            }
            with torch.no_grad():
                hyps = gen.generate([self.model], sample)
            for h in hyps:
                pieces = [self.tgt_dict[t] for t in h[0]["tokens"].tolist()[:-1]]
                out.append(_join(pieces, self.scheme))
        return out


def _join(pieces: list[str], scheme: str) -> list[str]:
    """Words of a piece sequence by its markers (SentencePiece '▁', subword-nmt '@@')."""
    if scheme == "subword-nmt":
        return " ".join(pieces).replace("@@ ", "").split()
    return "".join(pieces).replace("\u2581", " ").split()
