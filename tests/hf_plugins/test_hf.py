"""Hugging Face models through the engine (align.extraction.adapters.HFAdapter, hf_plugins): tiny random
Marian (post-LN, swish), M2M100 (pre-LN, relu) and mBART (pre-LN, gelu) models and tokenizers built
here, and the shipped En-Fr fairseq model converted to FSMT (hf_plugins.convert)."""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

from align.attribution.feedforward import decompose_layer  # noqa: E402
from align.attribution.methods import METHODS  # noqa: E402
from align.attribution.norms import decompose_block, value_vectors, values  # noqa: E402
from align.extraction.adapters import Batch, HFAdapter, UnsupportedModelError, prepare_hf_model  # noqa: E402
from align.extraction.engine import Recorder, collate, score_pairs  # noqa: E402
from align.links.subwords import SPECIAL, WordMapError  # noqa: E402
from hf_plugins.hub import HFAligner  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENFR = os.path.join(ROOT, "data", "models", "enfr")
HANSARDS = os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards", "enfr.src-tgt")

PAIRS = [
    ("the house is small .", "la maison est petite ."),
    (
        "we have seen the big red car in the old street near the river .",
        "nous avons vu la grande voiture rouge dans la vieille rue pres de la riviere .",
    ),
    ("yes .", "oui ."),
    ("the children play , the dog sleeps .", "les enfants jouent , le chien dort ."),
    ("a cat", "un chat"),
]
ALL = [m for m in METHODS if "alignment-layer" not in METHODS[m].needs]  # learned: a trained layer (its own tests)


# ----------------------------------------------------------------------------------------------
# tokenizers and models built here (no downloads)
# ----------------------------------------------------------------------------------------------

_CHARS = list("abcdefghijklmnopqrstuvwxyz.,")


def _nllb_tokenizer():
    """A fast NLLB-style BPE tokenizer over single characters: every letter is its own piece."""
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for p in ["\u2581"] + _CHARS:
        vocab.setdefault(p, len(vocab))
    return transformers.NllbTokenizer(vocab=vocab, merges=[], src_lang="eng_Latn", tgt_lang="fra_Latn")


def _mbart_tokenizer():
    """A fast mBART (unigram) tokenizer over characters, with and without the word marker."""
    pieces = ["\u2581"] + _CHARS + ["\u2581" + c for c in _CHARS]
    vocab = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)] + [
        (p, -1.0 - 0.01 * i) for i, p in enumerate(pieces)
    ]
    return transformers.MBartTokenizer(vocab=vocab, src_lang="en_XX", tgt_lang="fr_XX")


from hf_tiny import marian_tokenizer, randomize as _randomize  # noqa: E402


def _config(cls, tok, act, **kw):
    return cls(
        vocab_size=len(tok),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        activation_function=act,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        max_position_embeddings=128,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=0,
        **kw,
    )


def _build(name, tmp):
    """(model, tokenizer, src_lang, tgt_lang), seeded; the models come up with sdpa attention."""
    torch.manual_seed(0)
    if name == "marian":
        tok = marian_tokenizer(tmp)
        cfg = _config(
            transformers.MarianConfig,
            tok,
            "swish",
            decoder_vocab_size=len(tok),
            decoder_start_token_id=tok.pad_token_id,
        )
        model, langs = transformers.MarianMTModel(cfg), (None, None)
    elif name == "m2m100":
        tok = _nllb_tokenizer()
        cfg = _config(transformers.M2M100Config, tok, "relu", decoder_start_token_id=tok.eos_token_id)
        model, langs = transformers.M2M100ForConditionalGeneration(cfg), ("eng_Latn", "fra_Latn")
    else:
        tok = _mbart_tokenizer()
        cfg = _config(transformers.MBartConfig, tok, "gelu")
        model, langs = transformers.MBartForConditionalGeneration(cfg), ("en_XX", "fr_XX")
    _randomize(model.eval(), {"marian": 1, "m2m100": 2, "mbart": 3}[name])
    return model, tok, *langs


