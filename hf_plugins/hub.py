"""Python API for Hugging Face translation models (Marian / opus-mt, M2M100 / NLLB, mBART, FSMT):
the same shape as ``fairseq_plugins.hub.NormAligner``.

>>> aligner = HFAligner.from_pretrained("path/to/opus-mt-en-de")                  # doctest: +SKIP
>>> aligner.align(["the house ."], ["das Haus ."], methods=["norm"], layers=[2])  # doctest: +SKIP

Language-code tokens, BOS and EOS are specials (word id -1) and are never linked; word boundaries
come from the fast tokenizer's word ids, or for slow (SentencePiece) tokenizers from tokenizing
each word alone, and must equal the input's whitespace words.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import numpy as np
import torch

from align.extraction.adapters import HFAdapter, prepare_hf_model
from align.extraction.aligner import Aligner, Encoded, as_words, check_words
from align.links.subwords import SPECIAL, WordMapError


def special_ids(tok) -> set[int]:
    """Ids that belong to no word: BOS, EOS, padding, language codes and the tokenizer's other added
    specials, never ``<unk>`` (an unknown piece is part of its word, as fairseq keeps it)."""
    ids = set(tok.all_special_ids)
    ids |= {i for i, t in getattr(tok, "added_tokens_decoder", {}).items() if getattr(t, "special", False)}
    ids |= set(getattr(tok, "lang_code_to_id", {}).values())  # M2M100's codes are not marked special
    ids.discard(tok.unk_token_id)
    return ids


def _wrapped(with_specials: list[int], inner: list[int]) -> int:
    """Where ``inner`` (a sentence without specials) starts in ``with_specials`` (the same sentence with
    the tokenizer's prefix and suffix: language codes, BOS, EOS); -1 if it is not there whole."""
    for k in range(len(with_specials) - len(inner) + 1):
        if with_specials[k : k + len(inner)] == inner:
            return k
    return -1


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
        limit = getattr(model.config, "max_position_embeddings", None)
        self.max_positions = (int(limit), int(limit)) if limit else (None, None)
        self.lowercase = bool((getattr(model.config, "preprocessing", None) or {}).get("lowercase", False))
        self.source: dict = {}  # where the model came from: folder and digest, or Hub id and revision

    @classmethod
    def from_pretrained(
        cls,
        path: str,
        device: str | None = None,
        dtype: torch.dtype | None = None,
        src_lang: str | None = None,
        tgt_lang: str | None = None,
    ) -> HFAligner:
        """Load a model folder, or a Hub id ``ORG/NAME[@REVISION]`` from the local cache (downloaded
        when missing and not offline; a local folder of that name wins), with
        ``AutoModelForSeq2SeqLM`` and ``AutoTokenizer``: safetensors only (a pickled
        ``pytorch_model.bin`` could run code) and never the model's own code (``trust_remote_code``
        stays off)."""
        from .resolve import load_quietly, resolve_model

        folder, source = resolve_model(path)
        model, tokenizer = load_quietly(folder, dtype or torch.float32)
        aligner = cls(model.to(device or "cpu"), tokenizer, src_lang, tgt_lang)
        aligner.source = source
        return aligner

    def languages(self) -> tuple[str | None, str | None]:
        """(source, target) language codes: what the model declares itself (:meth:`declared_languages`), else
        those given for a multilingual tokenizer (``src_lang``, ``tgt_lang``); None where nothing says."""
        own = self.declared_languages()
        return own if own != (None, None) else (self.src_lang, self.tgt_lang)

    def declared_languages(self) -> tuple[str | None, str | None]:
        """(source, target) the model's own languages, whatever flags were given: FSMT's ``config.langs``, a
        Marian tokenizer's ``source_lang``/``target_lang``, an opus-mt Hub id ``...-en-de``; None where nothing
        says (a multilingual model: its languages are the flags')."""
        langs = getattr(self.model.config, "langs", None)
        if isinstance(langs, (list, tuple)) and len(langs) == 2 and all(isinstance(x, str) for x in langs):
            return langs[0], langs[1]
        src, tgt = getattr(self.tokenizer, "source_lang", None), getattr(self.tokenizer, "target_lang", None)
        if isinstance(src, str) and isinstance(tgt, str):
            return src, tgt
        name = str(self.source.get("hub_id") or os.path.basename(str(self.source.get("path", "")).rstrip("/")))
        m = re.search(r"opus-mt-([a-z]{2,3})-([a-z]{2,3})$", name)
        return (m[1], m[2]) if m else (None, None)

    def identity(self) -> dict:
        """The model's part of a run signature: Hub id and revision, or folder and files digest."""
        return dict(self.source)

    def _encode(self, words: list[str], target: bool, what: str) -> tuple[list[int], np.ndarray, list[str]]:
        tok = self.tokenizer
        key = "text_target" if target else "text"
        if getattr(tok, "is_fast", False):
            enc = tok(**{key: words}, is_split_into_words=True, add_special_tokens=True)
            ids = list(enc["input_ids"])
            wids = np.array([SPECIAL if w is None else w for w in enc.word_ids()], dtype=np.int64)
        else:
            # Slow tokenizers have no word ids. The specials are what add_special_tokens wraps the
            # sentence in (a prefix and a suffix); every other id, <unk> included, belongs to a word.
            # (get_special_tokens_mask counts <unk> as special, and M2M100's does not mark its codes.)
            text = " ".join(words)
            ids = list(tok(**{key: text})["input_ids"])
            inner = list(tok(**{key: text}, add_special_tokens=False)["input_ids"])
            start = _wrapped(ids, inner)
            if start < 0:
                raise WordMapError(
                    f"{what}: the tokenizer's special tokens are not a prefix and suffix of the "
                    f"sentence's tokens: {tok.convert_ids_to_tokens(ids)}"
                )
            per_word = [list(tok(**{key: w}, add_special_tokens=False)["input_ids"]) for w in words]
            if inner != [t for p in per_word for t in p]:
                raise WordMapError(
                    f"{what}: the tokenizer splits the sentence differently from its words one by one, "
                    f"so word boundaries are ambiguous\n  sentence: {tok.convert_ids_to_tokens(inner)}\n"
                    f"  by word:  {[tok.convert_ids_to_tokens(p) for p in per_word]}"
                )
            wids = np.full(len(ids), SPECIAL, dtype=np.int64)
            wids[start : start + len(inner)] = [w for w, p in enumerate(per_word) for _ in p]
        return ids, wids, tok.convert_ids_to_tokens(ids)

    def encode_source(self, words: list[str], what: str) -> Encoded:
        ids, wids, pieces = self._encode(words, False, what)
        enc = Encoded(ids, wids)
        check_words(enc, words, pieces, what)
        return enc

    def encode_target(self, words: list[str], what: str) -> Encoded:
        ids, wids, pieces = self._encode(words, True, what)
        if wids[-1] != SPECIAL:
            raise WordMapError(f"{what}: the target tokens do not end with a special token (EOS): {pieces}")
        enc = Encoded(ids, wids[:-1])  # the labels' last token is EOS (or mBART's language code)
        check_words(enc, words, pieces, what)
        return enc

    def translate(
        self, sources: Sequence, batch_size: int = 16, beam: int = 5, max_new_tokens: int | None = None, **generate
    ) -> list[list[str]]:
        """``model.generate`` (beam search); outputs detokenized by the tokenizer and split on whitespace.
        A target language code (NLLB, M2M100, mBART) is forced as the first token."""
        tok = self.tokenizer
        if self.tgt_lang is not None and "forced_bos_token_id" not in generate:
            get = getattr(tok, "get_lang_id", None)
            generate["forced_bos_token_id"] = get(self.tgt_lang) if get else tok.convert_tokens_to_ids(self.tgt_lang)
        device = next(self.model.parameters()).device
        out: list[list[str]] = []
        for b in range(0, len(sources), batch_size):
            text = [" ".join(self.preprocess(as_words(s))) for s in sources[b : b + batch_size]]
            enc = tok(text, return_tensors="pt", padding=True).to(device)
            with torch.no_grad():
                if max_new_tokens is not None:  # else the model's generation config decides the length
                    generate["max_new_tokens"] = max_new_tokens
                gen = self.model.generate(**enc, num_beams=beam, **generate)
            # <unk> is kept, as fairseq keeps it; language codes and the other specials are dropped
            drop = special_ids(tok) | {self.model.config.decoder_start_token_id}
            out += [tok.decode([t for t in g if t not in drop]).split() for g in gen.tolist()]
        return out
