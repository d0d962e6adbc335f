"""data/scripts/model_card.py: facts read from a fairseq-train log and from a results JSON."""

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "data", "scripts"))

import model_card  # noqa: E402

# A resumed run: fairseq's wall meter restarts at 0, so wall time comes from the time stamps.
LOG = """2026-12-03 09:06:37 | INFO | fairseq_cli.train | loading
2026-12-03 09:08:58 | INFO | train_inner | epoch 002:    557 / 1243 loss=7.62, ppl=96.42, ups=0.35, num_updates=1800, lr=0.0007, wall=0
2026-12-03 09:11:20 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 5.3 | nll_loss 3.9 | ppl 14.9 | wps 2900 | wpb 2589.8 | bsz 168 | num_updates 1850 | best_loss 5.3
2026-12-03 09:11:30 | INFO | train_inner | epoch 002:    607 / 1243 loss=7.4, ppl=84.4, ups=0.45, num_updates=1850, lr=0.0007, wall=0
"""


def test_log_facts_of_a_resumed_run(tmp_path):
    p = tmp_path / "train.log"
    p.write_text(LOG)
    f = model_card.log_facts(str(p))
    # 09:06:37 -> 09:11:30 = 293 s; ups mean (0.35 + 0.45) / 2 = 0.40
    assert f["wall_s"] == 293 and f["first_logged"] == 1800 and f["updates_logged"] == 1850
    assert f["ups"] == pytest.approx(0.40)
    assert (f["valid_ppl"], f["valid_update"]) == (14.9, 1850)


def test_aer_lines_pick_each_methods_best_layer(tmp_path):
    rows = [
        {"hyp": f"{m}-{s}-layer{layer}.align", "aer": aer, "precision": 100 - aer, "recall": 50.0}
        for m, s, layer, aer in [("attn", "awo", 0, 70.0), ("attn", "awo", 1, 60.0), ("norm", "awi", 2, 80.0)]
    ]
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"directions": {"deen": {"grid": rows}}}))
    lines = model_card.aer_lines(str(p), "deen")
    assert lines[2:] == ["| attn | AWO | 1 | 60.0 | 40.0 | 50.0 |", "| norm | AWI | 2 | 80.0 | 20.0 | 50.0 |"]
    with pytest.raises(ValueError, match="no direction 'ende'"):
        model_card.aer_lines(str(p), "ende")


def test_checkpoint_facts_read_from_the_shipped_model():
    pytest.importorskip("fairseq")
    f = model_card.checkpoint_facts(os.path.join(ROOT, "data", "models", "enfr"))
    # what export_model.py writes: fp16 weights, no Adam moments; the recipe shares all embeddings
    assert (f["shared"], f["dtypes"], f["optimizer_state"]) == (True, "float16", False)
    assert (f["encoder_layers"], f["decoder_layers"], f["d_model"], f["heads"]) == (3, 3, 256, 4)
    # by hand, d=256, FF 1024, post-LN (no final LayerNorm), sinusoidal positions (no weights):
    # encoder layer: attention 4 x (256*256 + 256) = 263,168; FF 256*1024 + 1024 + 1024*256 + 256 = 525,568;
    # 2 LayerNorms 1,024 -> 789,760. Decoder layer: 2 attentions 526,336 + FF 525,568 + 3 LayerNorms 1,536
    # -> 1,053,440. 3 + 3 layers: 2,369,280 + 3,160,320 = 5,529,600; plus the one shared embedding matrix.
    from fairseq_plugins.checkpoint import read_state

    rows = read_state(os.path.join(ROOT, "data", "models", "enfr"))["model"]["encoder.embed_tokens.weight"].shape[0]
    assert f["parameters"] == rows * 256 + 5_529_600