MODELS = ["marian", "m2m100", "mbart"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("hf"))
    return {name: _build(name, tmp) for name in MODELS}


@pytest.fixture(scope="module")
def aligners(built):
    return {name: HFAligner(*built[name]) for name in MODELS}


# ----------------------------------------------------------------------------------------------
# (a) the decompositions add up to the real outputs
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_decomposition_adds_up_to_real_outputs(aligners, name):
    aligner = aligners[name]
    model, adapter = aligner.model, aligner.adapter
    assert adapter.pre_ln == (name != "marian")
    encs = [aligner.encode_pair(s, t, i) for i, (s, t) in enumerate(PAIRS[:3])]
    src, src_mask = collate([e[0].ids for e in encs], aligner.pad)
    lab, tgt_mask = collate([e[1].ids for e in encs], aligner.pad)
    block_out, layer_out, hooks = {}, {}, []
    for k, la in enumerate(model.model.decoder.layers):
        if adapter.pre_ln:  # the block output y + attn is what the FF block's LayerNorm reads
            hooks.append(
                la.final_layer_norm.register_forward_pre_hook(lambda m, a, k=k: block_out.__setitem__(k, a[0]))
            )
        else:  # post-LN: the block output is the LayerNorm's output
            hooks.append(
                la.encoder_attn_layer_norm.register_forward_hook(lambda m, a, o, k=k: block_out.__setitem__(k, o))
            )
        hooks.append(
            la.register_forward_hook(lambda m, a, o, k=k: layer_out.__setitem__(k, o[0] if isinstance(o, tuple) else o))
        )
    try:
        with torch.no_grad(), Recorder(model, adapter) as rec:
            adapter.forward(model, Batch(src, src_mask, lab, tgt_mask))
    finally:
        for h in hooks:
            h.remove()
    for k in range(len(model.model.decoder.layers)):
        inp, blk = rec.layer_inputs(k), rec.layer(k)
        assert blk.normalize_before == adapter.pre_ln and blk.ff.normalize_before == adapter.pre_ln
        alpha = inp.alpha * src_mask[:, None, None, :]
        parts = decompose_block(alpha, value_vectors(inp.x, blk), inp.residual, inp.attn_out, blk)
        total = parts[0].sum(2) + parts[1] + parts[2]
        torch.testing.assert_close(total[tgt_mask], block_out[k][tgt_mask], rtol=1e-4, atol=1e-4)
        d = decompose_layer(alpha, inp.x, inp.residual, inp.attn_out, blk)
        total = d.source.sum(2) + d.residual + d.bias
        # exact for relu, gelu and swish alike (integrated gradients over the element-wise activation):
        # to 1e-5 relative at outputs up to 22 (float32 rounding)
        torch.testing.assert_close(total[tgt_mask], layer_out[k][tgt_mask], rtol=1e-5, atol=1e-5)
        assert (d.source[1][:, ~src_mask[1]] == 0).all()  # padded sources get nothing
        # the value projections the model computed are what scoring reuses, equal to projecting x again
        assert inp.v is not None
        torch.testing.assert_close(inp.v, values(inp.x, blk), rtol=1e-5, atol=1e-5)


def test_low_precision_values_are_recomputed(built):
    """A bf16 model's own value projections are not reused: scores come from float32 ones."""
    model, tok = built["marian"][:2]
    low = __import__("copy").deepcopy(model).to(torch.bfloat16)
    aligner = HFAligner(low, tok)
    encs = [aligner.encode_pair(s, t, i) for i, (s, t) in enumerate(PAIRS[:2])]
    src, src_mask = collate([e[0].ids for e in encs], aligner.pad)
    lab, tgt_mask = collate([e[1].ids for e in encs], aligner.pad)
    with torch.no_grad(), Recorder(low, aligner.adapter) as rec:
        aligner.adapter.forward(low, Batch(src, src_mask, lab, tgt_mask))
    assert rec.records[("cross", 0)]["v"].dtype == torch.bfloat16  # recorded, but
    assert rec.layer_inputs(0).v is None  # not handed to the methods


