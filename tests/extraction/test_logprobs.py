"""Forced-decoding log-probabilities from the pass that scores the alignment (align.extraction.engine.LOGPROBS):
the framework's own scorer gives the same numbers, padding and batch company change nothing."""

import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIRS = [
    ("the house is small .", "la maison est petite ."),
    ("yes .", "oui ."),
    ("the government must act now and the minister knows it .", "le gouvernement doit agir maintenant ."),
]


@pytest.mark.fairseq
def test_fairseq_logprobs_equal_fairseqs_sequence_scorer():
    pytest.importorskip("fairseq")
    import torch
    from fairseq.sequence_scorer import SequenceScorer

    from align.extraction.engine import LOGPROBS
    from fairseq_plugins.hub import NormAligner

    a = NormAligner.from_checkpoint(os.path.join(ROOT, "data", "models", "enfr"))
    spec = a.spec(["attn"], [0], ["awi"])
    items = [(f"p{k}", s.split(), t.split()) for k, (s, t) in enumerate(PAIRS)]
    batched = {k: (se, te, sc[LOGPROBS]) for k, se, te, sc in a.score_items(items, spec, 8, logprobs=True)}
    scorer = SequenceScorer(a.tgt_dict)
    for _k, (se, te, lp) in batched.items():
        src, tgt = torch.tensor([se.ids]), torch.tensor([te.ids])
        prev = torch.cat([torch.tensor([[a.tgt_dict.eos()]]), tgt[:, :-1]], dim=1)
        sample = {"net_input": {"src_tokens": src, "src_lengths": torch.tensor([len(se.ids)]),
                                "prev_output_tokens": prev}, "target": tgt}  # fmt: skip
        want = scorer.generate([a.model], sample)[0][0]["positional_scores"].numpy()
        assert lp.shape == (len(te.ids),) and te.ids[-1] == a.tgt_dict.eos()
        np.testing.assert_allclose(lp, want, atol=1e-5)
    # without logprobs=True the key is absent (no log-softmax over the vocabulary)
    assert all(LOGPROBS not in sc for _, _, _, sc in a.score_items(items, spec, 8))


def test_hf_logprobs_give_the_models_own_loss(tmp_path):
    pytest.importorskip("transformers")
    import torch

    from align.extraction.adapters import HFAdapter, UnsupportedModelError, prepare_hf_model
    from align.extraction.engine import LOGPROBS, score_pairs
    from tests.hf_tiny import tiny_marian

    model, tok = tiny_marian(str(tmp_path), d_model=16, heads=2, ffn=32, seed=1)
    prepare_hf_model(model)
    adapter = HFAdapter(model)
    src = [tok(s.split()[:3], is_split_into_words=True)["input_ids"] for s, _ in PAIRS]
    lab = [tok(text_target=t.split()[:4], is_split_into_words=True)["input_ids"] for _, t in PAIRS]
    out = score_pairs(model, adapter, src, lab, tok.pad_token_id, ["attn"], [0], logprobs=True)
    for s, t, d in zip(src, lab, out):
        loss = model(input_ids=torch.tensor([s]), labels=torch.tensor([t])).loss.item()  # mean CE over labels
        assert d[LOGPROBS].shape == (len(t),)
        assert -d[LOGPROBS].mean() == pytest.approx(loss, abs=1e-5)
    with pytest.raises(UnsupportedModelError, match="no language-model head"):
        score_pairs(model.model, HFAdapter(model), src, lab, tok.pad_token_id, ["attn"], [0], logprobs=True)


@pytest.mark.parametrize(
    "layout, words, keep",
    [
        # labels "x y </s>" (fairseq, Marian): words of the labels but the last -> every label
        ("fairseq", [0, 1], [1, 1, 1]),
        # "lang x y </s>" (NLLB, M2M100, mBART-50): the code before the words is no evidence about the pair
        ("nllb", [-1, 0, 1], [0, 1, 1, 1]),
        # "x y </s> lang" (mBART-cc25): the end is </s>, the code after it is left out
        ("mbart-cc25", [0, 1, -1], [1, 1, 1, 0]),
        # a word of two pieces: both kept
        ("pieces", [-1, 0, 0, 1], [0, 1, 1, 1, 1]),
        # no word at all, or a layout the adapters do not make: every label
        ("empty", [-1], [1, 1]),
        ("other", [0], [1, 1, 1]),
    ],
)
def test_sentence_labels_leave_language_codes_out(layout, words, keep):
    from align.extraction.aligner import sentence_labels

    got = sentence_labels(np.array(words), len(keep))
    assert got.astype(int).tolist() == keep, layout
