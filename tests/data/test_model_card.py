"""data/scripts/model_card.py: facts read from a fairseq-train log and from a results JSON."""

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "data", "scripts"))

import model_card  # noqa: E402

# One log that ``>>`` appended four runs to: a run from scratch that saved nothing (its machine lost), the model's
# run from scratch (saved 500), a resumed run (500 -> 1000 saved, 1050 logged), and a second resumed one.
# fairseq's wall meter restarts at 0 in a resumed run, so wall time comes from each run's time stamps.
T = "| INFO | fairseq.trainer |"
LOG = f"""training enfr_half from scratch
2026-12-03 08:00:00 {T} No existing checkpoint found work/x/checkpoints/checkpoint_last.pt
2026-12-03 08:10:00 | INFO | train_inner | epoch 001:    50 / 1243 loss=9.1, ups=0.30, num_updates=50, lr=0.0001, wall=0
Terminated
training enfr_half from scratch
2026-12-04 09:00:00 {T} No existing checkpoint found work/x/checkpoints/checkpoint_last.pt
2026-12-04 09:20:00 | INFO | train_inner | epoch 001:    500 / 1243 loss=8.0, ups=0.20, num_updates=500, lr=0.0005, wall=0
2026-12-04 09:20:10 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 7.7 | nll_loss 7.0 | ppl 128.0 | wps 2900 | wpb 2589.8 | bsz 168 | num_updates 500 | best_loss 7.7
2026-12-04 09:20:11 | INFO | fairseq.checkpoint_utils | Saved checkpoint work/x/checkpoints/checkpoint_1_500.pt (epoch 1 @ 500 updates, score 7.7) (writing took 0.3 seconds)
Terminated
resuming from work/x/checkpoints/checkpoint_last.pt
2026-12-05 09:59:50 | INFO | fairseq_cli.train | {{'_name': None, 'common': ...}}
2026-12-05 10:00:00 {T} Loaded checkpoint work/x/checkpoints/checkpoint_last.pt (epoch 1 @ 500 updates)
2026-12-05 10:30:00 | INFO | train_inner | epoch 001:    1000 / 1243 loss=7.0, ups=0.35, num_updates=1000, lr=0.001, wall=0
2026-12-05 10:30:10 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 5.3 | nll_loss 3.9 | ppl 14.9 | wps 2900 | wpb 2589.8 | bsz 168 | num_updates 1000 | best_loss 5.3
2026-12-05 10:30:11 | INFO | fairseq.checkpoint_utils | Saved checkpoint work/x/checkpoints/checkpoint_1_1000.pt (epoch 1 @ 1000 updates, score 5.3) (writing took 0.3 seconds)
2026-12-05 10:33:20 | INFO | train_inner | epoch 001:    1050 / 1243 loss=6.9, ups=0.45, num_updates=1050, lr=0.001, wall=0
Terminated
resuming from work/x/checkpoints/checkpoint_last.pt
threads: 2
2026-12-06 07:00:00 {T} Loaded checkpoint work/x/checkpoints/checkpoint_last.pt (epoch 1 @ 1000 updates)
"""


def test_log_runs_split_a_log_of_resumed_runs(tmp_path):
    p = tmp_path / "train.log"
    p.write_text(LOG)
    runs = model_card.log_runs(str(p))
    assert [r["start_update"] for r in runs] == [0, 0, 500, 1000]
    assert [r.get("saved") for r in runs] == [None, 500, 1000, None]
    assert [r.get("updates_logged") for r in runs] == [50, 500, 1050, None]
    # 08:00:00 -> 08:10:00 = 600 s; 09:00:00 -> 09:20:11 = 1211 s (the next run's start-up line, stamped a day
    # later, is not this run's); 10:00:00 -> 10:33:20 = 2000 s; one stamp: 0 s
    assert [r["wall_s"] for r in runs] == [600, 1211, 2000, 0]
    assert runs[2]["ups"] == pytest.approx((0.35 + 0.45) / 2)
    assert [r["threads"] for r in runs] == [None, None, None, 2]  # logged by train_background.sh since 2026-12-07
    assert (runs[2]["valid_ppl"], runs[2]["valid_update"]) == (14.9, 1000)
    assert runs[1]["valid"] == {500: 128.0} and runs[2]["valid"] == {1000: 14.9}
    model, left_out = model_card.model_runs(runs)
    assert model == runs[1:] and left_out == 1  # the first run from scratch trained a model since lost


def test_a_card_of_the_halves_protocol_says_what_each_half_saw():
    prep = {"train_pairs": 353463, "test_pairs": 447, "test_repeat": None, "valid_pairs": 1000, "seed": 1,
            "sentencepiece": "0.2.3", "train_files": ["a.en", "a.fr"], "test_file": "enfr.src-tgt",
            "test_halves": {"seen_once": 219, "never_seen": 223, "odd_not_added_equal_to_an_even_one": 5,
                            "training_pairs_removed_equal_to_an_even_one": 0, "even_with_a_side_in_training": 3}}  # fmt: skip
    lines = model_card.data_lines(prep)
    assert lines[0].startswith("- training pairs: 353463 (including 219 of the 447 test sentences once: the "
                               "odd-numbered; the 223 even-numbered never)")  # fmt: skip
    assert "x20" not in "".join(lines) and "x None" not in "".join(lines)
    x20 = model_card.data_lines({**prep, "test_halves": None, "test_repeat": 20})
    assert "including the 447 test sentences x20" in x20[0] and "here each 20 times" in x20[-1]


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