# ----------------------------------------------------------------------------------------------
# (b) batch size and padding never change a link; (c) specials never linked
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_links_independent_of_batch_size_and_padding(aligners, name):
    aligner = aligners[name]
    src, tgt = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    one = aligner.align(src, tgt, methods=ALL, shifts=["awo", "awi"], batch_size=1)
    four = aligner.align(src, tgt, methods=ALL, shifts=["awo", "awi"], batch_size=4)
    assert one.keys() == four.keys()
    assert len(one) == len(ALL) * aligner.n_layers * 2
    for key in one:
        assert one[key] == four[key], key
    # the longest and the shortest pair in one padded batch
    pair = [1, 4]
    two = aligner.align(
        [src[i] for i in pair], [tgt[i] for i in pair], methods=ALL, shifts=["awo", "awi"], batch_size=2
    )
    for key in one:
        assert two[key] == [one[key][i] for i in pair], key
    # the scores themselves, not only their argmax
    spec = aligner.spec(ALL, None, ["awo"])
    alone = {i: sc for i, _, _, sc in aligner.iter_scores(list(zip(src, tgt)), spec, batch_size=1)}
    for i, _, _, sc in aligner.iter_scores(list(zip(src, tgt)), spec, batch_size=4):
        for key, v in sc.items():
            np.testing.assert_allclose(v, alone[i][key], rtol=1e-4, atol=1e-5, err_msg=f"pair {i} {key}")


@pytest.mark.parametrize("name", MODELS)
def test_specials_are_never_linked(aligners, name):
    aligner = aligners[name]
    tok = aligner.tokenizer
    src, tgt = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    for i, (s, t) in enumerate(PAIRS):
        se, te = aligner.encode_pair(s, t, i)
        specials = set(tok.all_special_ids) - {tok.unk_token_id}  # <unk> stands for a real piece
        assert se.ids[-1 if name != "mbart" else -2] == tok.eos_token_id
        for ids, words in ((se.ids, se.words), (te.ids[:-1], te.words)):
            assert len(ids) == len(words)
            for token, w in zip(ids, words):
                assert (w == SPECIAL) == (token in specials), (tok.convert_ids_to_tokens([token]), w)
        assert te.ids[-1] in specials  # the last label (EOS, or mBART's language code) has no word at all
        if name != "marian":  # a language code on each side
            codes = {tok.convert_tokens_to_ids(c) for c in (aligner.src_lang, aligner.tgt_lang)}
            assert codes & set(se.ids) and codes & set(te.ids)
    out = aligner.align(src, tgt, methods=ALL, shifts=["awo", "awi"], batch_size=4)
    for key, per_sentence in out.items():
        for (s, t), links in zip(PAIRS, per_sentence):
            n_src, n_tgt = len(s.split()), len(t.split())
            assert links, key
            assert all(0 <= a < n_src and 0 <= b < n_tgt for a, b in links), (key, links)
            assert sorted({b for _, b in links}) == list(range(n_tgt)), key  # argmax: every target word once


@pytest.mark.parametrize("name", MODELS)
def test_decoder_inputs_follow_the_model(aligners, name):
    """Teacher forcing feeds what the model's own training code feeds: the labels shifted right after
    the start token (Marian: pad, M2M100: EOS), or mBART's language code wrapped to the front."""
    from transformers.models.marian.modeling_marian import shift_tokens_right
    from transformers.models.mbart.modeling_mbart import shift_tokens_right as mbart_shift

    aligner = aligners[name]
    labels, mask = collate([aligner.encode_pair(s, t, i)[1].ids for i, (s, t) in enumerate(PAIRS[:3])], aligner.pad)
    got = aligner.adapter.decoder_inputs(aligner.model, labels)
    cfg = aligner.model.config
    want = (
        mbart_shift(labels, cfg.pad_token_id)
        if name == "mbart"
        else shift_tokens_right(labels, cfg.pad_token_id, cfg.decoder_start_token_id)
    )
    assert torch.equal(got[mask], want[mask])
    first = {
        "marian": aligner.tokenizer.pad_token_id,
        "m2m100": aligner.tokenizer.eos_token_id,
        "mbart": aligner.tokenizer.convert_tokens_to_ids("fr_XX"),
    }[name]
    assert (got[:, 0] == first).all()


