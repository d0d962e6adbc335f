"""Helpers for tests on tiny random Hugging Face models built in code (no download)."""

import json
import os

import torch

ENFR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "models", "enfr")


def randomize(model, seed: int, std: float = 0.3) -> None:
    """Stronger random weights than Hugging Face's init (std 0.02), so attention is far from uniform
    and activations far from linear; LayerNorm gains near 1."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "embed_positions" in name:
                continue
            if "layer_norm" in name or "layernorm" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))


def marian_tokenizer(folder: str):
    """Our En-Fr SentencePiece model with the fairseq dictionary's ids (as hf_plugins.convert writes it)."""
    import transformers

    symbols = ["<s>", "<pad>", "</s>", "<unk>"]
    with open(os.path.join(ENFR, "dict.en.txt"), encoding="utf-8") as f:
        symbols += [line.rstrip("\n").rsplit(" ", 1)[0] for line in f]
    vocab = os.path.join(folder, "vocab.json")
    with open(vocab, "w", encoding="utf-8") as f:
        json.dump({s: i for i, s in enumerate(symbols)}, f, ensure_ascii=False)
    spm = os.path.join(ENFR, "spm.model")
    tok = transformers.MarianTokenizer(source_spm=spm, target_spm=spm, vocab=vocab)
    os.remove(vocab)
    return tok


def tiny_marian(folder: str, d_model: int, heads: int, ffn: int, seed: int):
    """``(model, tokenizer)``: a Marian model of 1 encoder and 2 decoder layers with random weights
    (:func:`randomize` with ``seed``) over :func:`marian_tokenizer`'s vocabulary."""
    import transformers

    tok = marian_tokenizer(folder)
    cfg = transformers.MarianConfig(
        vocab_size=len(tok),
        decoder_vocab_size=len(tok),
        d_model=d_model,
        encoder_layers=1,
        decoder_layers=2,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    model = transformers.MarianMTModel(cfg).eval()
    randomize(model, seed)
    return model, tok
