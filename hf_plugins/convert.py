"""Convert our fairseq Transformer models to Hugging Face FSMT (fairseq's layout in transformers)
with a Marian tokenizer over our SentencePiece model and the fairseq dictionary, so that
``AutoModelForSeq2SeqLM`` and ``AutoTokenizer`` load it and give fairseq's ids and logits.

FSMT computes fairseq's sinusoidal position table itself; a teacher-forced ``forward`` needs
``use_cache=False`` (with the cache it builds no causal mask).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any

import torch


def _get(cfg: Any, key: str, default=None):
    if cfg is None:
        return default
    if isinstance(cfg, dict):
        return cfg.get(key, default)
    return getattr(cfg, key, default)


def _read_dict(path: str) -> list[str]:
    """fairseq dictionary symbols in id order: the four specials, then the file's symbols."""
    symbols = ["<s>", "<pad>", "</s>", "<unk>"]
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").rsplit(" ", 1)
            if len(parts) != 2 or not parts[0]:
                raise ValueError(f"{path}:{n}: expected 'SYMBOL COUNT'; found {line.rstrip()!r}")
            symbols.append(parts[0])
    return symbols


def fairseq_to_hf(model_dir: str, out_dir: str, src: str, tgt: str, trust: bool = False) -> str:
    """Write ``out_dir`` (model.safetensors, config.json, tokenizer files) from a model folder holding
    model.pt or model.safetensors, ``dict.SRC.txt``, ``dict.TGT.txt`` and ``spm.model``; returns out_dir."""
    from transformers import FSMTConfig, FSMTForConditionalGeneration, MarianTokenizer

    from fairseq_plugins.checkpoint import read_preprocessing, read_state, resolve_model_path

    state = read_state(resolve_model_path(model_dir), trust=trust)
    mcfg = _get(state.get("cfg"), "model") or state.get("args")
    if _get(mcfg, "encoder_normalize_before") or _get(mcfg, "decoder_normalize_before"):
        raise ValueError("FSMT is post-LN; this model is pre-LN (--*-normalize-before), which FSMT cannot hold")
    if _get(mcfg, "encoder_learned_pos") or _get(mcfg, "decoder_learned_pos"):
        raise ValueError("FSMT uses sinusoidal positions; this model has learned positions")
    src_syms = _read_dict(os.path.join(model_dir, f"dict.{src}.txt"))
    tgt_syms = _read_dict(os.path.join(model_dir, f"dict.{tgt}.txt"))
    if src_syms != tgt_syms:
        raise ValueError(
            "the source and target dictionaries differ; the Marian tokenizer here needs one joined vocabulary"
        )
    weights = {k: v.float() for k, v in state["model"].items() if torch.is_tensor(v)}
    vocab = weights["encoder.embed_tokens.weight"].shape[0]
    if vocab != len(src_syms):
        raise ValueError(f"the embedding has {vocab} rows but dict.{src}.txt gives {len(src_syms)} symbols")
    d = weights["encoder.embed_tokens.weight"].shape[1]
    enc_layers = 1 + max(int(k.split(".")[2]) for k in weights if k.startswith("encoder.layers."))
    dec_layers = 1 + max(int(k.split(".")[2]) for k in weights if k.startswith("decoder.layers."))
    config = FSMTConfig(
        langs=[src, tgt],
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,
        d_model=d,
        encoder_layers=enc_layers,
        decoder_layers=dec_layers,
        encoder_attention_heads=int(_get(mcfg, "encoder_attention_heads")),
        decoder_attention_heads=int(_get(mcfg, "decoder_attention_heads")),
        encoder_ffn_dim=weights["encoder.layers.0.fc1.weight"].shape[0],
        decoder_ffn_dim=weights["decoder.layers.0.fc1.weight"].shape[0],
        activation_function=str(_get(mcfg, "activation_fn", "relu")),
        max_position_embeddings=int(_get(mcfg, "max_source_positions", 1024)),
        scale_embedding=not _get(mcfg, "no_scale_embedding", False),
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_eos_token_id=2,
        tie_word_embeddings=False,
        num_beams=5,
        max_length=200,
    )
    pre = read_preprocessing(model_dir)
    if pre:  # what the training text went through (lowercasing), applied by HFAligner as by NormAligner
        config.preprocessing = pre
    model = FSMTForConditionalGeneration(config)
    target = model.state_dict()
    new = {}
    for k, v in weights.items():
        if "embed_positions" in k or k.endswith(".version"):
            continue  # FSMT builds the same sinusoidal table
        key = "model." + k
        if key not in target:
            raise ValueError(f"fairseq weight {k} has no place in FSMT")
        new[key] = v
    if "model.decoder.output_projection.weight" not in new:  # shared embeddings saved once
        new["model.decoder.output_projection.weight"] = weights["decoder.embed_tokens.weight"]
    missing = [k for k in target if k not in new and "embed_positions" not in k]
    if missing:
        raise ValueError(f"FSMT weights without a fairseq source: {missing[:5]}")
    model.load_state_dict({**target, **new}, strict=True)
    tmp = tempfile.mkdtemp(prefix="fairseq_to_hf-")
    try:
        with open(os.path.join(tmp, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump({s: i for i, s in enumerate(src_syms)}, f, ensure_ascii=False)
        spm = os.path.join(model_dir, "spm.model")
        tok = MarianTokenizer(
            source_spm=spm,
            target_spm=spm,
            vocab=os.path.join(tmp, "vocab.json"),
            source_lang=src,
            target_lang=tgt,
            model_max_length=int(config.max_position_embeddings),
        )
        os.makedirs(out_dir, exist_ok=True)
        model.save_pretrained(out_dir, safe_serialization=True)
        tok.save_pretrained(out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out_dir