# ----------------------------------------------------------------------------------------------
# (d) tokenizations that do not match the words
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_empty_word_fails_naming_the_sentence(aligners, name):
    aligner = aligners[name]
    good = PAIRS[0]
    with pytest.raises(
        WordMapError,
        match=r"sentence 2: source: .* make 2 words but the text has 3 "
        r"\(no token for word 2 ''\)",
    ):
        aligner.align([good[0], ["the", "", "house"]], [good[1], "la maison"], methods=["attn"])
    with pytest.raises(WordMapError, match=r"sentence 3: target: .*no token for word 1 ''\)"):
        aligner.align([good[0]] * 3, [good[1], good[1], ["", "la", "maison"]], methods=["attn"])


def test_dropped_word_fails_naming_the_sentence(aligners):
    # SentencePiece's normalizer removes a zero-width space: the word has no token at all
    aligner = aligners["marian"]
    with pytest.raises(
        WordMapError, match=r"sentence 2: source: .*no token for word 2 '\\u200b'\)\n  tokens: .*\n  words:"
    ):
        aligner.align(["the house", "the \u200b house"], ["la maison", "la maison"], methods=["attn"])


# ----------------------------------------------------------------------------------------------
# (e) sdpa is switched to eager; (f) unsupported models are refused
# ----------------------------------------------------------------------------------------------


def test_sdpa_switched_to_eager(tmp_path):
    model, tok, sl, tl = _build("m2m100", str(tmp_path))
    model.set_attn_implementation("sdpa")
    assert model.config._attn_implementation == "sdpa"
    with pytest.raises(RuntimeError, match="eager"):  # sdpa returns no weights: the adapter says so
        score_pairs(model, HFAdapter(model), [[5, 6, 2]], [[7, 8, 2]], 1, ["attn"], [0])
    aligner = HFAligner(model, tok, sl, tl)
    assert model.config._attn_implementation == "eager"
    links = aligner.align(["the house ."], ["la maison ."], methods=["norm"], layers=[1])[("norm", 1, "awi")]
    assert len(links) == 1 and sorted(b for _, b in links[0]) == [0, 1, 2]


def test_model_that_cannot_switch_to_eager_is_refused():
    class Config:
        _attn_implementation = "flash_attention_2"

    class Model:
        config = Config()

    with pytest.raises(UnsupportedModelError, match="flash_attention_2"):
        prepare_hf_model(Model())


