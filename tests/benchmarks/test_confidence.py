"""benchmarks/confidence.py on the first 40 Hansards pairs: the figures of that run, pinned (a change of the
features, the fit, the folds or the corruptions moves them)."""

import importlib.util
import json
import os

import pytest

pytest.importorskip("fairseq")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_confidence_on_40_hansards_pairs(tmp_path):
    spec = importlib.util.spec_from_file_location("confidence", os.path.join(ROOT, "benchmarks", "confidence.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = str(tmp_path / "conf")
    assert mod.main(["--limit", "40", "--sets", "hansards", "--methods", "attn,norm", "--out", out]) == 0
    (res,) = json.load(open(out + ".json"))["results"]
    norm, attn = res["methods"]["norm"], res["methods"]["attn"]
    # recorded: python benchmarks/confidence.py --limit 40 --sets hansards
    assert norm["ece"] == pytest.approx(0.0148, abs=5e-4) and attn["ece"] == pytest.approx(0.0179, abs=5e-4)
    assert norm["aer_argmax"] == pytest.approx(17.1, abs=0.05) and norm["aer_p05"] == pytest.approx(17.8, abs=0.05)
    # the version 1 sentence score, its two classes weighing the same since the noise-kind score (0.873 before),
    # and in every length bin since 2026-12-07 (0.896 before)
    assert norm["auc"]["shuffled"] == pytest.approx(0.906, abs=5e-4)
    assert norm["auc_length_ratio"]["shuffled"] == pytest.approx(0.742, abs=5e-4)
    assert norm["layers"] == [0, 0] and res["sentences"] == 40
    assert open(out + "_reliability.png", "rb").read(4) == b"\x89PNG"


def test_fitted_on_the_odd_half_only_measures_the_even_half():
    # the test-halves protocol: fitted on the odd-numbered sentences (0-based 0, 2, ...), measured on the
    # even-numbered alone (the pairs the models never saw); the shipped models stand in
    spec = importlib.util.spec_from_file_location("confidence", os.path.join(ROOT, "benchmarks", "confidence.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.run_set("hansards", "enfr", ["norm"], 24, 32, fits=(0,))
    r = res["methods"]["norm"]
    assert res["measured"] == 12 and len(r["layers"]) == 1
    # every cell of the 12 measured sentences and no other
    from align.gold import testsets

    ts = testsets.load("hansards")
    assert r["cells"] == sum(len(ts.src[k]) * len(ts.tgt[k]) for k in range(1, 24, 2))
