"""Python API for Hugging Face translation models (Marian / opus-mt, M2M100 / NLLB, mBART, FSMT):
the same shape as ``fairseq_plugins.hub.NormAligner``.

>>> aligner = HFAligner.from_pretrained("path/to/opus-mt-en-de")                  # doctest: +SKIP
>>> aligner.align(["the house ."], ["das Haus ."], methods=["norm"], layers=[2])  # doctest: +SKIP

Language-code tokens, BOS and EOS are specials (word id -1) and are never linked; word boundaries
come from the fast tokenizer's word ids, or for slow (SentencePiece) tokenizers from tokenizing
each word alone, and must equal the input's whitespace words.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from align.adapters import HFAdapter, prepare_hf_model
from align.aligner import Aligner, Encoded, as_words, check_words
from align.subwords import SPECIAL, WordMapError


class HFAligner(Aligner):
    """A loaded Hugging Face encoder-decoder and its tokenizer, aligning sentence pairs with every method."""

    def __init__(self, model, tokenizer, src_lang: str | None = None, tgt_lang: str | None = None) -> None:
        prepare_hf_model(model)
        self.tokenizer = tokenizer
        if src_lang is not None:
            tokenizer.src_lang = src_lang
        if tgt_lang is not None:
            tokenizer.tgt_lang = tgt_lang
        self.src_lang, self.tgt_lang = src_lang, tgt_lang
        adapter = HFAdapter(model)
        super().__init__(model, adapter, adapter.pad)

    @classmethod
    def from_pretrained(cls, path: str, device: str | None = None, dtype: torch.dtype | None = None,
                        src_lang: str | None = None, tgt_lang: str | None = None) -> "HFAligner":
        """Load a model folder with ``AutoModelForSeq2SeqLM`` (safetensors only: a pickled
        ``pytorch_model.bin`` is refused, since loading it could run code) and ``AutoTokenizer``."""
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        model = AutoModelForSeq2SeqLM.from_pretrained(path, use_safetensors=True, attn_implementation="eager",
                                                      dtype=dtype or torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(path)
        return cls(model.to(device or "cpu"), tokenizer, src_lang, tgt_lang)

    def _encode(self, words: list[str], target: bool, what: str) -> tuple[list[int], np.ndarray, list[str]]:
        tok = self.tokenizer
        key = "text_target" if target else "text"
        if getattr(tok, "is_fast", False):
            enc = tok(**{key: words}, is_split_into_words=True, add_special_tokens=True)
            ids = list(enc["input_ids"])
            wids = np.array([SPECIAL if w is None else w for w in enc.word_ids()], dtype=np.int64)
        else:
            ids = list(tok(**{key: " ".join(words)})["input_ids"])
            special = tok.get_special_tokens_mask(ids, already_has_special_tokens=True)
            inner = [t for t, s in zip(ids, special) if not s]
            per_word = [list(tok(**{key: w}, add_special_tokens=False)["input_ids"]) for w in words]
            if inner != [t for p in per_word for t in p]:
                raise WordMapError(f"{what}: the tokenizer splits the sentence differently from its words one by one, "
                                   f"so word boundaries are ambiguous\n  sentence: {tok.convert_ids_to_tokens(inner)}\n"
                                   f"  by word:  {[tok.convert_ids_to_tokens(p) for p in per_word]}")
            wids = np.full(len(ids), SPECIAL, dtype=np.int64)
            pos = [k for k, s in enumerate(special) if not s]
            k = 0
            for w, p in enumerate(per_word):
                for _ in p:
                    wids[pos[k]] = w
                    k += 1
        return ids, wids, tok.convert_ids_to_tokens(ids)

    def encode_source(self, words: list[str], index: int) -> Encoded:
        ids, wids, pieces = self._encode(words, False, f"source sentence {index + 1}")
        enc = Encoded(ids, wids)
        check_words(enc, words, pieces, f"source sentence {index + 1}")
        return enc

    def encode_target(self, words: list[str], index: int) -> Encoded:
        what = f"target sentence {index + 1}"
        ids, wids, pieces = self._encode(words, True, what)
        if wids[-1] != SPECIAL:
            raise WordMapError(f"{what}: the target tokens do not end with a special token (EOS): {pieces}")
        enc = Encoded(ids, wids[:-1])  # the labels' last token is EOS (or mBART's language code)
        check_words(enc, words, pieces, what)
        return enc

    def translate(self, sources: Sequence, batch_size: int = 16, num_beams: int = 5, max_new_tokens: int | None = None,
                  **generate) -> list[list[str]]:
        """``model.generate`` (beam search); outputs detokenized by the tokenizer and split on whitespace.
        A target language code (NLLB, M2M100, mBART) is forced as the first token."""
        tok = self.tokenizer
        if self.tgt_lang is not None and "forced_bos_token_id" not in generate:
            get = getattr(tok, "get_lang_id", None)
            generate["forced_bos_token_id"] = get(self.tgt_lang) if get else tok.convert_tokens_to_ids(self.tgt_lang)
        device = next(self.model.parameters()).device
        out: list[list[str]] = []
        for b in range(0, len(sources), batch_size):
            text = [" ".join(as_words(s)) for s in sources[b:b + batch_size]]
            enc = tok(text, return_tensors="pt", padding=True).to(device)
            with torch.no_grad():
                if max_new_tokens is not None:  # else the model's generation config decides the length
                    generate["max_new_tokens"] = max_new_tokens
                gen = self.model.generate(**enc, num_beams=num_beams, **generate)
            out += [t.split() for t in tok.batch_decode(gen, skip_special_tokens=True)]
        return out