def test_t5_is_refused():
    cfg = transformers.T5Config(
        vocab_size=64,
        d_model=16,
        d_kv=4,
        d_ff=32,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
    model = transformers.T5ForConditionalGeneration(cfg).eval()
    with pytest.raises(
        UnsupportedModelError,
        match=r"'t5' is not supported .*supported: marian, bart, fsmt, "
        r"m2m_100, mbart, pegasus",
    ):
        HFAligner(model, _nllb_tokenizer())


# ----------------------------------------------------------------------------------------------
# (g) the shipped fairseq model converted to FSMT aligns exactly as fairseq does
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("fairseq")
    from fairseq_plugins.hub import NormAligner
    from hf_plugins.convert import fairseq_to_hf

    out = fairseq_to_hf(ENFR, str(tmp_path_factory.mktemp("enfr_hf")), "en", "fr")
    return HFAligner.from_pretrained(out), NormAligner.from_checkpoint(ENFR)


def _hansards(n):
    with open(HANSARDS, encoding="utf-8") as f:
        pairs = [line.lower().split(" ||| ") for line in f.read().splitlines()[:n]]
    return [p[0].strip() for p in pairs], [p[1].strip() for p in pairs]


@pytest.mark.fairseq
def test_converted_model_gives_fairseq_links(converted):
    hf, fs = converted
    assert hf.adapter.model_type == "fsmt" and hf.n_layers == fs.n_layers == 3
    src, tgt = _hansards(40)
    # unknown characters (<unk> pieces) at the start, middle and end of words, and a word of them only
    src.append("\u2603the minister ca\u2603n \u2603\u2603 speak\u2603 .")
    tgt.append("le \u2603ministre ne peut pas parler\u2603 \u2603 .")
    for i, (s, t) in enumerate(zip(src, tgt)):  # the same ids and words
        for a, b in zip(hf.encode_pair(s, t, i), fs.encode_pair(s, t, i)):
            assert a.ids == b.ids and np.array_equal(a.words, b.words), i
    got = hf.align(src, tgt, methods=ALL, shifts=["awo", "awi"], batch_size=8)
    want = fs.align(src, tgt, methods=ALL, shifts=["awo", "awi"], batch_size=8)
    assert got.keys() == want.keys() and len(got) == len(ALL) * 3 * 2
    differ = [key for key in want if got[key] != want[key]]
    assert not differ, differ


@pytest.mark.fairseq
def test_converted_model_gives_fairseq_logits(converted):
    hf, fs = converted
    src, tgt = _hansards(6)
    encs = [fs.encode_pair(s, t, i) for i, (s, t) in enumerate(zip(src, tgt))]
    src_ids, src_mask = collate([e[0].ids for e in encs], fs.pad)
    lab, tgt_mask = collate([e[1].ids for e in encs], fs.pad)
    eos = fs.tgt_dict.eos()
    prev = torch.cat([torch.full((len(encs), 1), eos), lab[:, :-1]], 1).masked_fill(~tgt_mask, fs.pad)
    with torch.no_grad():
        want = fs.model(src_ids, src_mask.sum(1), prev)[0]
        got = hf.model(
            input_ids=src_ids, attention_mask=src_mask.long(), decoder_input_ids=prev, use_cache=False
        ).logits
    assert got.shape == want.shape
    # README: within 2e-5 (largest difference measured on 40 Hansards sentences: 5.2e-6)
    torch.testing.assert_close(got[tgt_mask], want[tgt_mask], rtol=0, atol=2e-5)


@pytest.mark.fairseq
def test_translation_keeps_unk_as_fairseq_does(converted):
    # an unknown source word comes out as <unk> from both (transformers' skip_special_tokens dropped it)
    hf, fs = converted
    src = ["mr. \u2603\u2603 , i thank the minister ."]
    got, want = hf.translate(src, beam=5), fs.translate(src, beam=5)
    assert "<unk>" in want[0] and got == want, (got, want)


@pytest.mark.parametrize("name", MODELS)
def test_blends_through_hugging_face_models(aligners, name):
    """A blend (align.links.blend) of a Hugging Face model: its methods computed without being asked, its
    matrix the mean of its settings' row shares, its links their decode."""
    from align.links.blend import blend_scores
    from align.links.decode import decode_argmax

    aligner = aligners[name]
    last = aligner.n_layers - 1
    blend = f"norm-awi-layer0+attn-awo-layer{last}"
    spec = aligner.spec(["alti"], [0], ["awi"], blends=[blend])
    full = aligner.spec(["norm", "attn"], [0, last], ["awi", "awo"])
    items = [(f"s{k}", s, t) for k, (s, t) in enumerate(PAIRS)]
    for (_, se, te, sc), (_, _, _, scf) in zip(aligner.score_items(items, spec), aligner.score_items(items, full)):
        got = aligner.word_scores(se, te, sc, spec)[blend + ".align"]
        w = aligner.word_scores(se, te, scf, full)
        want = blend_scores([w["norm-awi-layer0.align"], w[f"attn-awo-layer{last}.align"]])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert aligner.links(se, te, sc, spec)[blend + ".align"] == decode_argmax(got)
