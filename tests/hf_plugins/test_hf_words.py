"""Word boundaries of every Hugging Face tokenizer family we support (hf_plugins.hub): unknown
characters stay in their word as ``<unk>``, language codes / BOS / EOS are the only specials, and the
slow path (no word ids) gives the same ids and words as the fast one. Tokenizers are built here."""

import io
import json
import os
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
spm = pytest.importorskip("sentencepiece")

from align.links.subwords import SPECIAL, WordMapError  # noqa: E402
from hf_plugins.hub import HFAligner, special_ids  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENFR = os.path.join(ROOT, "data", "models", "enfr")
_CHARS = list("abcdefghijklmnopqrstuvwxyz.,")
# an unknown character (U+2603) at the start, in the middle and at the end of a word, a word of
# unknown characters only, and ordinary words around them
UNKNOWN = ["the", "\u2603cat", "ca\u2603t", "cat\u2603", "\u2603\u2603", "is", "small", "."]


class SlowView:
    """A fast tokenizer seen through the slow path (no word ids): the same ids must come out."""

    is_fast = False

    def __init__(self, tok) -> None:
        self._tok = tok

    def __call__(self, *a, **kw):
        return self._tok(*a, **kw)

    def __getattr__(self, name):
        return getattr(self._tok, name)


def _marian():
    symbols = ["<s>", "<pad>", "</s>", "<unk>"]
    with open(os.path.join(ENFR, "dict.en.txt"), encoding="utf-8") as f:
        symbols += [line.rstrip("\n").rsplit(" ", 1)[0] for line in f]
    return symbols


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tok")
    # Marian: our SentencePiece model and the fairseq dictionary's ids (what fairseq_to_hf writes)
    vocab = tmp / "marian_vocab.json"
    vocab.write_text(json.dumps({s: i for i, s in enumerate(_marian())}, ensure_ascii=False), encoding="utf-8")
    spm_enfr = os.path.join(ENFR, "spm.model")
    marian = transformers.MarianTokenizer(source_spm=spm_enfr, target_spm=spm_enfr, vocab=str(vocab))
    # M2M100 (slow only): a tiny unigram SentencePiece model trained here
    buf = io.BytesIO()
    text = ["the house is small .", "we have seen the big red car near the river .", "a cat sleeps"] * 20
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text),
        model_writer=buf,
        vocab_size=40,
        model_type="unigram",
        character_coverage=1.0,
        bos_id=-1,
        eos_id=-1,
        unk_id=0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    (tmp / "m2m.model").write_bytes(buf.getvalue())
    sp = spm.SentencePieceProcessor(model_file=str(tmp / "m2m.model"))
    m2m_vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(sp.get_piece_size()):
        m2m_vocab.setdefault(sp.id_to_piece(i), len(m2m_vocab))
    (tmp / "m2m_vocab.json").write_text(json.dumps(m2m_vocab), encoding="utf-8")
    m2m = transformers.M2M100Tokenizer(
        vocab_file=str(tmp / "m2m_vocab.json"), spm_file=str(tmp / "m2m.model"), src_lang="en", tgt_lang="fr"
    )
    # NLLB and mBART (fast; transformers 5 ships no slow class for them: SlowView takes the slow path)
    nllb_vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for p in ["\u2581"] + _CHARS:
        nllb_vocab.setdefault(p, len(nllb_vocab))
    nllb = transformers.NllbTokenizer(vocab=nllb_vocab, merges=[], src_lang="eng_Latn", tgt_lang="fra_Latn")
    pieces = ["\u2581"] + _CHARS + ["\u2581" + c for c in _CHARS]
    mbart = transformers.MBartTokenizer(
        vocab=[("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
        + [(p, -1.0 - 0.01 * i) for i, p in enumerate(pieces)],
        src_lang="en_XX",
        tgt_lang="fr_XX",
    )
    return {
        "marian": marian,
        "m2m100-slow": m2m,
        "nllb-fast": nllb,
        "nllb-slow": SlowView(nllb),
        "mbart-fast": mbart,
        "mbart-slow": SlowView(mbart),
    }


def _encode(tok, words, target):
    return HFAligner._encode(SimpleNamespace(tokenizer=tok), list(words), target, "source sentence 1")


@pytest.mark.parametrize("name", ["marian", "m2m100-slow", "nllb-fast", "nllb-slow", "mbart-fast", "mbart-slow"])
@pytest.mark.parametrize("target", [False, True])
def test_unknown_characters_keep_their_word(tokenizers, name, target):
    tok = tokenizers[name]
    ids, wids, pieces = _encode(tok, UNKNOWN, target)
    assert tok.unk_token_id in ids, pieces  # the test means something: there are unknown pieces
    key = "text_target" if target else "text"
    for w, word in enumerate(UNKNOWN):
        own = list(tok(**{key: word}, add_special_tokens=False)["input_ids"])
        got = [i for i, k in zip(ids, wids) if k == w]
        assert got == own and own, (word, got, own)  # exactly the word's own pieces, at least one
    real = wids[wids != SPECIAL]
    assert list(real) == sorted(real) and set(real.tolist()) == set(range(len(UNKNOWN)))
    # the specials are the language codes, BOS and EOS the tokenizer adds, never <unk>
    assert all(ids[i] in special_ids(tok) for i in np.flatnonzero(wids == SPECIAL))
    assert tok.unk_token_id not in special_ids(tok)


@pytest.mark.parametrize("family", ["nllb", "mbart"])
@pytest.mark.parametrize("target", [False, True])
def test_slow_path_equals_fast_path(tokenizers, family, target):
    fast = _encode(tokenizers[f"{family}-fast"], UNKNOWN, target)
    slow = _encode(tokenizers[f"{family}-slow"], UNKNOWN, target)
    assert fast[0] == slow[0] and fast[1].tolist() == slow[1].tolist()


def test_a_word_with_no_piece_left_fails_naming_it(tokenizers):
    # M2M100's SentencePiece normalizer removes U+200B: the word has no piece at all
    aligner = SimpleNamespace(tokenizer=tokenizers["m2m100-slow"])
    aligner._encode = lambda *a: HFAligner._encode(aligner, *a)
    with pytest.raises(WordMapError, match=r"no token for word 2 '\\u200b'"):
        HFAligner.encode_source(aligner, ["the", "\u200b", "cat"], "source sentence 1")


def test_m2m100_slow_tokenizer_aligns_a_pair_with_unknown_characters(tokenizers):
    # the released M2M100 checkpoints' tokenizer: the whole pair aligns, every word linked
    from hf_tiny import randomize

    tok = tokenizers["m2m100-slow"]
    cfg = transformers.M2M100Config(
        vocab_size=max(special_ids(tok) | set(tok.get_vocab().values())) + 1,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=0,
        decoder_start_token_id=tok.eos_token_id,
    )
    torch.manual_seed(0)
    model = transformers.M2M100ForConditionalGeneration(cfg).eval()
    randomize(model, 4)
    aligner = HFAligner(model, tok, "en", "fr")
    src, tgt = " ".join(UNKNOWN), "\u2603le chat\u2603 ."
    links = aligner.align([src], [tgt], methods=["norm"], layers=[0], shifts=["awo"])[("norm", 0, "awo")][0]
    assert {t for _, t in links} == {0, 1, 2}  # argmax: every target word gets a source word
    assert all(0 <= s < len(UNKNOWN) for s, _ in links)
